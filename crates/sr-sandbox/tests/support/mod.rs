//! Shared helpers: a recording tool host, sessions, and the skip rule for missing
//! sandboxes (loud outside CI, a failure in CI).
#![allow(clippy::unwrap_used)]
// Each test binary uses part of this.
#![allow(dead_code, unused_macros)]

#[cfg(feature = "container")]
pub mod podman;
pub mod suite;

/// One `#[tokio::test]` per named scenario of `suite` on `$backend`, an
/// expression (it may `.await`) giving `Option<Arc<dyn Backend>>`: `None`
/// skips the scenario (see [`require`]).
macro_rules! scenarios {
    ($backend:expr; $($name:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $name() {
            if let Some(backend) = $backend {
                support::suite::$name(backend).await;
            }
        }
    )*};
}

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use sr_sandbox::{Backend, BoxFuture, Event, Session, SessionConfig, StepReport, ToolError, ToolHost, ToolSpec};

/// Tools `add(a, b)`, `lookup(key)` and `fail(reason)`, recording every call.
#[derive(Default)]
pub struct Recorder {
    pub calls: Mutex<Vec<(String, Value)>>,
}

impl Recorder {
    pub fn count(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

impl ToolHost for Recorder {
    fn call<'a>(&'a self, name: &'a str, args: Value) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            self.calls.lock().unwrap().push((name.to_string(), args.clone()));
            match name {
                "add" => Ok(json!(args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0))),
                "lookup" => match args["key"].as_str() {
                    Some("capital:norway") => Ok(json!({"city": "Oslo", "population": 709_037})),
                    Some("capital:japan") => Ok(json!({"city": "Tokyo", "population": 13_960_000})),
                    _ => Err(ToolError(format!("no entry for {}", args["key"]))),
                },
                "fail" => Err(ToolError(format!("failed on purpose: {}", args["reason"].as_str().unwrap_or("")))),
                "sleep" => {
                    let seconds = args["seconds"].as_f64().unwrap_or(0.0);
                    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
                    Ok(json!("slept"))
                }
                other => Err(ToolError(format!("unknown tool {other}"))),
            }
        })
    }
}

pub fn tools() -> Vec<ToolSpec> {
    let number = json!({"type": "number"});
    vec![
        ToolSpec {
            name: "add".into(),
            description: "Adds two numbers.".into(),
            parameters: json!({"type": "object", "properties": {"a": number, "b": number}, "required": ["a", "b"]}),
        },
        ToolSpec {
            name: "lookup".into(),
            description: "Looks up a fact by key, e.g. `capital:norway`.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"key": {"type": "string", "description": "The fact's key."}},
                "required": ["key"],
                "additionalProperties": false
            }),
        },
        ToolSpec {
            name: "fail".into(),
            description: "Always fails.".into(),
            parameters: json!({"type": "object", "properties": {"reason": {"type": "string", "default": "none"}}}),
        },
        ToolSpec {
            name: "sleep".into(),
            description: "Sleeps on the host.".into(),
            parameters: json!({"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]}),
        },
    ]
}

pub async fn session(backend: Arc<dyn Backend>, config: SessionConfig) -> (Session, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let session = Session::start(backend, tools(), recorder.clone(), config).await.expect("the sandbox starts");
    (session, recorder)
}

/// Runs one step, returning its report and events.
pub async fn step(session: &mut Session, code: &str) -> (StepReport, Vec<Event>) {
    let mut events = Vec::new();
    let report = session.run(code, &mut |event| events.push(event)).await.expect("the step runs");
    (report, events)
}

/// Whether a test that needs `what` can run: in CI it must; elsewhere it is skipped
/// with a loud message.
pub fn require(available: bool, what: &str) -> bool {
    if available {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("{what} is required in CI (see crates/sr-sandbox/README.md)");
    }
    eprintln!("\n!!! SKIPPED: {what} is not available on this machine; install it to run this test !!!\n");
    false
}
