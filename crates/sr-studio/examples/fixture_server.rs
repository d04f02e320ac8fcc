//! The API of `sr serve` (issue #30) played from a script, with the studio mounted as
//! `sr serve` mounts it: what the browser tests of `studio/e2e` drive until they run
//! against `sr serve` itself. Runs live in memory; `POST /v1/runs` of workload `ask`
//! starts a run that asks a human a question and finishes with the answer. Its answers
//! are API v1's wire types (sr-api), and every event it emits, but for the hostile ones
//! that try the page, is read back as an `Event` first.
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
use sr_api::{
    CancelAnswer, CancelStatus, EntryKind, EntryPoint, ErrorAnswer, ErrorDetail, Graph, GraphEdge, InputHelp,
    InputRequest, NewSession, ParallelBranch, Run, RunAccepted, RunList, RunRequest, RunStatus, RunSummary, Session,
    SessionCreated, SessionList, SessionSummary, Tokens, WorkloadList,
};
use tokio::sync::watch;

#[derive(Default)]
struct Fixture {
    runs: BTreeMap<String, FixtureRun>,
    /// Each session and when it was created.
    sessions: BTreeMap<String, String>,
    next: u64,
}

struct FixtureRun {
    summary: RunSummary,
    message: String,
    result: Option<Value>,
    /// As on a server started with `--otlp --trace-url`.
    trace_id: Option<String>,
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
    let detail = ErrorDetail { code: code.to_string(), message: message.to_string() };
    (status, Json(ErrorAnswer { error: detail })).into_response()
}

/// A run of `workload` (entry `main`) in `session`, as the runs list shows it.
fn summary(session: &str, workload: &str, status: RunStatus, started: &str) -> RunSummary {
    RunSummary {
        id: String::new(),
        session: session.to_string(),
        workload: workload.to_string(),
        entry: Some("main".to_string()),
        status,
        started: started.to_string(),
        error: None,
        duration_ms: None,
        tokens: None,
        cost_usd: None,
        forked_from: None,
    }
}

impl FixtureRun {
    fn run(&self) -> Run {
        let s = &self.summary;
        Run {
            id: s.id.clone(),
            session: s.session.clone(),
            workload: s.workload.clone(),
            entry: s.entry.clone(),
            status: s.status,
            message: Some(self.message.clone()),
            result: self.result.clone(),
            error: s.error.clone(),
            question: None,
            forked_from: s.forked_from.clone(),
            trace_url: self.trace_id.as_ref().map(|id| format!("{TRACE_VIEWER}/{id}")),
            trace_id: self.trace_id.clone(),
        }
    }
}

impl Fixture {
    fn add(&mut self, id: &str, mut summary: RunSummary) {
        let (changed, _) = watch::channel(0);
        summary.id = id.to_string();
        self.sessions.entry(summary.session.clone()).or_insert_with(|| summary.started.clone());
        let (result, message) = (None, String::new());
        let run =
            FixtureRun { summary, message, result, trace_id: None, events: Vec::new(), lines: Vec::new(), changed };
        self.runs.insert(id.to_string(), run);
    }

    /// Emits `payload` as the run's next event, which must be an `Event` of API v1.
    fn emit(&mut self, id: &str, path: &[&str], payload: Value) {
        let seq = self.runs[id].events.len() + 1;
        let mut event = json!({"seq": seq, "invocation_id": "inv-1", "path": path});
        event.as_object_mut().unwrap().extend(payload.as_object().unwrap().clone());
        if let Err(e) = serde_json::from_value::<sr_api::Event>(event.clone()) {
            panic!("the fixture's event {event} is not an API v1 event: {e}");
        }
        self.emit_raw(id, event);
    }

    /// Emits `event` as it is, valid or not (the hostile run's).
    fn emit_raw(&mut self, id: &str, event: Value) {
        let run = self.runs.get_mut(id).unwrap();
        run.lines.push(format!("id: {}\ndata: {event}\n\n", run.events.len() + 1));
        run.events.push(event);
        run.changed.send_replace(run.events.len());
    }

    fn update(&mut self, id: &str, change: impl FnOnce(&mut FixtureRun)) {
        let run = self.runs.get_mut(id).unwrap();
        change(run);
        run.changed.send_modify(|_| {});
    }
}

/// A finished run of `count` events of every kind the timeline draws, nested two deep.
fn seed_big(fixture: &mut Fixture, id: &str, count: usize) {
    let mut big = summary("s-big", "review", RunStatus::Done, "2026-11-26T09:00:00Z");
    big.duration_ms = Some(183_000);
    big.tokens = Some(Tokens { input: 120_000, output: 40_000 });
    big.cost_usd = Some(0.84);
    fixture.add(id, big);
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
    fixture.add("r-doubt", summary("s-2", "ask", RunStatus::InDoubt, "2026-11-26T07:00:00Z"));
    fixture.emit("r-doubt", &[], json!({"type": "run_started", "workload": "ask", "entry": "main", "input": "pay"}));
    fixture.emit("r-doubt", &flow, json!({"type": "tool_call", "call_id": "c1", "tool": "pay", "args": {"amount": 5}}));
    fixture.add("r-flaky", summary("s-3", "ask", RunStatus::Done, "2026-11-26T06:00:00Z"));
    for i in 0..11 {
        fixture.emit("r-flaky", &flow, json!({"type": "log", "message": format!("step {i}")}));
    }
    fixture.emit("r-flaky", &[], json!({"type": "run_finished", "status": "completed", "result": "ok", "error": null, "usage": {"input_tokens": 0, "output_tokens": 0}}));
    fixture.add("r-hostile", summary("s-4", "ask", RunStatus::Done, "2026-11-26T05:00:00Z"));
    fixture.emit(
        "r-hostile",
        &flow,
        json!({"type": "log", "message": "<img src=x onerror=alert(1)><script>alert(2)</script>"}),
    );
    let run = fixture.runs.get_mut("r-hostile").unwrap();
    run.lines.push("id: 2\ndata: {not json\n\n".to_string());
    run.events.push(json!({"seq": 2, "type": "unparsable"}));
    fixture.emit("r-hostile", &["flow:main", "agent:a"], json!({"type": "text_delta", "text": "y".repeat(1 << 20)}));
    fixture.emit_raw(
        "r-hostile",
        json!({"seq": 4, "invocation_id": "inv-1", "path": flow, "type": "some_future_kind", "field": {"deep": [1, 2, 3]}}),
    );
    fixture.emit("r-hostile", &[], json!({"type": "run_finished", "status": "completed", "result": "ok", "error": null, "usage": {"input_tokens": 0, "output_tokens": 0}}));
}

fn seed(fixture: &mut Fixture) {
    seed_big(fixture, "r-big", 10_000);
    seed_trials(fixture);
    let mut done = summary("s-1", "ask", RunStatus::Done, "2026-11-26T08:00:00Z");
    done.duration_ms = Some(2_400);
    done.tokens = Some(Tokens { input: 36, output: 14 });
    fixture.add("r-done", done);
    fixture.update("r-done", |run| {
        run.result = Some(json!("ok"));
        run.message = "hello".to_string();
        run.trace_id = Some("0af7651916cd43dd8448eb211c80319c".to_string());
    });
    // Timed as an agent's two model calls and a tool call between them, the
    // first call the slowest step (1.2 s), then the flow's `call llm plan`.
    let flow = ["flow:main"];
    let agent = ["flow:main", "agent:helper"];
    let usage = |input: u32, output: u32| json!({"input_tokens": input, "output_tokens": output});
    let events: [(&[&str], u64, Value); 17] = [
        (&[], 0, json!({"type": "run_started", "workload": "ask", "entry": "main", "input": "hello"})),
        (&flow, 5, json!({"type": "flow_started", "flow": "main"})),
        (&agent, 10, json!({"type": "agent_started", "agent": "helper", "model": "scripted", "input": "hello"})),
        (&agent, 20, json!({"type": "model_request", "model": "scripted", "messages": 1, "tools": ["read_file"]})),
        (
            &agent,
            1220,
            json!({"type": "model_response", "model": "scripted", "text": "", "tool_calls": ["read_file"],
                   "finish_reason": "tool_calls", "usage": usage(20, 8)}),
        ),
        (
            &agent,
            1230,
            json!({"type": "tool_call", "call_id": "c1", "tool": "read_file", "args": {"path": "notes.md"}}),
        ),
        (
            &agent,
            1480,
            json!({"type": "tool_result", "call_id": "c1", "tool": "read_file", "result": "hello", "is_error": false}),
        ),
        (&agent, 1490, json!({"type": "model_request", "model": "scripted", "messages": 3, "tools": ["read_file"]})),
        (
            &agent,
            2090,
            json!({"type": "model_response", "model": "scripted", "text": "ok", "tool_calls": [],
                   "finish_reason": "stop", "usage": usage(10, 4)}),
        ),
        (&agent, 2100, json!({"type": "agent_finished", "agent": "helper", "output": "ok", "usage": usage(30, 12)})),
        (&flow, 2110, json!({"type": "state_change", "variable": "greeting", "value": "hello"})),
        (
            &flow,
            2111,
            json!({"type": "llm_call", "prompt_name": "plan", "model": "scripted", "prompt_text": "Plan: hello"}),
        ),
        (&flow, 2112, json!({"type": "model_request", "model": "scripted", "messages": 1, "tools": []})),
        (
            &flow,
            2117,
            json!({"type": "model_response", "model": "scripted", "text": "ok", "tool_calls": [],
                   "finish_reason": "stop", "usage": usage(6, 2)}),
        ),
        (&flow, 2118, json!({"type": "llm_response", "prompt_name": "plan", "content": "ok", "is_final": true})),
        (&flow, 2120, json!({"type": "flow_finished", "flow": "main", "result": "ok"})),
        (
            &[],
            2400,
            json!({"type": "run_finished", "status": "completed", "result": "ok", "error": null, "usage": usage(36, 14)}),
        ),
    ];
    for (path, after, mut payload) in events {
        payload["at_ms"] = json!(R_DONE_STARTED_MS + after);
        fixture.emit("r-done", path, payload);
    }
}

/// Where the fixture's `--trace-url` shows traces (`{trace_id}` appended).
const TRACE_VIEWER: &str = "http://127.0.0.1:16686/trace";

/// When r-done started: 2026-11-26T08:00:00Z, as the runs list says.
const R_DONE_STARTED_MS: u64 = 1_795_680_000_000;

/// `ask`, whose default entry is not its first, and `review`, whose runs the fixture refuses.
async fn workloads() -> Json<WorkloadList> {
    let entry = |name: &str, kind| EntryPoint { name: name.to_string(), kind, input: "prompt".to_string() };
    let edge = |from: &str, to: &str, kind: &str| GraphEdge {
        from: from.into(),
        to: to.into(),
        kind: kind.into(),
        parallel: None,
        order: None,
    };
    // The flow's calls: branches 0 and 1 of its `parallel` block 3, then `call llm plan`.
    let branch = |from: &str, to: &str, kind: &str, branch: u32| GraphEdge {
        parallel: Some(ParallelBranch { block: 3, branch }),
        order: Some(branch),
        ..edge(from, to, kind)
    };
    let review = sr_api::Workload {
        name: "review".to_string(),
        entry: Some("agent reviewer".to_string()),
        entries: vec![entry("reviewer", EntryKind::Agent)],
        input: InputHelp { prompt: "text: the run's message".to_string(), input: "any JSON value".to_string() },
        graph: Graph::default(),
        diagnostics: Vec::new(),
    };
    Json(WorkloadList {
        workloads: vec![
            sr_api::Workload {
                name: "ask".to_string(),
                entry: Some("flow main".to_string()),
                entries: vec![entry("helper", EntryKind::Agent), entry("main", EntryKind::Flow)],
                input: InputHelp { prompt: "text: the run's message".to_string(), input: "any JSON value".to_string() },
                graph: Graph {
                    nodes: Vec::new(),
                    edges: vec![
                        branch("flow main", "agent helper", "run_agent", 0),
                        edge("agent helper", "agent expert", "delegate"),
                        branch("flow main", "flow notify", "run_flow", 1),
                        GraphEdge { order: Some(2), ..edge("flow main", "prompt plan", "call_llm") },
                    ],
                },
                diagnostics: vec![sr_api::Diagnostic {
                    code: "SR204".to_string(),
                    severity: "warning".to_string(),
                    message: "variable `$unused` is never read".to_string(),
                    file: "ask.sr".to_string(),
                    line: 12,
                    column: 5,
                    end_line: Some(12),
                    end_column: Some(12),
                }],
            },
            review,
        ],
    })
}

async fn runs(State(state): State<Shared>) -> Json<RunList> {
    let fixture = lock(&state);
    Json(RunList { runs: fixture.runs.values().rev().map(|r| r.summary.clone()).collect() })
}

async fn run(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    match lock(&state).runs.get(&id) {
        Some(run) => Json(run.run()).into_response(),
        None => error(StatusCode::NOT_FOUND, "not_found", &format!("no run '{id}'")),
    }
}

/// Every session, the one active last first (`?q=` searches ids and
/// workloads, `?limit=` per page, `?before=` a page's `next`: here the id of
/// the last session of the page before).
async fn sessions(State(state): State<Shared>, Query(query): Query<BTreeMap<String, String>>) -> Json<SessionList> {
    let fixture = lock(&state);
    let q = query.get("q").map_or(String::new(), |q| q.to_lowercase());
    let limit = query.get("limit").and_then(|l| l.parse().ok()).unwrap_or(50usize).max(1);
    let mut sessions: Vec<SessionSummary> = fixture
        .sessions
        .iter()
        .map(|(id, created)| {
            let mut runs: Vec<&RunSummary> =
                fixture.runs.values().map(|r| &r.summary).filter(|r| &r.session == id).collect();
            runs.sort_by(|a, b| b.started.cmp(&a.started));
            let mut workloads: Vec<String> = Vec::new();
            for run in &runs {
                if !workloads.contains(&run.workload) {
                    workloads.push(run.workload.clone());
                }
            }
            SessionSummary {
                id: id.clone(),
                created: created.clone(),
                runs: runs.len() as u32,
                last_run: runs.first().map(|r| r.id.clone()),
                last_started: runs.first().map(|r| r.started.clone()),
                last_status: runs.first().map(|r| r.status),
                workloads,
            }
        })
        .filter(|s| s.id.to_lowercase().contains(&q) || s.workloads.iter().any(|w| w.contains(&q)))
        .collect();
    let active = |s: &SessionSummary| s.last_started.clone().unwrap_or_default().max(s.created.clone());
    sessions.sort_by(|a, b| (active(b), &b.id).cmp(&(active(a), &a.id)));
    if let Some(before) = query.get("before") {
        let after = sessions.iter().position(|s| &s.id == before).map_or(0, |i| i + 1);
        sessions.drain(..after);
    }
    let next = (sessions.len() > limit).then(|| sessions[limit - 1].id.clone());
    sessions.truncate(limit);
    Json(SessionList { sessions, next })
}

async fn create_session(State(state): State<Shared>, Json(body): Json<NewSession>) -> Response {
    let mut fixture = lock(&state);
    fixture.next += 1;
    let id = body.id.unwrap_or_else(|| format!("s-new-{}", fixture.next));
    if fixture.sessions.contains_key(&id) {
        return error(StatusCode::CONFLICT, "session_exists", &format!("id: session {id} exists"));
    }
    let created = format!("2026-11-26T10:{:02}:00Z", fixture.next % 60);
    fixture.sessions.insert(id.clone(), created);
    (StatusCode::CREATED, Json(SessionCreated { id })).into_response()
}

async fn session(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    let fixture = lock(&state);
    let runs: Vec<&FixtureRun> = fixture.runs.values().filter(|r| r.summary.session == id).collect();
    if !fixture.sessions.contains_key(&id) {
        return error(StatusCode::NOT_FOUND, "not_found", &format!("no session '{id}'"));
    }
    let mut transcript = Vec::new();
    for run in &runs {
        let started = run.events.iter().find(|e| e["type"] == "run_started");
        let said = started.map_or(json!(""), |e| e["input"].clone());
        let answered = run.result.clone().unwrap_or(json!(""));
        transcript.push(json!({"role": "user", "content": [{"type": "text", "text": said}]}));
        transcript.push(json!({"role": "assistant", "content": [{"type": "text", "text": answered},
            {"type": "tool_call", "id": "c1", "name": "read_file", "arguments": {"path": "notes.md"}}]}));
    }
    Json(Session { id, transcript, runs: runs.iter().map(|r| r.run()).collect() }).into_response()
}

async fn start(State(state): State<Shared>, Json(body): Json<RunRequest>) -> Response {
    if body.workload == "review" {
        return error(StatusCode::SERVICE_UNAVAILABLE, "busy", "the fixture runs only workload ask");
    }
    if body.workload != "ask" {
        let message = format!("workload: no workload named {:?} (served: ask, review)", body.workload);
        return error(StatusCode::BAD_REQUEST, "invalid_request", &message);
    }
    let prompt = body.prompt.unwrap_or_default();
    let id = {
        let mut fixture = lock(&state);
        if let Some(session) = body.session.as_ref().filter(|s| !fixture.sessions.contains_key(*s)) {
            let message = format!("session: no session {session}; create it with POST /v1/sessions");
            return error(StatusCode::NOT_FOUND, "not_found", &message);
        }
        fixture.next += 1;
        let id = format!("r-{}", fixture.next);
        let session = body.session.unwrap_or_else(|| format!("s-{id}"));
        let started = format!("2026-11-26T10:{:02}:00Z", fixture.next % 60);
        let mut run = summary(&session, "ask", RunStatus::Running, &started);
        // As `sr serve` does, a run that names no entry records the default one.
        run.entry = Some(body.entry.unwrap_or_else(|| "main".to_string()));
        fixture.add(&id, run);
        fixture.update(&id, |run| run.message.clone_from(&prompt));
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
        lock(&task_state).update(&task_id, |run| run.summary.status = RunStatus::Paused);
    });
    (StatusCode::ACCEPTED, Json(RunAccepted { id, status: RunStatus::Queued })).into_response()
}

async fn input(State(state): State<Shared>, Path(id): Path<String>, Json(body): Json<InputRequest>) -> Response {
    let Some(text) = body.text.or(body.decision) else {
        return error(StatusCode::BAD_REQUEST, "invalid_request", "text: missing (or decision, for a run in doubt)");
    };
    let text = text.as_str();
    let mut fixture = lock(&state);
    let Some(run) = fixture.runs.get(&id) else {
        return error(StatusCode::NOT_FOUND, "not_found", &format!("no run '{id}'"));
    };
    if run.summary.status == RunStatus::InDoubt {
        let status = match text {
            "retry" | "skip" => RunStatus::Done,
            "fail" => RunStatus::Failed,
            _ => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "an in-doubt step is decided with `retry`, `skip` or `fail`",
                );
            }
        };
        fixture.emit(&id, &["flow:main"], json!({"type": "log", "message": format!("decided: {text}")}));
        fixture.emit(
            &id,
            &[],
            json!({"type": "run_finished", "status": if status == RunStatus::Done { "completed" } else { "failed" },
            "result": null, "error": null, "usage": {"input_tokens": 0, "output_tokens": 0}}),
        );
        fixture.update(&id, |run| run.summary.status = status);
        return (StatusCode::ACCEPTED, Json(RunAccepted { id, status: RunStatus::Queued })).into_response();
    }
    if run.summary.status != RunStatus::Paused {
        let message =
            format!("run {id} is {}: only a run paused by `escalate to human` takes input", run.summary.status);
        return error(StatusCode::CONFLICT, "not_waiting", &message);
    }
    let flow = ["flow:main"];
    fixture.update(&id, |run| run.summary.status = RunStatus::Running);
    fixture.emit(&id, &flow, json!({"type": "state_change", "variable": "branch", "value": text}));
    fixture.emit(&id, &flow, json!({"type": "flow_finished", "flow": "main", "result": format!("deployed {text}")}));
    fixture.emit(
        &id,
        &[],
        json!({"type": "run_finished", "status": "completed", "result": format!("deployed {text}"), "error": null,
        "usage": {"input_tokens": 11, "output_tokens": 4}}),
    );
    fixture.update(&id, |run| {
        run.result = Some(json!(format!("deployed {text}")));
        run.summary.status = RunStatus::Done;
    });
    (StatusCode::ACCEPTED, Json(RunAccepted { id, status: RunStatus::Queued })).into_response()
}

async fn cancel(State(state): State<Shared>, Path(id): Path<String>) -> Response {
    let mut fixture = lock(&state);
    let Some(run) = fixture.runs.get(&id) else {
        return error(StatusCode::NOT_FOUND, "not_found", &format!("no run '{id}'"));
    };
    if run.summary.status.is_ended() {
        let message = format!("run {id} has ended ({}): nothing to cancel", run.summary.status);
        return error(StatusCode::CONFLICT, "run_ended", &message);
    }
    fixture.emit(&id, &[], json!({"type": "run_finished", "status": "cancelled", "result": null, "error": "cancelled", "usage": {"input_tokens": 0, "output_tokens": 0}}));
    fixture.update(&id, |run| run.summary.status = RunStatus::Cancelled);
    Json(CancelAnswer { id, status: CancelStatus::Cancelled }).into_response()
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
        .route("/v1/sessions", get(sessions).post(create_session))
        .route("/v1/sessions/{id}", get(session))
        .route("/fixture/runs/{id}/emit", post(emit))
        .with_state(state);
    let app = api.fallback_service(sr_studio::router());
    let listener = tokio::net::TcpListener::bind(&addr).await.unwrap();
    eprintln!("fixture server on http://{}", listener.local_addr().unwrap());
    axum::serve(listener, app).await.unwrap();
}
