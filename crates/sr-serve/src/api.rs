//! API v1's routes and handlers (JSON over HTTP), the key check in front of
//! them, health and metrics.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::Value;
use sr_api::{
    CancelAnswer, CancelStatus, Health, InputRequest, NewSession, OnConflict, Run, RunAccepted, RunRequest, Session,
    SessionCreated, WorkloadList,
};
use sr_runtime::ids::{self, IdKind};

use crate::error::{ApiError, Body};
use crate::gate::Gate;
use crate::route::{Access, Route};
use crate::store::{NewRun, RunRow, RunStatus};
use crate::{MAX_BODY_BYTES, Server, runs};

type Shared = State<Arc<Server>>;

/// Every route the API answers.
pub(crate) fn routes() -> Vec<Route> {
    use Access::{Keyed, Open};
    let mut routes = vec![
        Route::new(Open, Method::GET, "/healthz", || async { Json(Health { status: "ok".to_string() }) }),
        Route::new(Open, Method::GET, "/readyz", readyz),
        Route::new(Keyed, Method::GET, "/v1/workloads", workloads),
        Route::new(Keyed, Method::POST, "/v1/sessions", create_session),
        Route::new(Keyed, Method::GET, "/v1/sessions/{id}", session),
        Route::new(Keyed, Method::POST, "/v1/runs", submit),
        Route::new(Keyed, Method::GET, "/v1/runs/{id}", run),
        Route::new(Keyed, Method::GET, "/v1/runs/{id}/events", crate::events::stream),
        Route::new(Keyed, Method::POST, "/v1/runs/{id}/cancel", cancel),
        Route::new(Keyed, Method::POST, "/v1/runs/{id}/input", input),
        Route::new(Keyed, Method::GET, "/metrics", metrics),
        Route::new(Keyed, Method::GET, "/v1/openapi.json", openapi),
    ];
    routes.extend(crate::studio_api::routes());
    routes.extend(crate::travel::routes());
    routes.extend(crate::a2a::routes());
    routes
}

/// The API's routes as (method, path), e.g. `("POST", "/v1/runs/{id}/cancel")`:
/// what a client (or a test) can call.
pub fn route_table() -> Vec<(String, &'static str)> {
    routes().into_iter().map(|route| (route.method.to_string(), route.path)).collect()
}

/// The API's router behind `gate`; `frontend` answers every other path.
pub fn router(server: Arc<Server>, gate: Gate, frontend: Option<Router>) -> Result<Router, crate::BindError> {
    let mut open = Router::new();
    let mut keyed = Router::new();
    for route in routes() {
        match route.access {
            Access::Open => open = open.route(route.path, route.handler),
            Access::Keyed => keyed = keyed.route(route.path, route.handler),
        }
    }
    let keyed = keyed.route_layer(middleware::from_fn_with_state(server.clone(), authorize));
    let mut app = open
        .merge(keyed)
        .method_not_allowed_fallback(|| async {
            ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "this path does not take that method")
        })
        .with_state(server);
    app = match frontend {
        Some(frontend) => app.fallback_service(frontend),
        None => app.fallback(|| async { ApiError::not_found("no such path; the API is under /v1") }),
    };
    let cors = gate.cors_origins().to_vec();
    let app = app
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(Arc::new(gate), crate::gate::check))
        .layer(tower_http::trace::TraceLayer::new_for_http().make_span_with(|request: &Request| {
            let id = uuid::Uuid::new_v4();
            tracing::info_span!("request", %id, method = %request.method(), path = %request.uri().path())
        }));
    if cors.is_empty() {
        return Ok(app);
    }
    let origins = cors
        .iter()
        .map(|origin| HeaderValue::from_str(origin).map_err(|_| crate::BindError::CorsHeader(origin.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    let cors = tower_http::cors::CorsLayer::new()
        .allow_origin(origins)
        .allow_methods([Method::GET, Method::POST])
        .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE, header::HeaderName::from_static("last-event-id")]);
    Ok(app.layer(cors))
}

/// Without keys configured every request passes (the server is on loopback);
/// with them, a request without a listed key gets 401.
async fn authorize(State(server): Shared, request: Request, next: Next) -> Response {
    if let Some(keys) = &server.keys
        && !keys.admits(request.headers().get(header::AUTHORIZATION).map(HeaderValue::as_bytes))
    {
        let mut response =
            ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", "send a valid key as `Authorization: Bearer KEY`")
                .into_response();
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    next.run(request).await
}

/// How long `/readyz` waits for the store's answer.
const STORE_PING: std::time::Duration = std::time::Duration::from_secs(2);

/// Ready: not draining, and the store answers.
async fn readyz(State(server): Shared) -> Response {
    if server.draining() {
        return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "draining", "the server is shutting down")
            .into_response();
    }
    let unreachable = match tokio::time::timeout(STORE_PING, server.store.ping()).await {
        Ok(Ok(())) => return Json(Health { status: "ready".to_string() }).into_response(),
        Ok(Err(error)) => error.to_string(),
        Err(_) => format!("no answer within {} s", STORE_PING.as_secs()),
    };
    ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "store_unreachable", format!("the store: {unreachable}"))
        .into_response()
}

async fn metrics(State(server): Shared) -> Result<Response, ApiError> {
    let counts = server.store.counts().await?;
    let text = server.metrics.render(&counts);
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response())
}

/// The committed OpenAPI document (sr-api's drift test keeps it current).
async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], sr_api::openapi::COMMITTED).into_response()
}

async fn workloads(State(server): Shared) -> Json<WorkloadList> {
    Json(WorkloadList { workloads: server.workloads.values().map(|w| w.description.clone()).collect() })
}

async fn create_session(State(server): Shared, Body(body): Body<NewSession>) -> Result<Response, ApiError> {
    let id = match body.id {
        Some(id) => {
            ids::check(IdKind::Session, &id).map_err(|e| ApiError::bad_request(format!("id: {e}")))?;
            if server.store.session_exists(&id).await? {
                return Err(ApiError::conflict("session_exists", format!("id: session {id} exists")));
            }
            id
        }
        None => uuid::Uuid::new_v4().to_string(),
    };
    server.store.create_session(&id).await?;
    Ok((StatusCode::CREATED, Json(SessionCreated { id })).into_response())
}

fn checked_session(id: &str) -> Result<(), ApiError> {
    ids::check(IdKind::Session, id).map_err(|_| ApiError::not_found(format!("no session {id:?}")))
}

async fn session(State(server): Shared, Path(id): Path<String>) -> Result<Json<Session>, ApiError> {
    checked_session(&id)?;
    if !server.store.session_exists(&id).await? {
        return Err(ApiError::not_found(format!("no session {id}")));
    }
    let runs = server.store.session_runs(&id).await?;
    // The session's record, whichever replica ran its turns.
    let transcript = server.store.record(&id).await?.messages;
    let mut shown_runs = Vec::with_capacity(runs.len());
    for row in runs {
        shown_runs.push(shown(&server, row).await?);
    }
    Ok(Json(Session { id, transcript, runs: shown_runs }))
}

async fn submit(State(server): Shared, Body(request): Body<RunRequest>) -> Result<Response, ApiError> {
    let Some(workload) = server.workloads.get(&request.workload) else {
        let served: Vec<&str> = server.workloads.keys().map(String::as_str).collect();
        return Err(ApiError::bad_request(format!(
            "workload: no workload named {:?} (served: {})",
            request.workload,
            served.join(", ")
        )));
    };
    if let Some(entry) = &request.entry
        && !workload.has_entry(entry)
    {
        return Err(ApiError::bad_request(format!("entry: {} has no flow or agent named {entry:?}", workload.name)));
    }
    let message = match (request.prompt, request.input) {
        (Some(_), Some(_)) => return Err(ApiError::bad_request("prompt, input: give one of them, not both")),
        (Some(prompt), None) => prompt,
        (None, Some(Value::String(text))) => text,
        (None, Some(input)) => input.to_string(),
        (None, None) => String::new(),
    };
    if let Some(model) = &request.model {
        if model.trim().is_empty() || model.ends_with('/') || model.starts_with('/') {
            return Err(ApiError::bad_request(format!("model: {model:?} names no model (e.g. openai/gpt-4o)")));
        }
        // The id may reach a provider's URL, sent with the server's key.
        sr_llm::check_model_id(model).map_err(|e| ApiError::bad_request(format!("model: {e}")))?;
    }
    let session = match request.session {
        Some(session) => {
            ids::check(IdKind::Session, &session).map_err(|e| ApiError::bad_request(format!("session: {e}")))?;
            if !server.store.session_exists(&session).await? {
                return Err(ApiError::not_found(format!(
                    "session: no session {session}; create it with POST /v1/sessions"
                )));
            }
            session
        }
        None => uuid::Uuid::new_v4().to_string(),
    };
    let id = uuid::Uuid::new_v4().to_string();
    let entry = request.entry.or_else(|| workload.default_entry());
    let new = NewRun {
        id: &id,
        session: &session,
        workload: &workload.name,
        entry: entry.as_deref(),
        message: &message,
        model: request.model.as_deref(),
        a2a: false,
    };
    runs::queue(&server, &new, request.on_conflict == OnConflict::Reject).await?;
    if !request.wait {
        return Ok((StatusCode::ACCEPTED, Json(RunAccepted { id, status: RunStatus::Queued })).into_response());
    }
    let row = runs::wait_for_end(&server, &id).await?;
    Ok(Json(shown(&server, row).await?).into_response())
}

async fn run(State(server): Shared, Path(id): Path<String>) -> Result<Json<Run>, ApiError> {
    let row = server.find_run(&id).await?;
    Ok(Json(shown(&server, row).await?))
}

/// A stored run as the API shows it (the store moved a run in doubt's
/// question out of its result). Its message is its `run_started` event's
/// input, where the runtime replaced every secret, never the stored text.
pub(crate) async fn shown(server: &Server, row: RunRow) -> Result<Run, ApiError> {
    let first = server.store.events_after(&row.id, 0, 1).await?;
    let message = first.first().and_then(|(_, text)| match serde_json::from_str::<sr_api::Event>(text) {
        Ok(sr_api::Event { payload: sr_api::Payload::RunStarted { input, .. }, .. }) => Some(input),
        _ => None,
    });
    let question = row.question.and_then(|question| {
        serde_json::from_value(question)
            .inspect_err(|error| tracing::warn!(run = %row.id, %error, "a stored question is not a question"))
            .ok()
    });
    let forked_from = crate::travel::fork::origin(&server.store, &row.id).await;
    Ok(Run {
        forked_from,
        id: row.id,
        session: row.session,
        workload: row.workload,
        entry: row.entry,
        status: row.status,
        message,
        result: row.result,
        error: row.error,
        question,
        trace_url: row.trace_id.as_deref().and_then(|id| server.trace_url(id)),
        trace_id: row.trace_id,
    })
}

async fn cancel(State(server): Shared, Path(id): Path<String>) -> Result<Json<CancelAnswer>, ApiError> {
    let status = match runs::cancel_run(&server, &id).await? {
        runs::Cancel::Cancelled => CancelStatus::Cancelled,
        runs::Cancel::Cancelling => CancelStatus::Cancelling,
    };
    Ok(Json(CancelAnswer { id, status }))
}

/// An answer to `escalate to human` (`text`), or a decision about a tool
/// call in doubt (`decision`; a `text` of `retry`, `skip` or `fail` decides too).
async fn input(
    State(server): Shared,
    Path(id): Path<String>,
    Body(body): Body<InputRequest>,
) -> Result<Response, ApiError> {
    match (body.text, body.decision) {
        (Some(_), Some(_)) => return Err(ApiError::bad_request("text, decision: give one of them, not both")),
        (None, None) => return Err(ApiError::bad_request("text: missing (or decision, for a run in doubt)")),
        (Some(text), None) => runs::answer(&server, &id, &text).await?,
        (None, Some(decision)) => {
            let decision = decision
                .parse()
                .map_err(|e: sr_runtime::in_doubt::NoDecision| ApiError::bad_request(format!("decision: {e}")))?;
            runs::decide(&server, &id, decision).await?;
        }
    }
    Ok((StatusCode::ACCEPTED, Json(RunAccepted { id, status: RunStatus::Queued })).into_response())
}

#[cfg(test)]
mod tests {
    use super::{Access, routes};

    /// Every route but time travel's and A2A's is in the OpenAPI document,
    /// with its method, and asks for a key there exactly when the server does.
    #[test]
    fn openapi_lists_the_routes() {
        let document = sr_api::openapi::document();
        let mut listed = Vec::new();
        for route in routes() {
            let path = route.path;
            let operation = &document["paths"][path][route.method.as_str().to_lowercase()];
            assert!(operation.is_object(), "{} {path} is not in the OpenAPI document", route.method);
            assert_eq!(operation.get("security").is_some(), route.access == Access::Keyed, "{path}: security");
            listed.push(path);
        }
        let operations: usize =
            document["paths"].as_object().unwrap().values().map(|p| p.as_object().unwrap().len()).sum();
        assert_eq!(operations, listed.len(), "the document lists a route the server does not have");
    }
}
