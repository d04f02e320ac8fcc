//! Executors: where Python runs. The sandbox backend and session settings
//! that coding agents (`run::agent::code`) and `EXECUTOR.run(code, options?)`
//! in flows share. A flow's `run` is a tool step made by `Runtime::tool_call`
//! like every tool function in a flow: events, handlers, the debugger's hook
//! and the recording apply, so a replay or a resumed run serves the recorded
//! result and does not run the code again.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use serde_json::{Map, Value, json};
use sr_hir::tool_functions::EXECUTOR;
use sr_hir::{ExecutorData, SandboxBackend};
use sr_llm::ToolSpec;
#[cfg(feature = "container")]
use sr_sandbox::Container;
use sr_sandbox::{Backend, Bubblewrap, ImportPolicy, Limits, Outcome, Session, SessionConfig, Unsandboxed};

use futures::future::BoxFuture;

use crate::tools::{Tool, ToolError, string_arg};

/// The executor's backend; `unsandboxed` only when the run allows it.
pub(crate) async fn backend(executor: &ExecutorData, allow_unsandboxed: bool) -> Result<Arc<dyn Backend>, String> {
    Ok(match executor.backend {
        SandboxBackend::Bubblewrap => {
            if !Bubblewrap::available() {
                return Err("the bubblewrap sandbox needs `bwrap` and `prlimit` (apt-get install bubblewrap)".into());
            }
            Arc::new(Bubblewrap::default())
        }
        #[cfg(not(feature = "container"))]
        SandboxBackend::Container => {
            return Err("this `sr` was built without the container backend (cargo feature `container`); \
                 use `backend: bubblewrap`, or an `sr` built with it"
                .into());
        }
        #[cfg(feature = "container")]
        SandboxBackend::Container => {
            let image = executor.image.clone().ok_or("the `container` backend needs an `image`")?;
            let socket = executor
                .socket
                .clone()
                .or_else(|| std::env::var("DOCKER_HOST").ok())
                .unwrap_or_else(|| "unix:///var/run/docker.sock".to_string());
            let socket = socket.strip_prefix("unix://").unwrap_or(&socket).to_string();
            Arc::new(Container::connect(&socket, image).await.map_err(|e| e.to_string())?)
        }
        SandboxBackend::Unsandboxed if allow_unsandboxed => Arc::new(Unsandboxed::default()),
        SandboxBackend::Unsandboxed => {
            return Err("its executor says `backend: unsandboxed`, which runs the code as you, outside \
                 any sandbox, where it can do anything you can (the import policy is a lint, not a \
                 boundary), and needs `sr run --allow-unsandboxed`; nothing was run"
                .into());
        }
    })
}

pub(crate) fn session_config(executor: &ExecutorData) -> Result<SessionConfig, String> {
    let mut policy = ImportPolicy::default().with_open(executor.files);
    for module in &executor.allow {
        policy = policy.allow(module).map_err(|e| format!("cannot allow `{module}`: {e}"))?;
    }
    let defaults = Limits::default();
    let limits = Limits {
        memory_bytes: executor.memory_mb.map_or(defaults.memory_bytes, |mb| mb << 20),
        cpu_seconds: executor.cpu_seconds.unwrap_or(defaults.cpu_seconds),
        ..defaults
    };
    let mut config = SessionConfig { policy, limits, stateless: executor.stateless, ..SessionConfig::default() };
    if let Some(seconds) = executor.timeout {
        config.step_timeout = Duration::from_secs(seconds);
    }
    Ok(config)
}

/// What went wrong in a step, in one line; `None` for success.
pub(crate) fn describe(outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Success { result } => result.clone(),
        Outcome::FinalAnswer { .. } => None,
        Outcome::SyntaxError { message, line, .. } => {
            Some(line.map_or_else(|| message.clone(), |line| format!("line {line}: {message}")))
        }
        Outcome::PolicyViolation { message, .. } => Some(message.clone()),
        Outcome::RuntimeError { exception, message, .. } => Some(format!("{exception}: {message}")),
        Outcome::Timeout { limit, .. } => Some(format!("timed out after {}s", limit.as_secs_f64())),
        Outcome::ToolError { tool, message } => Some(format!("{tool}: {message}")),
        Outcome::Crashed { reason } => Some(reason.clone()),
    }
}

/// Longest `timeout` a flow may give one run.
const MAX_TIMEOUT_SECONDS: f64 = 3600.0;

/// `EXECUTOR.run(code, options?)`: one fresh sandbox per call, with no tools.
pub(crate) struct CodeRun {
    pub executor: ExecutorData,
    pub allow_unsandboxed: bool,
}

impl Tool for CodeRun {
    fn spec(&self) -> ToolSpec {
        let [code, options] = [&EXECUTOR[0].params[0], &EXECUTOR[0].params[1]];
        ToolSpec {
            name: EXECUTOR[0].name.to_string(),
            description: EXECUTOR[0].doc.to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": code.doc},
                    "options": {"type": "object", "description": options.doc},
                },
                "required": ["code"],
            }),
        }
    }

    fn call(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        async move { self.run(args, None).await }.boxed()
    }

    /// The code reads the call's key as `idempotency_key`, to pass on to
    /// whatever it changes outside its sandbox.
    fn call_keyed(&self, args: Value, key: &str) -> BoxFuture<'_, Result<Value, ToolError>> {
        let key = Value::String(key.to_string());
        async move { self.run(args, Some(key)).await }.boxed()
    }
}

impl CodeRun {
    async fn run(&self, args: Value, key: Option<Value>) -> Result<Value, ToolError> {
        let code = string_arg(&args, "code")?;
        let (input, timeout) = options(args.get("options"))?;
        let backend = backend(&self.executor, self.allow_unsandboxed).await.map_err(ToolError)?;
        let mut config = session_config(&self.executor).map_err(ToolError)?;
        if let Some(timeout) = timeout {
            config.step_timeout = timeout;
        }
        let mut session = Session::start(backend, Vec::new(), Arc::new(NoTools), config)
            .await
            .map_err(|e| ToolError(e.to_string()))?;
        let report = async {
            let key = key.unwrap_or(Value::Null);
            let prelude = format!("input = {}\nidempotency_key = {}", python_literal(&input), python_literal(&key));
            let given = session.run(&prelude, &mut |_| {}).await?;
            if given.outcome.is_error() {
                return Ok(Err(describe(&given.outcome).unwrap_or_default()));
            }
            session.run(&code, &mut |_| {}).await.map(Ok)
        }
        .await;
        session.close().await;
        let report = match report.map_err(|e| ToolError(e.to_string()))? {
            Ok(report) => report,
            Err(problem) => return Err(ToolError(format!("the input cannot be given to the code: {problem}"))),
        };
        let (outcome, result) = match &report.outcome {
            Outcome::FinalAnswer { value } => ("ok", value.clone()),
            Outcome::Success { result } => ("ok", result.clone().map_or(Value::Null, Value::String)),
            Outcome::Timeout { .. } => ("timeout", Value::Null),
            _ => ("error", Value::Null),
        };
        let error = match outcome {
            "ok" => None,
            _ => describe(&report.outcome),
        };
        Ok(json!({
            "outcome": outcome,
            "stdout": report.stdout,
            "stderr": report.stderr,
            "result": result,
            "error": error,
        }))
    }
}

/// `{input, timeout}`: the value the code reads as `input` (null when not
/// given) and the step's time limit.
fn options(options: Option<&Value>) -> Result<(Value, Option<Duration>), ToolError> {
    let fields = match options {
        None | Some(Value::Null) => return Ok((Value::Null, None)),
        Some(Value::Object(fields)) => fields,
        Some(other) => {
            return Err(ToolError(format!("options must be an object like {{input, timeout}}, got {other}")));
        }
    };
    if let Some(key) = fields.keys().find(|k| !["input", "timeout"].contains(&k.as_str())) {
        return Err(ToolError(format!("no option named '{key}' (the options are input, timeout)")));
    }
    let timeout = match fields.get("timeout") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(seconds) if seconds > 0.0 && seconds <= MAX_TIMEOUT_SECONDS => Some(Duration::from_secs_f64(seconds)),
            _ => return Err(ToolError(format!("timeout is seconds, more than 0 and at most 3600, got {n}"))),
        },
        Some(other) => return Err(ToolError(format!("timeout is a number of seconds, got {other}"))),
    };
    Ok((fields.get("input").cloned().unwrap_or(Value::Null), timeout))
}

/// A JSON value as a Python literal: JSON's string escapes are Python's too.
fn python_literal(value: &Value) -> String {
    match value {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(_) => value.to_string(),
        Value::Array(items) => format!("[{}]", items.iter().map(python_literal).collect::<Vec<_>>().join(", ")),
        Value::Object(fields) => format!("{{{}}}", entries(fields).join(", ")),
    }
}

fn entries(fields: &Map<String, Value>) -> Vec<String> {
    fields.iter().map(|(k, v)| format!("{}: {}", Value::String(k.clone()), python_literal(v))).collect()
}

/// The code of a flow's `run` is given no tools.
struct NoTools;

impl sr_sandbox::ToolHost for NoTools {
    fn call<'a>(&'a self, name: &'a str, _: Value) -> sr_sandbox::BoxFuture<'a, Result<Value, sr_sandbox::ToolError>> {
        async move { Err(sr_sandbox::ToolError(format!("no tool '{name}': code run from a flow has no tools"))) }
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_values_become_python_literals() {
        let value = json!({"a": [1, 2.5, null, true, false], "q\"uote": "line\nnext \u{e9} \\ \u{1}"});
        assert_eq!(
            python_literal(&value),
            r#"{"a": [1, 2.5, None, True, False], "q\"uote": "line\nnext é \\ \u0001"}"#
        );
    }

    #[test]
    fn options_are_checked() {
        let err = |v: Value| options(Some(&v)).unwrap_err().0;
        assert_eq!(options(None).unwrap(), (Value::Null, None));
        assert_eq!(
            options(Some(&json!({"input": [1], "timeout": 2}))).unwrap(),
            (json!([1]), Some(Duration::from_secs(2)))
        );
        assert_eq!(err(json!({"inputs": 1})), "no option named 'inputs' (the options are input, timeout)");
        assert_eq!(err(json!({"timeout": 0})), "timeout is seconds, more than 0 and at most 3600, got 0");
        assert_eq!(err(json!({"timeout": "5"})), "timeout is a number of seconds, got \"5\"");
        assert_eq!(err(json!(3)), "options must be an object like {input, timeout}, got 3");
    }
}
