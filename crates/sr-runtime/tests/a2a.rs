//! Remote A2A agents in runs, against a local fake remote (axum) that plays
//! every part a remote can: a good agent, one that asks for input, and the
//! hostile ones (a malformed card, a card without an interface or pointing
//! elsewhere, JSON-RPC errors, a reply that never ends, huge replies). Each
//! hostile one must be a tool error the model sees, never a failed run, a
//! panic or a hang; the bearer secret must reach the remote and nothing else;
//! a recorded run replays with the remote gone. A remote whose card says it
//! streams is called with `SendStreamingMessage`: its updates are events,
//! replayed too, and every hostile stream is a tool error as well. sr-cli's `tests/a2a_client.rs`
//! runs the same against the official Python SDK's server and `sr serve`.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::{Value, json};
use sr_hir::RootDatabase;
use sr_llm::Cassette;
use sr_runtime::a2a::A2aOptions;
use sr_runtime::event::{Emitter, Event, Payload, RunStatus};
use sr_runtime::hook::NoHook;
use sr_runtime::human::Unattended;
use sr_runtime::journal::{Journal, Meta, Mode, Recorded};
use sr_runtime::mcp::{McpHub, McpOptions};
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results};
use sr_runtime::tools::Jail;
use sr_runtime::{Env, RunOptions, Runtime};

const SECRET: &str = "a2a-secret-7f3e9c1d";

/// What the fake remote saw: each request's path and `Authorization`.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Request>>>);

/// A request's path and `Authorization` header.
type Request = (String, Option<String>);

impl Seen {
    fn note(&self, path: String, headers: &HeaderMap) {
        let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_string);
        self.0.lock().unwrap().push((path, auth));
    }
    fn paths(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().map(|(p, _)| p.clone()).collect()
    }
}

struct Remote {
    base: String,
    seen: Seen,
    task: tokio::task::JoinHandle<()>,
}

/// A fake remote: `/{mode}/card` and `/{mode}/rpc`, `mode` deciding how it behaves.
async fn remote() -> Remote {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Seen::default();
    let app = Router::new()
        .route("/{mode}/card", get(card))
        .route("/{mode}/rpc", post(rpc))
        .with_state((base.clone(), seen.clone()));
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    Remote { base, seen, task }
}

async fn card(
    Path(mode): Path<String>,
    State((base, seen)): State<(String, Seen)>,
    headers: HeaderMap,
) -> axum::response::Response {
    seen.note(format!("/{mode}/card"), &headers);
    let interface = |url: String| {
        json!({"name": mode, "capabilities": {"streaming": mode.starts_with("stream")},
               "supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]})
    };
    let body = match mode.as_str() {
        "malformed" => "{\"name\": \"half a card".to_string(),
        "no-interface" => {
            json!({"name": "x", "supportedInterfaces": [{"url": format!("{base}/x/rpc"), "protocolBinding": "GRPC"}]})
                .to_string()
        }
        "elsewhere" => interface("http://169.254.169.254/latest/meta-data".to_string()).to_string(),
        "legacy" => json!({"name": "old", "url": format!("{base}/legacy/rpc"), "protocolVersion": "0.3.0"}).to_string(),
        "stream-legacy" => {
            json!({"name": "old", "url": format!("{base}/stream-legacy/rpc"), "protocolVersion": "0.3.0",
                                  "capabilities": {"streaming": true}})
            .to_string()
        }
        "huge-card" => format!("{{\"name\": \"{}\"}}", "x".repeat(200_000)),
        _ => interface(format!("{base}/{mode}/rpc")).to_string(),
    };
    axum::response::Response::new(Body::from(body))
}

async fn rpc(
    Path(mode): Path<String>,
    State((_, seen)): State<(String, Seen)>,
    headers: HeaderMap,
    body: String,
) -> axum::response::Response {
    seen.note(format!("/{mode}/rpc"), &headers);
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let message = &request["params"]["message"];
    let text = message["parts"][0]["text"].as_str().unwrap_or_default().to_string();
    let task = |state: &str, extra: Value| {
        let mut task = json!({"id": "t-1", "contextId": "c-1", "status": {"state": state}});
        task.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        json!({"jsonrpc": "2.0", "id": request["id"], "result": {"task": task}})
    };
    if let Some(stream) = mode.strip_prefix("stream-") {
        return streamed(stream, &request);
    }
    let reply = match mode.as_str() {
        "good" => task(
            "TASK_STATE_COMPLETED",
            json!({"artifacts": [
                {"artifactId": "a", "parts": [{"text": format!("reviewed: {text}")}]},
                // A hostile echo of the key it was sent: redacted before anyone sees it.
                {"artifactId": "b", "parts": [{"data": {"auth": headers.get("authorization").and_then(|v| v.to_str().ok())}}]},
            ]}),
        ),
        "ask" if message.get("taskId").is_none() => task(
            "TASK_STATE_INPUT_REQUIRED",
            json!({"status": {"state": "TASK_STATE_INPUT_REQUIRED", "message": {"role": "ROLE_AGENT", "parts": [{"text": "Which branch?"}]}}}),
        ),
        "ask" => task(
            "TASK_STATE_COMPLETED",
            json!({"artifacts": [{"artifactId": "a", "parts": [{"text": format!("merged {text} ({})", message["taskId"])}]}]}),
        ),
        "legacy" => {
            json!({"jsonrpc": "2.0", "id": request["id"], "result": {"kind": "task", "id": "t", "status": {"state": "completed"},
                           "artifacts": [{"parts": [{"kind": "text", "text": format!("{} says hi", request["method"])}]}]}})
        }
        "failing" => task(
            "TASK_STATE_FAILED",
            json!({"status": {"state": "TASK_STATE_FAILED", "message": {"parts": [{"text": "out of coffee"}]}}}),
        ),
        "rpc-error" => {
            json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not found"}})
        }
        "not-json" => return axum::response::Response::new(Body::from("<html>502 Bad Gateway</html>")),
        "http-error" => {
            let mut response = axum::response::Response::new(Body::from("{}"));
            *response.status_mut() = axum::http::StatusCode::FORBIDDEN;
            return response;
        }
        // Headers, then a body that never ends.
        "never-ends" => {
            let stream =
                futures::stream::once(async { Ok::<_, std::io::Error>(axum::body::Bytes::from("{\"jsonrpc\": ")) })
                    .chain(futures::stream::pending());
            return axum::response::Response::new(Body::from_stream(stream));
        }
        // Declares its length: refused before it is read.
        "huge" => return axum::response::Response::new(Body::from(vec![b' '; 10 * 1024 * 1024])),
        // Streams without a length, forever: cut at the limit.
        "endless" => {
            let chunk = axum::body::Bytes::from(vec![b' '; 64 * 1024]);
            let stream = futures::stream::repeat_with(move || Ok::<_, std::io::Error>(chunk.clone()));
            return axum::response::Response::new(Body::from_stream(stream));
        }
        // Working forever: polled until the call's time is up.
        _ => task("TASK_STATE_WORKING", json!({})),
    };
    axum::response::Response::new(Body::from(reply.to_string()))
}

/// A streaming remote's answer to `request`, `mode` deciding how it behaves.
fn streamed(mode: &str, request: &Value) -> axum::response::Response {
    let message = &request["params"]["message"];
    let text = message["parts"][0]["text"].as_str().unwrap_or_default().to_string();
    let legacy = mode == "legacy";
    if request["method"] != if legacy { "message/stream" } else { "SendStreamingMessage" }
        && request["method"] != "GetTask"
    {
        let error = json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "stream it"}});
        return axum::response::Response::new(Body::from(error.to_string()));
    }
    let event =
        |result: Value| format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": request["id"], "result": result}));
    let status = |task: &str, state: &str, said: &str| {
        let message = json!({"role": "ROLE_AGENT", "parts": [{"text": said}]});
        event(
            json!({"statusUpdate": {"taskId": task, "contextId": "c-1", "status": {"state": state, "message": message}}}),
        )
    };
    let artifact = |parts: Value| {
        event(json!({"artifactUpdate": {"taskId": "t-1", "artifact": {"artifactId": "a", "parts": parts}}}))
    };
    let submitted =
        event(json!({"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_SUBMITTED"}}}));
    let sse = |chunks: Vec<String>| {
        let stream =
            futures::stream::iter(chunks.into_iter().map(|c| Ok::<_, std::io::Error>(axum::body::Bytes::from(c))));
        sse_response(Body::from_stream(stream))
    };
    match mode {
        "good" => sse(vec![
            submitted,
            status("t-1", "TASK_STATE_WORKING", "reading the change"),
            artifact(json!([{"text": format!("reviewed: {text}")}])),
            status("t-1", "TASK_STATE_COMPLETED", ""),
        ]),
        // The answer to the question is the second message, in the same task.
        "ask" if message.get("taskId").is_none() => {
            sse(vec![submitted, status("t-1", "TASK_STATE_INPUT_REQUIRED", "Which branch?")])
        }
        "ask" => sse(vec![
            status("t-1", "TASK_STATE_WORKING", &format!("merging {text}")),
            artifact(json!([{"text": format!("merged {text}")}])),
            status("t-1", "TASK_STATE_COMPLETED", ""),
        ]),
        // The stream ends while the task works: `GetTask` has the rest.
        "open" if request["method"] == "GetTask" => axum::response::Response::new(Body::from(
            json!({"jsonrpc": "2.0", "id": request["id"], "result": {"task": {"id": "t-1", "status": {"state": "TASK_STATE_COMPLETED"},
                   "artifacts": [{"artifactId": "a", "parts": [{"text": "polled"}]}]}}})
            .to_string(),
        )),
        "open" => sse(vec![submitted, status("t-1", "TASK_STATE_WORKING", "on it")]),
        // 0.3's shapes: tagged with `kind`, `final` on the last status update.
        "legacy" => sse(vec![
            event(json!({"kind": "task", "id": "t-3", "contextId": "c", "status": {"state": "submitted"}})),
            event(json!({"kind": "status-update", "taskId": "t-3", "final": false, "status": {"state": "working"}})),
            event(json!({"kind": "artifact-update", "taskId": "t-3",
                         "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": format!("old says {text}")}]}})),
            event(json!({"kind": "status-update", "taskId": "t-3", "final": true, "status": {"state": "completed"}})),
        ]),
        "empty" => sse(vec![]),
        "garbage" => sse(vec![submitted, "<html>502 Bad Gateway</html>\n\n".to_string()]),
        "not-json" => sse(vec![submitted, "data: {\"jsonrpc\": \"2.0\", \n\n".to_string()]),
        "other-task" => sse(vec![submitted, status("t-2", "TASK_STATE_COMPLETED", "not yours")]),
        "rpc-error" => sse(vec![
            submitted,
            format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "boom"}})),
        ]),
        // An error before the stream: plain JSON.
        "refused" => axum::response::Response::new(Body::from(
            json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32004, "message": "busy"}}).to_string(),
        )),
        // One event larger than the limit, never finished.
        "huge" => sse(vec![submitted, format!("data: {}", "x".repeat(100_000))]),
        // Keep-alives forever, as fast as they can be read: cut at the limit.
        "keep-alives" => {
            let stream = futures::stream::repeat_with(|| Ok::<_, std::io::Error>(axum::body::Bytes::from(": ping\n\n")));
            sse_response(Body::from_stream(stream))
        }
        // A keep-alive every 50 ms, forever: cut at the call's time.
        _ => {
            let ticks = futures::stream::unfold((), |()| async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Some((Ok::<_, std::io::Error>(axum::body::Bytes::from(": ping\n\n")), ()))
            });
            sse_response(Body::from_stream(futures::stream::once(async move { Ok(axum::body::Bytes::from(submitted)) }).chain(ticks)))
        }
    }
}

fn sse_response(body: Body) -> axum::response::Response {
    let mut response = axum::response::Response::new(body);
    response.headers_mut().insert("content-type", axum::http::HeaderValue::from_static("text/event-stream"));
    response
}

fn options() -> A2aOptions {
    A2aOptions { timeout: Duration::from_secs(3), max_reply_bytes: 64 * 1024 }
}

fn program(source: &str) -> Arc<sr_runtime::compile::Compiled> {
    let dir = common::work_dir("a2a-program");
    let path = dir.join("agent.sr");
    std::fs::write(&path, source).unwrap();
    sr_runtime::compile::compile_path(&mut RootDatabase::default(), &path).unwrap()
}

/// An agent that `use`s the remote agent `reviewer` at `card`.
fn source(card: &str) -> String {
    format!(
        "model main = openai/gpt-4o\n\
         tool reviewer = a2a \"{card}\" with auth bearer \"${{env:SR_A2A_TEST_KEY}}\"\n\
         prompt ask: \"\"\"Have the change reviewed.\"\"\"\n\
         agent:\n    instruction ask\n    use reviewer\n"
    )
}

/// Events without their times: these runs have the wall clock (the
/// journal's clock, which serves recorded times, is `launch`'s).
fn untimed(events: &[Event]) -> Vec<Event> {
    events.iter().cloned().map(|e| Event { at_ms: None, ..e }).collect()
}

struct Ran {
    events: Vec<Event>,
    status: RunStatus,
}

impl Ran {
    /// Each tool result: (result, is_error).
    fn results(&self) -> Vec<(Value, bool)> {
        self.events
            .iter()
            .filter_map(|e| match &e.payload {
                Payload::ToolResult { result, is_error, .. } => Some((result.clone(), *is_error)),
                _ => None,
            })
            .collect()
    }

    /// Each remote update: "task state: text".
    fn updates(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match &e.payload {
                Payload::RemoteUpdate { tool, task_id, state, text, .. } => {
                    assert_eq!(tool, "reviewer");
                    Some(format!("{task_id} {state}: {text}"))
                }
                _ => None,
            })
            .collect()
    }

    /// The types of the events, in order.
    fn kinds(&self) -> Vec<String> {
        self.events
            .iter()
            .map(|e| serde_json::to_value(&e.payload).unwrap()["type"].as_str().unwrap().to_string())
            .collect()
    }
}

/// Runs `source` whose model calls `reviewer` with each of `calls`, then ends.
async fn run(
    program: &Arc<sr_runtime::compile::Compiled>,
    calls: Vec<Value>,
    hub: Arc<McpHub>,
    journal: Journal,
) -> Ran {
    let program = program.clone();
    let mut replies: Vec<Reply> = calls.into_iter().map(|args| Reply::Calls(vec![("reviewer".into(), args)])).collect();
    replies.push(Reply::Text("done".into()));
    let first = replies.remove(0);
    let model = ScriptedProvider::new().on(after_tool_results(), replies).on(|_| true, vec![first]);
    let redactor = Arc::new(sr_llm::Redactor::new());
    hub.add_secrets(&redactor);
    let env = Env {
        provider: Arc::new(model),
        hook: Arc::new(NoHook),
        jail: Jail::new(common::work_dir("a2a-jail")).unwrap(),
        mcp: hub,
        journal: Arc::new(journal),
        human: Arc::new(Unattended),
        options: RunOptions::default(),
    };
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let emitter = Emitter::new("a2a-test", vec![Arc::new(move |e: &Event| sink.lock().unwrap().push(e.clone()))])
        .with_redactor(redactor);
    let outcome =
        tokio::time::timeout(Duration::from_secs(30), Runtime::new(program, env).run(emitter, "go".into(), Vec::new()))
            .await
            .expect("a remote agent hung the run");
    let events = events.lock().unwrap().clone();
    Ran { events, status: outcome.status }
}

fn live_hub(source: &str) -> Arc<McpHub> {
    let env = |name: &str| (name == "SR_A2A_TEST_KEY").then(|| SECRET.to_string());
    Arc::new(McpHub::with_a2a(&program(source).tools, &McpOptions::default(), &options(), &env))
}

async fn call_once(base: &str, mode: &str) -> (Value, bool) {
    let source = source(&format!("{base}/{mode}/card"));
    let ran =
        run(&program(&source), vec![json!({"request": "fix typo"})], live_hub(&source), Journal::unrecorded()).await;
    assert_eq!(ran.status, RunStatus::Completed, "{mode}: a remote's failure failed the run");
    let results = ran.results();
    assert_eq!(results.len(), 1, "{mode}: {results:?}");
    results[0].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remote_agents_answer_reaches_the_agent_and_its_key_nothing_else() {
    let remote = remote().await;
    let (result, is_error) = call_once(&remote.base, "good").await;
    assert!(!is_error, "{result}");
    assert_eq!(result, json!("reviewed: fix typo\n{\"auth\":\"Bearer [redacted]\"}"));
    // The card and the call each carried the key; the card was read once.
    let seen = remote.seen.0.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("/good/card".to_string(), Some(format!("Bearer {SECRET}"))),
            ("/good/rpc".to_string(), Some(format!("Bearer {SECRET}")))
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_0_3_card_is_called_with_0_3_method_names() {
    let remote = remote().await;
    assert_eq!(call_once(&remote.base, "legacy").await, (json!("\"message/send\" says hi"), false));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_from_the_remote_is_a_result_the_model_answers_in_the_same_task() {
    let remote = remote().await;
    let source = source(&format!("{}/ask/card", remote.base));
    let calls = vec![json!({"request": "merge it"}), json!({"request": "main", "task_id": "t-1", "context_id": "c-1"})];
    let ran = run(&program(&source), calls, live_hub(&source), Journal::unrecorded()).await;
    let results = ran.results();
    assert_eq!(results[0].0["input_required"], json!("Which branch?"));
    assert_eq!((&results[0].0["task_id"], results[0].1), (&json!("t-1"), false));
    assert_eq!(results[1], (json!("merged main (\"t-1\")"), false));
    assert_eq!(remote.seen.paths(), ["/ask/card", "/ask/rpc", "/ask/rpc"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_hostile_remote_is_a_tool_error_never_a_crash_or_a_hang() {
    let remote = remote().await;
    for (mode, expected) in [
        ("malformed", "the card is not JSON"),
        ("no-interface", "the card names no JSON-RPC interface of A2A 1.0 or 0.3"),
        ("elsewhere", "is not on the card's host"),
        ("huge-card", "the card is larger than 65536 bytes"),
        ("failing", "the remote task is failed: out of coffee"),
        ("rpc-error", "JSON-RPC error -32601: Method not found"),
        ("not-json", "the reply is not JSON"),
        ("http-error", "the reply: HTTP 403 Forbidden"),
        ("never-ends", "did not answer within 3s"),
        ("working-forever", "did not answer within 3s"),
        ("huge", "the reply is larger than 65536 bytes"),
        ("endless", "the reply is larger than 65536 bytes"),
    ] {
        let (result, is_error) = call_once(&remote.base, mode).await;
        let message = result.as_str().unwrap_or_default();
        assert!(is_error && message.contains(expected), "{mode}: {result}");
        assert!(message.starts_with("the remote agent 'reviewer'"), "{mode}: {message}");
        assert!(message.len() < 600, "{mode}: a long error: {message}");
    }
    // The elsewhere card's interface was never called.
    assert!(!remote.seen.paths().iter().any(|p| p.starts_with("/elsewhere/rpc")));
    // Nothing listens here any more: unreachable, also a tool error.
    let base = remote.base.clone();
    remote.task.abort();
    let _ = remote.task.await;
    let (result, is_error) = call_once(&base, "good").await;
    assert!(is_error && result.as_str().unwrap().contains("cannot reach the remote agent"), "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_key_variable_is_a_tool_error_and_nothing_is_sent() {
    let remote = remote().await;
    let source = source(&format!("{}/good/card", remote.base));
    let hub = Arc::new(McpHub::with_a2a(&program(&source).tools, &McpOptions::default(), &options(), &|_| None));
    let ran = run(&program(&source), vec![json!({"request": "x"})], hub, Journal::unrecorded()).await;
    let results = ran.results();
    assert!(
        results[0].1 && results[0].0.as_str().unwrap().contains("environment variable 'SR_A2A_TEST_KEY' is not set")
    );
    assert!(remote.seen.paths().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_call_replays_with_the_remote_gone_and_no_secret_in_the_recording() {
    let (live, text, replay) = record_then_replay("good", "a2a-record").await;
    assert!(!live.results()[0].1, "{:?}", live.results());
    assert!(!text.contains(SECRET) && text.contains("reviewed: fix typo"), "{text}");
    assert_eq!(untimed(&replay.events), untimed(&live.events));
    let events = serde_json::to_string(&live.events).unwrap();
    assert!(!events.contains(SECRET), "{events}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streaming_remotes_updates_are_events_during_the_call_and_its_answer_is_send_messages() {
    let remote = remote().await;
    let source = source(&format!("{}/stream-good/card", remote.base));
    let ran =
        run(&program(&source), vec![json!({"request": "fix typo"})], live_hub(&source), Journal::unrecorded()).await;
    assert_eq!(ran.results(), [(json!("reviewed: fix typo"), false)]);
    assert_eq!(
        ran.updates(),
        ["t-1 submitted: ", "t-1 working: reading the change", "t-1 working: reviewed: fix typo", "t-1 completed: "]
    );
    // Between the call and its result.
    let kinds = ran.kinds();
    let call = kinds.iter().position(|k| k == "tool_call").unwrap();
    assert_eq!(
        kinds[call + 1..call + 6],
        ["remote_update", "remote_update", "remote_update", "remote_update", "tool_result"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_question_is_answered_in_the_same_task_a_0_3_card_streams_and_an_open_stream_is_polled() {
    let remote = remote().await;
    let source = source(&format!("{}/stream-ask/card", remote.base));
    let calls = vec![json!({"request": "merge it"}), json!({"request": "main", "task_id": "t-1", "context_id": "c-1"})];
    let ran = run(&program(&source), calls, live_hub(&source), Journal::unrecorded()).await;
    let results = ran.results();
    assert_eq!((&results[0].0["input_required"], &results[0].0["task_id"]), (&json!("Which branch?"), &json!("t-1")));
    assert_eq!(results[1], (json!("merged main"), false));
    assert_eq!(
        ran.updates(),
        [
            "t-1 submitted: ",
            "t-1 input-required: Which branch?",
            "t-1 working: merging main",
            "t-1 working: merged main",
            "t-1 completed: "
        ]
    );

    // A 0.3 card that streams: `message/stream`, 0.3's shapes.
    let source = self::source(&format!("{}/stream-legacy/card", remote.base));
    let ran = run(&program(&source), vec![json!({"request": "hi"})], live_hub(&source), Journal::unrecorded()).await;
    assert_eq!(ran.results(), [(json!("old says hi"), false)]);
    assert_eq!(ran.updates(), ["t-3 submitted: ", "t-3 working: ", "t-3 working: old says hi", "t-3 completed: "]);

    // The stream ends while the task works: polled to its end.
    let (result, is_error) = call_once(&remote.base, "stream-open").await;
    assert_eq!((result, is_error), (json!("polled"), false));
    assert_eq!(remote.seen.paths().iter().filter(|p| *p == "/stream-open/rpc").count(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_hostile_stream_is_a_tool_error_never_a_crash_or_a_hang() {
    let remote = remote().await;
    for (mode, expected) in [
        ("stream-empty", "the stream ended before it named a task"),
        ("stream-garbage", "the stream has a line that is not Server-Sent Events: '<html>502 Bad Gateway</html>'"),
        ("stream-not-json", "a stream event is not JSON"),
        ("stream-other-task", "the stream sent an event of task 't-2', not of the call's task"),
        ("stream-rpc-error", "JSON-RPC error -32603: boom"),
        ("stream-refused", "JSON-RPC error -32004: busy"),
        ("stream-huge", "the stream is larger than 65536 bytes"),
        ("stream-keep-alives", "the stream is larger than 65536 bytes"),
        ("stream-slow", "did not answer within 3s"),
    ] {
        let (result, is_error) = call_once(&remote.base, mode).await;
        let message = result.as_str().unwrap_or_default();
        assert!(is_error && message.contains(expected), "{mode}: {result}");
        assert!(message.starts_with("the remote agent 'reviewer'"), "{mode}: {message}");
        assert!(message.len() < 600, "{mode}: a long error: {message}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_stream_replays_its_updates_with_the_remote_gone() {
    let (live, _, replay) = record_then_replay("stream-good", "a2a-record-stream").await;
    assert_eq!(live.updates().len(), 4);
    assert_eq!(untimed(&replay.events), untimed(&live.events));
    assert_eq!(replay.updates(), live.updates());
}

/// A live call to the fake remote's agent `card` recorded (secrets redacted),
/// then the remote stopped and the recording replayed: the live run, the
/// recording's text and the replay.
async fn record_then_replay(card: &str, dir: &str) -> (Ran, String, Ran) {
    let remote = remote().await;
    let source = source(&format!("{}/{card}/card", remote.base));
    let path = common::work_dir(dir).join("run.jsonl");
    let hub = live_hub(&source);
    let redactor = Arc::new(sr_llm::Redactor::new());
    hub.add_secrets(&redactor);
    let cassette = Arc::new(Cassette::create(&path).unwrap().redacting(redactor));
    let journal = Journal::recording(cassette, &Meta::new("agent.sr", "go"), None).unwrap();
    let compiled = program(&source);
    let live = run(&compiled, vec![json!({"request": "fix typo"})], hub, journal).await;

    remote.task.abort();
    let _ = remote.task.await;
    let text = std::fs::read_to_string(&path).unwrap();
    let journal = Journal::new(Mode::Replay, Recorded::parse(&text).unwrap(), None, None);
    let hub = Arc::new(McpHub::from_recording(&text).unwrap());
    let replay = run(&compiled, vec![json!({"request": "fix typo"})], hub, journal).await;
    (live, text, replay)
}
