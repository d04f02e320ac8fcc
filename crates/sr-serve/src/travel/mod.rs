//! Time travel and forks (issue #31): `GET /v1/runs/{id}/at/{seq}` shows a
//! run as it was at one of its events (`moment`), `POST /v1/runs/{id}/fork`
//! starts a new run that replays it up to an event and goes live there
//! (`fork`). Both replay the run's journal with the runtime's own machinery
//! (`launch` in `Mode::Replay`, `launch_continuing` in `Mode::Travel`) and a
//! step hook; an event id is found again in the replay by `target`. The
//! original run, its journal and its work directory are only read.

pub(crate) mod files;
pub(crate) mod fork;
pub(crate) mod moment;
pub(crate) mod target;
pub(crate) mod turns;

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sr_runtime::journal::Recorded;
use sr_runtime::state::StateDir;

use crate::Server;
use crate::error::{ApiError, Body};
use crate::store::{NewRun, Refusal, RunRow, RunStatus};
use moment::Stop;
use target::Target;

pub fn routes() -> Router<Arc<Server>> {
    Router::new().route("/v1/runs/{id}/at/{seq}", get(at)).route("/v1/runs/{id}/fork", post(fork_run))
}

/// A replay that failed on the server's side, with why (no secret is in it:
/// it names events, files and journal lines).
pub(crate) fn replay_failed(message: impl Into<String>) -> ApiError {
    let message = message.into();
    tracing::error!(%message, "a travel's replay failed");
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "replay_failed", message)
}

/// The run's journal: the one its last attempt wrote.
pub(crate) fn journal_of(server: &Server, run: &RunRow) -> Result<String, ApiError> {
    let path = journal_path(server, run)?;
    std::fs::read_to_string(&path)
        .map_err(|e| replay_failed(format!("cannot read the journal of run {} ({}): {e}", run.id, path.display())))
}

fn journal_path(server: &Server, run: &RunRow) -> Result<std::path::PathBuf, ApiError> {
    let Some(attempt) = run.attempt_run else {
        return Err(ApiError::conflict("never_started", format!("run {} never started: it has no journal", run.id)));
    };
    let state = StateDir { dir: server.settings.state_dir.clone() };
    state.journal(&run.session, attempt).map_err(|e| replay_failed(e.to_string()))
}

/// The answers the run was given to `escalate to human`, in order.
pub(crate) fn recorded_answers(journal: &str) -> Result<Vec<String>, ApiError> {
    let recorded = Recorded::parse(journal).map_err(|e| replay_failed(format!("the run's journal: {e}")))?;
    Ok(recorded.meta().map(|m| m.answers.clone()).unwrap_or_default())
}

/// The run `id`, when it can be travelled in: ended or paused.
async fn settled_run(server: &Server, id: &str) -> Result<RunRow, ApiError> {
    let run = server.find_run(id).await?;
    match run.status {
        status if status.is_ended() || status == RunStatus::Paused => Ok(run),
        status => Err(ApiError::conflict(
            "run_active",
            format!("run {id} is {status}: travel in a run once it has ended or paused"),
        )),
    }
}

/// Event `seq` of `run`, located among its stored events (all of them: a
/// pause after `seq` decides whether the events before it are repeated).
async fn locate(server: &Server, run: &RunRow, seq: u64) -> Result<Target, ApiError> {
    let bad = |target::Beyond(message)| ApiError::bad_request(message);
    let last = server.store.last_event(&run.id).await?;
    target::check(seq, last).map_err(bad)?;
    let events = crate::replayed::stored_events(&server.store, &run.id).await?;
    target::locate(&events, seq, last).map_err(bad)
}

fn parse_seq(seq: &str) -> Result<u64, ApiError> {
    seq.parse().map_err(|_| ApiError::bad_request(format!("seq: {seq:?} is not an event id")))
}

async fn at(State(server): State<Arc<Server>>, Path((id, seq)): Path<(String, String)>) -> Result<Response, ApiError> {
    let seq = parse_seq(&seq)?;
    let run = settled_run(&server, &id).await?;
    let target = locate(&server, &run, seq).await.map_err(|e| renamed(e, "at: ", "seq: "))?;
    let moment = moment::moment(&server, &run, &target, Stop::After(target.count)).await?;
    Ok(Json(moment).into_response())
}

/// The same error with its field named as the request names it.
fn renamed(mut error: ApiError, from: &str, to: &str) -> ApiError {
    if let Some(rest) = error.message.strip_prefix(from) {
        error.message = format!("{to}{rest}");
    }
    error
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ForkRequest {
    at: u64,
    reply: Option<String>,
    #[serde(default)]
    set: Map<String, Value>,
}

async fn fork_run(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    Body(request): Body<ForkRequest>,
) -> Result<Response, ApiError> {
    let run = settled_run(&server, &id).await?;
    if server.settings.replay.is_some() {
        return Err(ApiError::conflict(
            "replay_server",
            "this server serves every run from a recording (--replay): a fork, which goes live, cannot run here",
        ));
    }
    let target = locate(&server, &run, request.at).await?;
    let stop = match &request.reply {
        Some(_) => Stop::Reply(target.reply_count().ok_or_else(|| {
            ApiError::bad_request(format!(
                "reply: event {} is a {} event; a reply replaces a model call's (its model_request or model_response)",
                target.seq, target.kind
            ))
        })?),
        None => Stop::After(target.count),
    };
    let moment = moment::moment(&server, &run, &target, stop).await?;
    if let Some(name) = request.set.keys().next().filter(|_| moment.point.is_none()) {
        return Err(ApiError::bad_request(format!(
            "set.{name}: the run had no step left after event {}: there is nothing to go on with",
            target.seq
        )));
    }
    if let Some(point) = &moment.point {
        let scope = moment.scopes.iter().find(|s| s.thread == point.thread);
        for name in request.set.keys() {
            if !scope.is_some_and(|s| s.variables.contains_key(name)) {
                let known: Vec<&str> = scope.iter().flat_map(|s| s.variables.keys().map(String::as_str)).collect();
                return Err(ApiError::bad_request(format!(
                    "set.{name}: there is no variable ${name} at event {} (there: {})",
                    target.seq,
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                )));
            }
        }
    }
    let plan = fork::Plan {
        from_run: run.id.clone(),
        at: target.seq,
        journal: journal_path(&server, &run)?,
        point: moment.point.clone(),
        answers: moment.answered,
        reply: request.reply,
        set: request.set,
    };
    let new_id = uuid::Uuid::new_v4().to_string();
    let session = uuid::Uuid::new_v4().to_string();
    fork::save(&server.settings.state_dir, &new_id, &plan).map_err(replay_failed)?;
    let new = NewRun {
        id: &new_id,
        session: &session,
        workload: &run.workload,
        entry: run.entry.as_deref(),
        message: &run.message,
        model: run.model.as_deref(),
    };
    if let Err(refusal) = server.store.submit(&new, true).await {
        fork::discard(&server.settings.state_dir, &new_id);
        return Err(match refusal {
            Refusal::Sql(e) => e.into(),
            Refusal::SessionBusy(busy) => ApiError::conflict("session_busy", format!("run {busy} holds the session")),
        });
    }
    tracing::info!(run = %new_id, from = %run.id, at = target.seq, "fork queued");
    server.wake.notify_one();
    let body = json!({"id": new_id, "status": RunStatus::Queued, "session": session, "forked_from": {"run": run.id, "at": target.seq}});
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}
