//! The OpenAPI 3.1 document of API v1, generated from the wire types' JSON
//! Schemas (draft 2020-12, OpenAPI 3.1's dialect). `sr serve` answers the
//! committed copy (`openapi.json` beside this crate's manifest) at
//! `GET /v1/openapi.json`; `tests/drift.rs` fails when it is not what this
//! module generates.

use schemars::Schema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value, json};

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
            "The sessions of the newest runs, newest first (`?q=` searches ids and workloads, `?limit=` runs read, \
             up to 500)",
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
        op("get", "/metrics", "Prometheus metrics", None, vec![Answer::Text("text/plain; version=0.0.4")], &[]),
        op("get", "/v1/openapi.json", "This document", None, vec![Answer::Text("application/json")], &[]),
    ]
}

/// The document: every operation of API v1 and the schemas of its bodies.
pub fn document() -> Value {
    let mut g = generator();
    let event = g.subschema_for::<Event>();
    // Named apart from `Event`, which flattens it, for clients that switch on its `type`.
    g.subschema_for::<Payload>();
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
        let keyed = operation.path.starts_with("/v1/") || operation.path == "/metrics";
        let common: &[(u16, &str)] = if keyed { &[(400, "a bad request"), (401, "no valid key")] } else { &[] };
        for (status, description) in common.iter().chain(operation.refusals) {
            responses.insert(
                status.to_string(),
                json!({"description": description, "content": {"application/json": {"schema": error.clone()}}}),
            );
        }
        let mut body = json!({"summary": operation.summary, "responses": responses});
        if operation.path.contains("{id}") {
            body["parameters"] = json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]);
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
