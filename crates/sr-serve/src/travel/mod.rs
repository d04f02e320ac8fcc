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

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use sr_api::travel::{ForkRequest, Forked};
use sr_runtime::journal::Recorded;

use crate::Server;
use crate::error::{ApiError, Body};
use crate::route::{Access, Route};
use crate::store::{NewRun, Refusal, RunRow, RunStatus};
use moment::Stop;
use target::Target;

pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::new(Access::Keyed, Method::GET, "/v1/runs/{id}/at/{seq}", at),
        Route::new(Access::Keyed, Method::POST, "/v1/runs/{id}/fork", fork_run),
    ]
}

/// A replay that failed on the server's side, with why (no secret is in it:
/// it names events, files and journal lines; no path of the server's is).
pub(crate) fn replay_failed(message: impl Into<String>) -> ApiError {
    let message = message.into();
    tracing::error!(%message, "a travel's replay failed");
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "replay_failed", message)
}

/// A replay that failed on a file of the server's: `message` for the
/// client, the path only in the log.
pub(crate) fn file_failed(message: impl Into<String>, path: &std::path::Path) -> ApiError {
    let message = message.into();
    tracing::error!(%message, path = %path.display(), "a travel's replay failed");
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "replay_failed", message)
}

/// The run's journal: the one its last attempt wrote, from the store (any
/// replica may have written it).
pub(crate) async fn journal_of(server: &Server, run: &RunRow) -> Result<String, ApiError> {
    let attempt = attempt_of(run)?;
    let record = server.store.record(&run.session).await?;
    record
        .journal_text(attempt)
        .ok_or_else(|| replay_failed(format!("the journal of run {} (attempt {attempt}) is not in the store", run.id)))
}

/// Runs `work` (a travel: locating its event among the run's stored events
/// and replaying the run there, seconds of CPU on a long run) on a blocking
/// thread, so that it never holds an async worker and `/healthz` with it;
/// at most [`crate::Config::travels`] at once: past that, 503 `busy` with
/// `Retry-After`. `work` is given the server's runtime (for the store) and
/// replays on a runtime of its own thread (`replay`).
async fn off_workers<T, F>(server: &Arc<Server>, work: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&Server, &tokio::runtime::Handle) -> Result<T, ApiError> + Send + 'static,
{
    let Ok(permit) = server.travel_permits.clone().try_acquire_owned() else {
        let mut busy = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            format!("{} time travels are being replayed: try again shortly", server.settings.travels),
        );
        busy.retry_after = Some(1);
        return Err(busy);
    };
    let (server, main) = (server.clone(), tokio::runtime::Handle::current());
    let travel = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        work(&server, &main)
    });
    travel.await.map_err(|e| replay_failed(format!("the replay stopped: {e}")))?
}

/// [`moment::moment`] on a runtime of the calling (blocking) thread: the
/// tasks the replay spawns stay on it. The run's journal is read from the
/// store on `main`, the server's runtime, whose connections the store's are.
fn replay(
    server: &Server,
    main: &tokio::runtime::Handle,
    run: &RunRow,
    target: &Target,
    stop: Stop,
) -> Result<moment::Moment, ApiError> {
    let journal = main.block_on(journal_of(server, run))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| replay_failed(format!("cannot start the replay: {e}")))?;
    runtime.block_on(moment::moment(server, run, &journal, target, stop))
}

/// The runtime's attempt whose journal is the run's.
fn attempt_of(run: &RunRow) -> Result<i64, ApiError> {
    run.attempt_run
        .ok_or_else(|| ApiError::conflict("never_started", format!("run {} never started: it has no journal", run.id)))
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
    let moment = off_workers(&server, move |server, main| {
        let target = main.block_on(locate(server, &run, seq)).map_err(|e| renamed(e, "at: ", "seq: "))?;
        replay(server, main, &run, &target, Stop::After(target.count))
    })
    .await?;
    Ok(Json(moment.wire()).into_response())
}

/// The same error with its field named as the request names it.
fn renamed(mut error: ApiError, from: &str, to: &str) -> ApiError {
    if let Some(rest) = error.message.strip_prefix(from) {
        error.message = format!("{to}{rest}");
    }
    error
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
    let (at, replaces) = (request.at, request.reply.is_some());
    let travelled = run.clone();
    let (target, moment) = off_workers(&server, move |server, main| {
        let run = travelled;
        let target = main.block_on(locate(server, &run, at))?;
        let stop = match replaces {
            true => Stop::Reply(target.reply_count().ok_or_else(|| {
                ApiError::bad_request(format!(
                    "reply: event {} is a {} event; a reply replaces a model call's (its model_request or model_response)",
                    target.seq, target.kind
                ))
            })?),
            false => Stop::After(target.count),
        };
        let moment = replay(server, main, &run, &target, stop)?;
        Ok((target, moment))
    })
    .await?;
    if let Some(name) = request.set.keys().next().filter(|_| moment.point.is_none()) {
        return Err(ApiError::bad_request(format!(
            "set.{name}: the run had no step left after event {}: there is nothing to go on with",
            target.seq
        )));
    }
    if let Some(point) = &moment.point {
        let scope = moment.scopes.iter().find(|s| s.key == point.thread).map(|s| &s.shown);
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
        from_session: run.session.clone(),
        from_attempt: attempt_of(&run)?,
        point: moment.point.clone(),
        answers: moment.answered,
        reply: request.reply,
        set: request.set,
    };
    let forked_from = plan.origin();
    let new_id = uuid::Uuid::new_v4().to_string();
    let session = uuid::Uuid::new_v4().to_string();
    fork::save(&server.store, &new_id, &plan).await.map_err(|e| {
        tracing::error!(error = %e, "cannot save a fork's plan");
        replay_failed("cannot save the fork's plan; see the server's log")
    })?;
    let new = NewRun {
        id: &new_id,
        session: &session,
        workload: &run.workload,
        entry: run.entry.as_deref(),
        message: &run.message,
        model: run.model.as_deref(),
        a2a: false,
    };
    if let Err(refusal) = server.store.submit(&new, true).await {
        fork::discard(&server.store, &new_id).await;
        return Err(match refusal {
            Refusal::Sql(e) => e.into(),
            Refusal::SessionBusy(busy) => ApiError::conflict("session_busy", format!("run {busy} holds the session")),
        });
    }
    tracing::info!(run = %new_id, from = %run.id, at = target.seq, "fork queued");
    server.wake.notify_one();
    let body = Forked { id: new_id, status: RunStatus::Queued, session, forked_from };
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}
