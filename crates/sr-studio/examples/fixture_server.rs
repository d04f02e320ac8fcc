//! The API of `sr serve` (issue #30) played from a script, with the studio mounted as
//! `sr serve` mounts it: what the browser tests of `studio/e2e` drive until they run
//! against `sr serve` itself. Runs live in memory; `POST /v1/runs` of workload `ask`
//! starts a run that asks a human a question and finishes with the answer.
//!
//! `fixture_server [ADDR]` (default 127.0.0.1:4791). Test support: it unwraps.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio::sync::watch;

#[derive(Default)]
struct Fixture {
    runs: BTreeMap<String, FixtureRun>,
    next: u64,
}

struct FixtureRun {
    info: Value,
    events: Vec<Value>,
    /// Each event as its Server-Sent Event, written once (as a store would keep it).
    lines: Vec<String>,
    changed: watch::Sender<usize>,
}

type Shared = Arc<Mutex<Fixture>>;

fn lock(state: &Shared) -> std::sync::MutexGuard<'_, Fixture> {
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (status, Json(json!({"error": {"code": code, "message": message}}))).into_response()
}

impl Fixture {
    fn add(&mut self, id: &str, info: Value) {
        let (changed, _) = watch::channel(0);
        let mut info = info;
        info["id"] = json!(id);
        self.runs.insert(id.to_string(), FixtureRun { info, events: Vec::new(), lines: Vec::new(), changed });
    }

    fn emit(&mut self, id: &str, path: &[&str], payload: Value) {
        let run = self.runs.get_mut(id).unwrap();
        let mut event = json!({"seq": run.events.len() + 1, "invocation_id": "inv-1", "path": path});
        event.as_object_mut().unwrap().extend(payload.as_object().unwrap().clone());
        run.lines.push(format!("id: {}\ndata: {event}\n\n", run.events.len() + 1));
        run.events.push(event);
        run.changed.send_replace(run.events.len());
    }

    fn set(&mut self, id: &str, field: &str, value: Value) {
        let run = self.runs.get_mut(id).unwrap();
        run.info[field] = value;
        run.changed.send_modify(|_| {});
    }
}

/// A finished run of `count` events of every kind the timeline draws, nested two deep.
fn seed_big(fixture: &mut Fixture, id: &str, count: usize) {
    fixture.add(id, json!({"session": "s-big", "status": "done", "workload": "review", "entry": "main",
        "started": "2026-11-26T09:00:00Z", "duration_ms": 183_000, "tokens": {"input": 120_000, "output": 40_000}, "cost_usd": 0.84}));
    let flow = ["flow:main"];
    let agent = ["flow:main", "agent:reviewer"];
    fixture.emit(
        id,
        &[],
        json!({"type": "run_started", "workload": "review", "entry": "main", "input": "review the diff"}),
    );
    fixture.emit(id, &flow, json!({"type": "flow_started", "flow": "main"}));
    let mut i = 2;
    while i < count - 2 {
        let payload = match i % 6 {
            0 => {
                json!({"type": "agent_started", "agent": "reviewer", "model": "scripted", "input": format!("file {i}")})
            }
            1 => json!({"type": "text_delta", "text": format!("Looking at file {i}. ")}),
            2 => {
                json!({"type": "tool_call", "call_id": format!("c{i}"), "tool": "read_file", "args": {"path": format!("src/f{i}.rs")}})
            }
            3 => {
                json!({"type": "tool_result", "call_id": format!("c{i}"), "tool": "read_file", "result": "fn main() {}", "is_error": false})
            }
            4 => json!({"type": "state_change", "variable": "reviewed", "value": i}),
            _ => {
                json!({"type": "model_response", "model": "scripted", "text": format!("finding {i}"), "tool_calls": [], "finish_reason": "stop",
                        "usage": {"input_tokens": 20, "output_tokens": 7}})
            }
        };
        fixture.emit(id, if i % 6 == 4 { &flow } else { &agent }, payload);
        i += 1;
    }
    fixture.emit(id, &flow, json!({"type": "flow_finished", "flow": "main", "result": "reviewed"}));
    fixture.emit(
        id,
        &[],
        json!({"type": "run_finished", "status": "completed", "result": "reviewed", "error": null,
        "usage": {"input_tokens": 120_000, "output_tokens": 40_000, "cost_usd": 0.84}}),
    );
}

/// Runs that try the page: a step in doubt, a stream that drops every three events, and
/// hostile events (markup, a megabyte of text, a line that is not JSON).
fn seed_trials(fixture: &mut Fixture) {
    let flow = ["flow:main"];
    fixture.add("r-doubt", json!({"session": "s-2", "status": "in_doubt", "workload": "ask", "entry": "main", "started": "2026-11-26T07:00:00Z"}));
    fixture.emit("r-doubt", &[], json!({"type": "run_started", "workload": "ask", "entry": "main", "input": "pay"}));
    fixture.emit("r-doubt", &flow, json!({"type": "tool_call", "call_id": "c1", "tool": "pay", "args": {"amount": 5}}));
    fixture.add("r-flaky", json!({"session": "s-3", "status": "done", "workload": "ask", "entry": "main", "started": "2026-11-26T06:00:00Z"}));
    for i in 0..11 {
        fixture.emit("r-flaky", &flow, json!({"type": "log", "message": format!("step {i}")}));
    }
    fixture.emit("r-flaky", &[], json!({"type": "run_finished", "status": "completed", "result": "ok", "error": null, "usage": {"input_tokens": 0, "output_tokens": 0}}));
    fixture.add("r-hostile", json!({"session": "s-4", "status": "done", "workload": "ask", "entry": "main", "started": "2026-11-26T05:00:00Z"}));
    fixture.emit(
        "r-hostile",
        &flow,
        json!({"type": "log", "message": "<img src=x onerror=alert(1)><script>alert(2)</script>"}),
    );
    let run = fixture.runs.get_mut("r-hostile").unwrap();
    run.lines.push("id: 2\ndata: {not json\n\n".to_string());
    run.events.push(json!({"seq": 2, "type": "unparsable"}));
    fixture.emit("r-hostile", &["flow:main", "agent:a"], json!({"type": "text_delta", "text": "y".repeat(1 << 20)}));
    fixture.emit("r-hostile", &flow, json!({"type": "some_future_kind", "field": {"deep": [1, 2, 3]}}));
    fixture.emit("r-hostile", &[], json!({"type": "run_finished", "status": "completed", "result": "ok", "error": null, "usage": {"input_tokens": 0, "output_tokens": 0}}));
}

fn seed(fixture: &mut Fixture) {
    seed_big(fixture, "r-big", 10_000);
    seed_trials(fixture);
    fixture.add("r-done", json!({"session": "s-1", "status": "done", "workload": "ask", "entry": "main",
        "started": "2026-11-26T08:00:00Z", "duration_ms": 2_400, "tokens": {"input": 30, "output": 12}, "cost_usd": null, "result": "ok"}));
    let flow = ["flow:main"];
    fixture.emit("r-done", &[], json!({"type": "run_started", "workload": "ask", "entry": "main", "input": "hello"}));
    fixture.emit("r-done", &flow, json!({"type": "flow_started", "flow": "main"}));
    fixture.emit("r-done", &flow, json!({"type": "state_change", "variable": "greeting", "value": "hello"}));
    fixture.emit("r-done", &flow, json!({"type": "flow_finished", "flow": "main", "result": "ok"}));
    fixture.emit(
        "r-done",
        &[],
        json!({"type": "run_finished", "status": "completed", "result": "ok", "error": null,
        "usage": {"input_tokens": 30, "output_tokens": 12}}),
    );
}

async fn workloads() -> Json<Value> {
    Json(json!([{
        "name": "ask",
        "entry": "flow main",
        "entries": [{"name": "main", "kind": "flow", "input": "prompt"}, {"name": "helper", "kind": "agent", "input": "prompt"}],
        "graph": {"edges": [
            {"from": "flow main", "to": "agent helper", "kind": "run_agent"},
            {"from": "agent helper", "to": "agent expert", "kind": "delegate"},
            {"from": "flow main", "to": "flow notify", "kind": "run_flow"}
        ]},
        "diagnostics": [{"code": "SR204", "severity": "warning", "message": "variable `$unused` is never read",
                         "file": "ask.sr", "line": 12, "column": 5, "end_line": 12, "end_column": 12}]
    }]))
}

async fn runs(State(state): State<Shared>) -> Json<Value> {
    let fixture = lock(&state);
    Json(json!({"runs": fixture.runs.values().rev().map(|r| r.info.clone()).collect::<Vec<_>>()}))
}

async fn run(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    match lock(&state).runs.get(&id) {
        Some(run) => Json(run.info.clone()).into_response(),
        None => error(StatusCode::NOT_FOUND, "not_found", &format!("no run '{id}'")),
    }
}

async fn session(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    let fixture = lock(&state);
    let runs: Vec<&FixtureRun> = fixture.runs.values().filter(|r| r.info["session"] == json!(id)).collect();
    if runs.is_empty() {
        return error(StatusCode::NOT_FOUND, "not_found", &format!("no session '{id}'"));
    }
    let mut transcript = Vec::new();
    for run in &runs {
        let started = run.events.iter().find(|e| e["type"] == "run_started");
        let said = started.map_or(json!(""), |e| e["input"].clone());
        let answered = run.info.get("result").cloned().unwrap_or(json!(""));
        transcript.push(json!({"role": "user", "content": [{"type": "text", "text": said}]}));
        transcript.push(json!({"role": "assistant", "content": [{"type": "text", "text": answered},
            {"type": "tool_call", "id": "c1", "name": "read_file", "arguments": {"path": "notes.md"}}]}));
    }
    Json(json!({"id": id, "transcript": transcript, "runs": runs.iter().map(|r| r.info.clone()).collect::<Vec<_>>()}))
        .into_response()
}

async fn start(State(state): State<Shared>, Json(body): Json<Value>) -> Response {
    let Some(workload) = body["workload"].as_str() else {
        return error(StatusCode::BAD_REQUEST, "bad_request", "`workload` is required");
    };
    if workload != "ask" {
        return error(StatusCode::NOT_FOUND, "unknown_workload", &format!("no workload '{workload}'"));
    }
    let prompt = body["prompt"].as_str().unwrap_or("").to_string();
    let id = {
        let mut fixture = lock(&state);
        fixture.next += 1;
        let id = format!("r-{}", fixture.next);
        let session = body["session"].as_str().map_or_else(|| format!("s-{id}"), str::to_string);
        fixture.add(&id, json!({"session": session, "status": "running", "workload": "ask", "entry": body["entry"].as_str().unwrap_or("main"),
            "started": "2026-11-26T10:00:00Z", "tokens": {"input": 0, "output": 0}}));
        id
    };
    let script = [
        (vec![], json!({"type": "run_started", "workload": "ask", "entry": "main", "input": prompt})),
        (vec!["flow:main"], json!({"type": "flow_started", "flow": "main"})),
        (
            vec!["flow:main", "agent:helper"],
            json!({"type": "agent_started", "agent": "helper", "model": "scripted", "input": prompt}),
        ),
        (vec!["flow:main", "agent:helper"], json!({"type": "text_delta", "text": "I need "})),
        (vec!["flow:main", "agent:helper"], json!({"type": "text_delta", "text": "to ask."})),
        (
            vec!["flow:main", "agent:helper"],
            json!({"type": "model_response", "model": "scripted", "text": "I need to ask.", "tool_calls": [],
            "finish_reason": "stop", "usage": {"input_tokens": 11, "output_tokens": 4}}),
        ),
        (vec!["flow:main"], json!({"type": "human_input_requested", "message": "Which branch should I deploy?"})),
    ];
    let task_state = state.clone();
    let task_id = id.clone();
    tokio::spawn(async move {
        for (path, payload) in script {
            tokio::time::sleep(Duration::from_millis(50)).await;
            lock(&task_state).emit(&task_id, &path, payload);
        }
        let mut fixture = lock(&task_state);
        fixture.set(&task_id, "status", json!("paused"));
        fixture.set(&task_id, "question", json!("Which branch should I deploy?"));
    });
    (StatusCode::CREATED, Json(json!({"id": id, "status": "running"}))).into_response()
}

async fn input(State(state): State<Shared>, Path(id): Path<String>, Json(body): Json<Value>) -> Response {
    let Some(text) = body["text"].as_str() else {
        return error(StatusCode::BAD_REQUEST, "bad_request", "`text` is required");
    };
    let mut fixture = lock(&state);
    let Some(run) = fixture.runs.get(&id) else {
        return error(StatusCode::NOT_FOUND, "not_found", &format!("no run '{id}'"));
    };
    if run.info["status"] == "in_doubt" {
        let status = match text {
            "retry" | "skip" => "done",
            "fail" => "failed",
            _ => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    "an in-doubt step is decided with `retry`, `skip` or `fail`",
                );
            }
        };
        fixture.emit(&id, &["flow:main"], json!({"type": "log", "message": format!("decided: {text}")}));
        fixture.emit(
            &id,
            &[],
            json!({"type": "run_finished", "status": if status == "done" { "completed" } else { "failed" },
            "result": null, "error": null, "usage": {"input_tokens": 0, "output_tokens": 0}}),
        );
        fixture.set(&id, "status", json!(status));
        return Json(json!({"id": id, "status": status})).into_response();
    }
    if run.info["status"] != "paused" {
        return error(
            StatusCode::CONFLICT,
            "not_paused",
            &format!("run '{id}' is {} and asks nothing", run.info["status"]),
        );
    }
    let flow = ["flow:main"];
    fixture.set(&id, "status", json!("running"));
    fixture.emit(&id, &flow, json!({"type": "state_change", "variable": "branch", "value": text}));
    fixture.emit(&id, &flow, json!({"type": "flow_finished", "flow": "main", "result": format!("deployed {text}")}));
    fixture.emit(
        &id,
        &[],
        json!({"type": "run_finished", "status": "completed", "result": format!("deployed {text}"), "error": null,
        "usage": {"input_tokens": 11, "output_tokens": 4}}),
    );
    fixture.set(&id, "result", json!(format!("deployed {text}")));
    fixture.set(&id, "status", json!("done"));
    Json(json!({"id": id, "status": "running"})).into_response()
}

async fn cancel(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    let mut fixture = lock(&state);
    let Some(run) = fixture.runs.get(&id) else {
        return error(StatusCode::NOT_FOUND, "not_found", &format!("no run '{id}'"));
    };
    if ["done", "failed", "cancelled"].contains(&run.info["status"].as_str().unwrap_or("")) {
        return error(StatusCode::CONFLICT, "finished", &format!("run '{id}' has ended"));
    }
    fixture.emit(&id, &[], json!({"type": "run_finished", "status": "cancelled", "result": null, "error": "cancelled", "usage": {"input_tokens": 0, "output_tokens": 0}}));
    fixture.set(&id, "status", json!("cancelled"));
    Json(json!({"id": id, "status": "cancelled"})).into_response()
}

/// Test control: appends a log event to a run, as a running flow would.
async fn emit(State(state): State<Shared>, Path(id): Path<String>, Json(body): Json<Value>) -> Response {
    let mut fixture = lock(&state);
    if !fixture.runs.contains_key(&id) {
        return error(StatusCode::NOT_FOUND, "not_found", &format!("no run '{id}'"));
    }
    fixture.emit(&id, &["flow:main"], json!({"type": "log", "message": body["message"]}));
    StatusCode::NO_CONTENT.into_response()
}

/// Server-Sent Events: every event after `Last-Event-ID` (or `?after=N`), then new ones
/// as they come; the stream ends after `run_finished`.
async fn events(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let last = headers.get("last-event-id").and_then(|v| v.to_str().ok()).or(query.get("after").map(String::as_str));
    let after: usize = last.and_then(|v| v.parse().ok()).unwrap_or(0);
    let Some(changed) = lock(&state).runs.get(&id).map(|r| r.changed.subscribe()) else {
        return error(StatusCode::NOT_FOUND, "not_found", &format!("no run '{id}'"));
    };
    // `r-flaky`'s connection drops after every three events (the client resumes).
    let per_connection = if id == "r-flaky" { 3 } else { usize::MAX };
    let stream = futures::stream::unfold((after, false, changed), move |(sent, done, mut changed)| {
        let state = state.clone();
        let id = id.clone();
        async move {
            if done {
                return None;
            }
            loop {
                let (chunk, next, finished) = {
                    let fixture = lock(&state);
                    let run = &fixture.runs[&id];
                    let events = &run.events;
                    let from = sent.min(run.lines.len());
                    let to = run.lines.len().min(from.saturating_add(per_connection));
                    let chunk: String = run.lines[from..to].concat();
                    let finished = to < run.lines.len() || events.last().is_some_and(|e| e["type"] == "run_finished");
                    (chunk, to, finished)
                };
                if !chunk.is_empty() {
                    return Some((Ok::<_, std::convert::Infallible>(chunk), (next, finished, changed)));
                }
                if finished {
                    return None;
                }
                if changed.changed().await.is_err() {
                    return None;
                }
            }
        }
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .unwrap()
}

#[tokio::main]
async fn main() {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:4791".to_string());
    let mut fixture = Fixture::default();
    seed(&mut fixture);
    let state: Shared = Arc::new(Mutex::new(fixture));
    let api = Router::new()
        .route("/v1/workloads", get(workloads))
        .route("/v1/runs", get(runs).post(start))
        .route("/v1/runs/{id}", get(run))
        .route("/v1/runs/{id}/events", get(events))
        .route("/v1/runs/{id}/input", post(input))
        .route("/v1/runs/{id}/cancel", post(cancel))
        .route("/v1/sessions/{id}", get(session))
        .route("/fixture/runs/{id}/emit", post(emit))
        .with_state(state);
    let app = api.fallback_service(sr_studio::router());
    let listener = tokio::net::TcpListener::bind(&addr).await.unwrap();
    eprintln!("fixture server on http://{}", listener.local_addr().unwrap());
    axum::serve(listener, app).await.unwrap();
}
