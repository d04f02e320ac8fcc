//! The OpenAPI 3.1 document of API v1, generated from the wire types' JSON
//! Schemas (draft 2020-12, OpenAPI 3.1's dialect). `sr serve` answers the
//! committed copy (`openapi.json` beside this crate's manifest) at
//! `GET /v1/openapi.json`; `tests/drift.rs` fails when it is not what this
//! module generates.

use schemars::Schema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value, json};

use crate::a2a::{
    Message, RpcAnswer, RpcRequest, Task, TaskArtifactUpdate, TaskPushConfig, TaskPushConfigV03, TaskStatusUpdate,
};
use crate::travel::{ForkRequest, Forked, Moment};
use crate::{
    CancelAnswer, ErrorAnswer, Event, Health, InputRequest, NewSession, Payload, Run, RunAccepted, RunList, RunRequest,
    Session, SessionCreated, SessionList, WorkloadList,
};

/// The committed document, as `sr serve` answers it.
pub const COMMITTED: &str = include_str!("../openapi.json");

/// One answer of an operation: its status and what its body is.
enum Answer {
    Json(u16, &'static str, Schema),
    /// Server-Sent Events whose `data:` is one `Event` each.
    Events,
    Text(&'static str),
}

struct Operation {
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    request: Option<Schema>,
    answers: Vec<Answer>,
    /// Refusals besides the ones every keyed route may answer (400 for a bad body, 401).
    refusals: &'static [(u16, &'static str)],
}

/// A generator whose references point into `#/components/schemas`.
pub fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().with(|s| s.definitions_path = "/components/schemas".into()).into_generator()
}

fn operations(g: &mut SchemaGenerator) -> Vec<Operation> {
    let op = |method, path, summary, request: Option<Schema>, answers, refusals| Operation {
        method,
        path,
        summary,
        request,
        answers,
        refusals,
    };
    let health = g.subschema_for::<Health>();
    let run = g.subschema_for::<Run>();
    let accepted = g.subschema_for::<RunAccepted>();
    vec![
        op("get", "/healthz", "The server is up", None, vec![Answer::Json(200, "`ok`", health.clone())], &[]),
        op(
            "get",
            "/readyz",
            "The server takes runs: not draining, and its store answers",
            None,
            vec![Answer::Json(200, "`ready`", health)],
            &[(503, "draining, or the store does not answer")],
        ),
        op(
            "get",
            "/v1/workloads",
            "The workloads the server runs, with their entries, graphs and diagnostics",
            None,
            vec![Answer::Json(200, "the workloads", g.subschema_for::<WorkloadList>())],
            &[],
        ),
        op(
            "get",
            "/v1/sessions",
            "Every session, the one active last first, a page at a time (`?q=` searches ids and workloads, \
             `?limit=` per page (default 50, up to 500), `?before=` a page's `next`)",
            None,
            vec![Answer::Json(200, "the sessions", g.subschema_for::<SessionList>())],
            &[],
        ),
        op(
            "post",
            "/v1/sessions",
            "Create a session (with the id given, or a new UUID)",
            Some(g.subschema_for::<NewSession>()),
            vec![Answer::Json(201, "created", g.subschema_for::<SessionCreated>())],
            &[(409, "`session_exists`")],
        ),
        op(
            "get",
            "/v1/sessions/{id}",
            "A session's transcript and runs",
            None,
            vec![Answer::Json(200, "the session", g.subschema_for::<Session>())],
            &[(404, "no such session")],
        ),
        op(
            "get",
            "/v1/runs",
            "The newest runs first (`?status=` keeps one status, `?limit=` up to 500, default 200)",
            None,
            vec![Answer::Json(200, "the runs", g.subschema_for::<RunList>())],
            &[],
        ),
        op(
            "post",
            "/v1/runs",
            "Submit a run",
            Some(g.subschema_for::<RunRequest>()),
            vec![
                Answer::Json(202, "queued (without `wait`)", accepted.clone()),
                Answer::Json(200, "ended or paused (with `wait`)", run.clone()),
            ],
            &[(404, "no such session"), (409, "`session_busy`"), (413, "`session_full`")],
        ),
        op("get", "/v1/runs/{id}", "A run", None, vec![Answer::Json(200, "the run", run)], &[(404, "no such run")]),
        op(
            "get",
            "/v1/runs/{id}/events",
            "A run's events as Server-Sent Events (`id:` the event's `seq`), after `Last-Event-ID` or `?after=N`; \
             the stream ends once the run has ended",
            None,
            vec![Answer::Events],
            &[(404, "no such run")],
        ),
        op(
            "post",
            "/v1/runs/{id}/cancel",
            "Cancel a run",
            None,
            vec![Answer::Json(200, "cancelled, or being stopped", g.subschema_for::<CancelAnswer>())],
            &[(404, "no such run"), (409, "`run_ended`")],
        ),
        op(
            "post",
            "/v1/runs/{id}/input",
            "Answer a paused run, or decide about a run in doubt; the run is queued again",
            Some(g.subschema_for::<InputRequest>()),
            vec![Answer::Json(202, "queued again", accepted)],
            &[(404, "no such run"), (409, "`not_waiting` or `not_in_doubt`")],
        ),
        op(
            "get",
            "/v1/runs/{id}/at/{seq}",
            "The run as it was at its event `seq` (an ended or paused run), its journal replayed with no model or \
             tool call",
            None,
            vec![Answer::Json(200, "the run then", g.subschema_for::<Moment>())],
            &[
                (404, "no such run"),
                (409, "`run_active`, `never_started` or `workload_gone`"),
                (500, "`replay_failed`"),
                (503, "`busy`: too many travels at once"),
            ],
        ),
        op(
            "post",
            "/v1/runs/{id}/fork",
            "A new run, in a new session, that replays the run up to event `at` and goes live there",
            Some(g.subschema_for::<ForkRequest>()),
            vec![Answer::Json(202, "the fork, queued", g.subschema_for::<Forked>())],
            &[
                (404, "no such run"),
                (409, "`run_active`, `never_started`, `workload_gone` or `replay_server`"),
                (500, "`replay_failed`"),
                (503, "`busy`: too many travels at once"),
            ],
        ),
        a2a(g, "/a2a", "A2A JSON-RPC (1.0 and 0.3) to the server's only workload"),
        a2a(g, "/a2a/{workload}", "A2A JSON-RPC (1.0 and 0.3) to a workload"),
        op(
            "get",
            "/.well-known/agent-card.json",
            "The agent card of the server's only workload (1.0's and 0.3's fields); open, as clients read it first",
            None,
            vec![Answer::Text("application/json")],
            &[(404, "the server runs several workloads: each has its own card")],
        ),
        op(
            "get",
            "/a2a/{workload}/.well-known/agent-card.json",
            "A workload's agent card (1.0's and 0.3's fields)",
            None,
            vec![Answer::Text("application/json")],
            &[(404, "no such workload")],
        ),
        op("get", "/metrics", "Prometheus metrics", None, vec![Answer::Text("text/plain; version=0.0.4")], &[]),
        op("get", "/v1/openapi.json", "This document", None, vec![Answer::Text("application/json")], &[]),
    ]
}

/// An A2A endpoint: a JSON-RPC request, answered with JSON, or with Server-Sent
/// Events (one answer each) for the streaming methods.
fn a2a(g: &mut SchemaGenerator, path: &'static str, summary: &'static str) -> Operation {
    Operation {
        method: "post",
        path,
        summary,
        request: Some(g.subschema_for::<RpcRequest>()),
        answers: vec![Answer::Json(
            200,
            "the answer; `SendStreamingMessage`, `message/stream`, `SubscribeToTask` and `tasks/resubscribe` answer \
             `text/event-stream`, one answer per event",
            g.subschema_for::<RpcAnswer>(),
        )],
        refusals: &[(404, "no such workload")],
    }
}

/// Whether a route needs a key when the server has them: all but the health
/// checks and the agent cards.
fn keyed(path: &str) -> bool {
    !matches!(path, "/healthz" | "/readyz") && !path.ends_with("/agent-card.json")
}

/// The document: every operation of API v1 and the schemas of its bodies.
pub fn document() -> Value {
    let mut g = generator();
    let event = g.subschema_for::<Event>();
    // Named apart from `Event`, which flattens it, for clients that switch on its `type`.
    g.subschema_for::<Payload>();
    // What an A2A answer's `result` holds.
    g.subschema_for::<Task>();
    g.subschema_for::<Message>();
    g.subschema_for::<TaskStatusUpdate>();
    g.subschema_for::<TaskArtifactUpdate>();
    g.subschema_for::<TaskPushConfig>();
    g.subschema_for::<TaskPushConfigV03>();
    let error = g.subschema_for::<ErrorAnswer>();
    let mut paths = Map::new();
    for operation in operations(&mut g) {
        let mut responses = Map::new();
        for answer in operation.answers {
            let (status, body) = match answer {
                Answer::Json(status, description, schema) => {
                    (status, json!({"description": description, "content": {"application/json": {"schema": schema}}}))
                }
                Answer::Events => (
                    200,
                    json!({"description": "one message per event, whose `data:` is this schema as JSON",
                           "content": {"text/event-stream": {"schema": event.clone()}}}),
                ),
                Answer::Text(media) => (200, json!({"description": "text", "content": {media: {}}})),
            };
            responses.insert(status.to_string(), body);
        }
        // What sr-serve's route table says (its test `openapi_lists_the_routes` checks it).
        let keyed = keyed(operation.path);
        let common: &[(u16, &str)] = if keyed { &[(400, "a bad request"), (401, "no valid key")] } else { &[] };
        for (status, description) in common.iter().chain(operation.refusals) {
            responses.insert(
                status.to_string(),
                json!({"description": description, "content": {"application/json": {"schema": error.clone()}}}),
            );
        }
        let mut body = json!({"summary": operation.summary, "responses": responses});
        let parameters: Vec<Value> = [("id", "string"), ("seq", "integer"), ("workload", "string")]
            .into_iter()
            .filter(|(name, _)| operation.path.contains(&format!("{{{name}}}")))
            .map(|(name, kind)| json!({"name": name, "in": "path", "required": true, "schema": {"type": kind}}))
            .collect();
        if !parameters.is_empty() {
            body["parameters"] = Value::Array(parameters);
        }
        if let Some(request) = operation.request {
            body["requestBody"] = json!({"content": {"application/json": {"schema": request}}});
        }
        if keyed {
            body["security"] = json!([{"bearer": []}]);
        }
        let entry = paths.entry(operation.path).or_insert_with(|| json!({}));
        entry[operation.method] = body;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "sr serve API v1",
            "version": "1",
            "description": "StreetRace workloads behind HTTP: sessions, runs and their streamed events (docs/serve.md).",
        },
        "paths": paths,
        "components": {
            "schemas": g.take_definitions(true),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "when the server has API keys"}},
        },
    })
}

/// The document as committed: pretty JSON and a final newline.
pub fn text() -> String {
    let mut text = serde_json::to_string_pretty(&document()).expect("a JSON value always serialises");
    text.push('\n');
    text
}
