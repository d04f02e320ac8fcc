//! API v1's routes and handlers (JSON over HTTP), the key check in front of
//! them, health and metrics.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
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
        Route::new(Open, Method::GET, "/healthz", || async { Json(json!({"status": "ok"})) }),
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
pub fn router(server: Arc<Server>, gate: Gate, frontend: Option<Router>) -> Result<Router, String> {
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
        .map(|origin| {
            HeaderValue::from_str(origin).map_err(|_| format!("--cors-origin {origin:?} is not a header value"))
        })
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
        Ok(Ok(())) => return Json(json!({"status": "ready"})).into_response(),
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

async fn workloads(State(server): Shared) -> Json<Value> {
    let list: Vec<&Value> = server.workloads.values().map(|w| &w.description).collect();
    Json(json!({"workloads": list}))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct NewSession {
    id: Option<String>,
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
    Ok((StatusCode::CREATED, Json(json!({"id": id}))).into_response())
}

fn checked_session(id: &str) -> Result<(), ApiError> {
    ids::check(IdKind::Session, id).map_err(|_| ApiError::not_found(format!("no session {id:?}")))
}

async fn session(State(server): Shared, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    checked_session(&id)?;
    if !server.store.session_exists(&id).await? {
        return Err(ApiError::not_found(format!("no session {id}")));
    }
    let runs = server.store.session_runs(&id).await?;
    // The session's record, whichever replica ran its turns.
    let transcript = server.store.record(&id).await?.messages;
    Ok(Json(json!({"id": id, "transcript": transcript, "runs": runs})))
}

#[derive(Deserialize, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum OnConflict {
    #[default]
    Reject,
    Enqueue,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunRequest {
    workload: String,
    entry: Option<String>,
    prompt: Option<String>,
    input: Option<Value>,
    session: Option<String>,
    model: Option<String>,
    #[serde(default)]
    wait: bool,
    #[serde(default)]
    on_conflict: OnConflict,
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
    let new = NewRun {
        id: &id,
        session: &session,
        workload: &workload.name,
        entry: request.entry.as_deref(),
        message: &message,
        model: request.model.as_deref(),
    };
    runs::queue(&server, &new, request.on_conflict == OnConflict::Reject).await?;
    if !request.wait {
        return Ok((StatusCode::ACCEPTED, Json(json!({"id": id, "status": RunStatus::Queued}))).into_response());
    }
    let row = runs::wait_for_end(&server, &id).await?;
    Ok(Json(row).into_response())
}

async fn run(State(server): Shared, Path(id): Path<String>) -> Result<Json<RunRow>, ApiError> {
    server.find_run(&id).await.map(Json)
}

async fn cancel(State(server): Shared, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let status = runs::cancel_run(&server, &id).await?;
    Ok(Json(json!({"id": id, "status": status.as_str()})))
}

/// An answer to `escalate to human` (`text`), or a decision about a tool
/// call in doubt (`decision`; a `text` of `retry`, `skip` or `fail` decides too).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    text: Option<String>,
    decision: Option<String>,
}

async fn input(State(server): Shared, Path(id): Path<String>, Body(body): Body<Input>) -> Result<Response, ApiError> {
    match (body.text, body.decision) {
        (Some(_), Some(_)) => return Err(ApiError::bad_request("text, decision: give one of them, not both")),
        (None, None) => return Err(ApiError::bad_request("text: missing (or decision, for a run in doubt)")),
        (Some(text), None) => runs::answer(&server, &id, &text).await?,
        (None, Some(decision)) => {
            let decision = decision.parse().map_err(|e: String| ApiError::bad_request(format!("decision: {e}")))?;
            runs::decide(&server, &id, decision).await?;
        }
    }
    Ok((StatusCode::ACCEPTED, Json(json!({"id": id, "status": RunStatus::Queued}))).into_response())
}
