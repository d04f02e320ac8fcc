//! Every served workload as an Agent2Agent (A2A) agent: its card
//! (`card`), and its JSON-RPC endpoint answering A2A 1.0's method names and
//! 0.3's, each in its version's shapes (`rpc`, `shapes`), one response
//! (`methods`) or a stream of Server-Sent Events (`stream`). A client's
//! message is read by `inbound` (its own text, context parts, files), what
//! A2A adds to a run is kept by `record`, the files a run wrote come back
//! through `files`, and webhooks are notified by `push`. A context is a
//! session and a task a run; see `docs/a2a.md`.

mod card;
mod files;
mod inbound;

pub(crate) use inbound::{CONTEXT_FILE, place as place_inbox};
pub(crate) use push::resume as resume_push;
mod methods;
mod push;
mod record;
mod rpc;
mod shapes;
mod stream;

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{self, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use self::methods::Call;
use self::rpc::{Method, RpcError};
use crate::error::ApiError;
use crate::route::{Access, Route};
use crate::workloads::Workload;
use crate::{MAX_BODY_BYTES, Server};

type Shared = State<Arc<Server>>;

/// The agent cards, open, as A2A clients read them before they know how to
/// authenticate (the card says how), and the JSON-RPC endpoints, behind the
/// API's key check.
pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::new(Access::Open, http::Method::GET, "/.well-known/agent-card.json", only_card),
        Route::new(Access::Open, http::Method::GET, "/a2a/{workload}/.well-known/agent-card.json", workload_card),
        Route::new(Access::Keyed, http::Method::POST, "/a2a", only_endpoint),
        Route::new(Access::Keyed, http::Method::POST, "/a2a/{workload}", endpoint),
    ]
}

/// The one workload, when exactly one is served.
fn only(server: &Server) -> Option<Arc<Workload>> {
    match server.workloads.values().collect::<Vec<_>>()[..] {
        [one] => Some(one.clone()),
        _ => None,
    }
}

async fn only_card(State(server): Shared) -> Result<Response, ApiError> {
    let Some(workload) = only(&server) else {
        let cards: Vec<String> =
            server.workloads.keys().map(|name| format!("/a2a/{name}/.well-known/agent-card.json")).collect();
        return Err(ApiError::not_found(format!(
            "several workloads are served, each an agent with its own card: {}",
            cards.join(", ")
        )));
    };
    let endpoint = format!("{}/a2a", server.settings.base_url);
    Ok(axum::Json(card::card(&workload, &endpoint, &card_options(&server))).into_response())
}

async fn workload_card(State(server): Shared, Path(name): Path<String>) -> Result<Response, ApiError> {
    let workload = server.workloads.get(&name).ok_or_else(|| unknown(&server, &name))?;
    let endpoint = format!("{}/a2a/{name}", server.settings.base_url);
    Ok(axum::Json(card::card(workload, &endpoint, &card_options(&server))).into_response())
}

fn card_options(server: &Server) -> card::Options {
    card::Options { keyed: server.keys.is_some(), push: !server.settings.push_hosts.is_empty() }
}

fn unknown(server: &Server, name: &str) -> ApiError {
    let served: Vec<&str> = server.workloads.keys().map(String::as_str).collect();
    let shown: String = name.chars().take(80).collect();
    ApiError::not_found(format!("no workload named {shown:?} (served: {})", served.join(", ")))
}

async fn only_endpoint(State(server): Shared, headers: HeaderMap, body: Result<Bytes, BytesRejection>) -> Response {
    let workload = only(&server).ok_or_else(|| {
        let paths: Vec<String> = server.workloads.keys().map(|name| format!("/a2a/{name}")).collect();
        format!("several workloads are served: POST to one of {}", paths.join(", "))
    });
    call(server, workload, &headers, body).await
}

async fn endpoint(
    State(server): Shared,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let workload = server.workloads.get(&name).cloned().ok_or_else(|| unknown(&server, &name).message);
    call(server, workload, &headers, body).await
}

fn json(status: StatusCode, value: Value) -> Response {
    (status, axum::Json(value)).into_response()
}

/// Answers one JSON-RPC request to `workload` (or a JSON-RPC error: 413 for
/// a body over the limit, 404 for an unknown workload, 200 otherwise, as
/// JSON-RPC over HTTP has it).
async fn call(
    server: Arc<Server>,
    workload: Result<Arc<Workload>, String>,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            let error = RpcError::invalid_request(format!("the request body is over {MAX_BODY_BYTES} bytes"));
            return json(StatusCode::PAYLOAD_TOO_LARGE, rpc::failure(&Value::Null, &error));
        }
        Err(rejection) => {
            let error = RpcError::invalid_request(format!("cannot read the request body: {}", rejection.body_text()));
            return json(StatusCode::BAD_REQUEST, rpc::failure(&Value::Null, &error));
        }
    };
    let request = match rpc::read(&body) {
        Ok(request) => request,
        Err((id, error)) => return json(StatusCode::OK, rpc::failure(&id, &error)),
    };
    let id = request.id.clone();
    let fail = |error: RpcError| json(StatusCode::OK, rpc::failure(&id, &error));
    if let Err(error) = rpc::check_version(headers.get("a2a-version").map(|v| v.as_bytes())) {
        return fail(error);
    }
    let workload = match workload {
        Ok(workload) => workload,
        Err(message) => return json(StatusCode::NOT_FOUND, rpc::failure(&id, &RpcError::invalid_request(message))),
    };
    let call = Call { server, workload, version: request.version };
    let params = &request.params;
    let answer = match request.method {
        Method::Send => match delivered(&call, params).await {
            Ok(task) => methods::send(&call, params, &task).await,
            Err(error) => Err(error),
        },
        Method::Get => methods::get(&call, params).await,
        Method::List => methods::list(&call, params).await,
        Method::Cancel => methods::cancel(&call, params).await,
        Method::PushSet => push::set(&call, params).await,
        Method::PushGet => push::get(&call, params).await,
        Method::PushList => push::list(&call, params).await,
        Method::PushDelete => push::delete(&call, params).await,
        Method::ExtendedCard => Err(RpcError::no_extended_card()),
        Method::Stream => {
            let streamed = match delivered(&call, params).await {
                Ok(task) => stream::respond(call, id.clone(), &task).await,
                Err(error) => Err(error),
            };
            return streamed.unwrap_or_else(fail);
        }
        Method::Subscribe => {
            let streamed = async {
                let task = rpc::required(params, "id")?;
                let run = call.find(task).await?;
                if run.status.is_ended() {
                    return Err(RpcError::unsupported(format!(
                        "task {task} has ended ({}): GetTask shows it",
                        shapes::state(run.status, call.version)
                    )));
                }
                stream::respond(call, id.clone(), task).await
            };
            return streamed.await.unwrap_or_else(fail);
        }
    };
    match answer {
        Ok(result) => json(StatusCode::OK, rpc::success(&id, result)),
        Err(error) => fail(error),
    }
}

/// Delivers a send's message, with its push notification configuration
/// (checked first: a refused one starts no task); returns the task's id.
async fn delivered(call: &Call, params: &serde_json::Map<String, Value>) -> Result<String, RpcError> {
    let push = push::from_send(call, params)?;
    let task = methods::deliver(call, params).await?;
    if let Some(push) = push {
        push::attach(call, &task, push).await?;
    }
    Ok(task)
}

#[cfg(test)]
mod tests;
