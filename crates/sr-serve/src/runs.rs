//! What API v1 and A2A both do to runs: queue one, wait for its end, cancel
//! it, answer it. Each keeps the store's rules (one active run per session,
//! status guards) and wakes the dispatcher and the run's watchers.

use std::sync::Arc;

use sr_runtime::in_doubt::Decision;

use axum::http::StatusCode;

use crate::Server;
use crate::error::ApiError;
use crate::store::{Ending, NewRun, Refusal, RunRow, RunStatus};

/// Queues `new` (with `reject`, refused while its session has a run in
/// progress: 409 `session_busy`) and wakes the dispatcher.
pub(crate) async fn queue(server: &Server, new: &NewRun<'_>, reject: bool) -> Result<(), ApiError> {
    within_quota(server, new.session, new.message.len()).await?;
    match server.store.submit(new, reject).await {
        Ok(()) => {}
        Err(Refusal::SessionBusy(busy)) => {
            return Err(ApiError::conflict(
                "session_busy",
                format!(
                    "session {} has run {busy} in progress (on_conflict: \"enqueue\" queues after it)",
                    new.session
                ),
            ));
        }
        Err(Refusal::Sql(e)) => return Err(e.into()),
    }
    tracing::info!(run = %new.id, session = %new.session, workload = %new.workload, "run queued");
    server.wake.notify_one();
    Ok(())
}

/// Refuses (413 `session_full`) `adding` bytes of input to `session` when
/// its runs' messages and pending answers would pass the quota.
async fn within_quota(server: &Server, session: &str, adding: usize) -> Result<(), ApiError> {
    let quota = server.settings.session_quota;
    let stored: usize = if adding > quota {
        0
    } else {
        let runs = server.store.session_runs(session).await?;
        runs.iter().map(|run| run.message.len() + run.pending_input.as_ref().map_or(0, String::len)).sum()
    };
    if stored.saturating_add(adding) > quota {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "session_full",
            format!(
                "session {session} holds {stored} bytes of input and this adds {adding}:                  a session stores at most {quota} (start a new session)"
            ),
        ));
    }
    Ok(())
}

/// The run once it has ended or paused (or the server stops), read again
/// after each change of its status (not after each batch of its events).
pub(crate) async fn wait_for_end(server: &Arc<Server>, id: &str) -> Result<RunRow, ApiError> {
    let mut closing = server.closing.subscribe();
    loop {
        let mut changes = server.subscribe(id);
        let row = server.store.run(id).await?.ok_or_else(|| ApiError::not_found(format!("no run {id}")))?;
        if row.status.is_stopped() || *closing.borrow() {
            return Ok(row);
        }
        tokio::select! {
            () = changes.status_changed() => {}
            _ = closing.changed() => {}
            () = tokio::time::sleep(std::time::Duration::from_secs(5)) => {}
        }
    }
}

/// What a cancel did (`POST /v1/runs/{id}/cancel` answers its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cancel {
    /// The run was not running: it is `cancelled` now.
    Cancelled,
    /// The run's task is being stopped; its status becomes `cancelled` then.
    Cancelling,
}

impl Cancel {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Cancel::Cancelled => RunStatus::Cancelled.as_str(),
            Cancel::Cancelling => "cancelling",
        }
    }
}

/// Cancels run `id`: cancelled at once unless it is running (cancelling:
/// its task is stopped, here or on the replica running it); an ended run is
/// 409 `run_ended`.
pub(crate) async fn cancel_run(server: &Server, id: &str) -> Result<Cancel, ApiError> {
    loop {
        let row = server.find_run(id).await?;
        let status = match row.status {
            RunStatus::Queued | RunStatus::Paused | RunStatus::InDoubt => {
                let ending =
                    Ending::new(RunStatus::Cancelled, None, Some("cancelled by request".to_string()), Vec::new(), "");
                if !server.store.finish(id, row.status, &ending).await? {
                    // It moved meanwhile (claimed, answered): cancel what it is now.
                    continue;
                }
                server.status_changed(id);
                server.wake.notify_one();
                Cancel::Cancelled
            }
            RunStatus::Running => {
                server.cancel_task(id);
                // Another replica may be running it.
                server.store.request_cancel(id).await?;
                Cancel::Cancelling
            }
            ended => {
                return Err(ApiError::conflict(
                    "run_ended",
                    format!("run {id} has ended ({ended}): nothing to cancel"),
                ));
            }
        };
        tracing::info!(run = %id, status = status.as_str(), "cancel asked");
        return Ok(status);
    }
}

/// Gives paused run `id` the answer it waits for and queues it again; a run
/// in doubt takes `text` as its decision (`retry`, `skip` or `fail`); a run
/// in any other status is 409 `not_waiting`.
pub(crate) async fn answer(server: &Server, id: &str, text: &str) -> Result<(), ApiError> {
    let row = server.find_run(id).await?;
    if row.status == RunStatus::InDoubt {
        let decision = text.trim().parse::<Decision>().map_err(|e| ApiError::bad_request(format!("text: {e}")))?;
        return decide(server, id, decision).await;
    }
    if row.status != RunStatus::Paused {
        return Err(ApiError::conflict(
            "not_waiting",
            format!("run {id} is {}: only a run paused by `escalate to human` takes input", row.status),
        ));
    }
    within_quota(server, &row.session, text.len()).await?;
    if !server.store.answer(id, text).await? {
        return Err(ApiError::conflict("not_waiting", format!("run {id} is no longer paused")));
    }
    server.status_changed(id);
    server.wake.notify_one();
    Ok(())
}

/// Gives run `id`, in doubt about a tool call, its decision and queues it
/// again; a run in any other status is 409 `not_in_doubt`.
pub(crate) async fn decide(server: &Server, id: &str, decision: Decision) -> Result<(), ApiError> {
    let row = server.find_run(id).await?;
    if row.status != RunStatus::InDoubt || !server.store.decide(id, decision.as_str()).await? {
        let status = if row.status == RunStatus::InDoubt { "no longer in doubt" } else { row.status.as_str() };
        return Err(ApiError::conflict(
            "not_in_doubt",
            format!("run {id} is {status}: only a run in doubt about a tool call takes a decision"),
        ));
    }
    tracing::info!(run = %id, decision = decision.as_str(), "decision taken about a call in doubt");
    server.status_changed(id);
    server.wake.notify_one();
    Ok(())
}
