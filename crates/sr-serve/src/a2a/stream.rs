//! `SendStreamingMessage`/`message/stream` and
//! `SubscribeToTask`/`tasks/resubscribe`: Server-Sent Events whose data are
//! JSON-RPC responses: first the task, then a status update at each change
//! of its run's status (and the result and the files the run wrote as
//! artifact updates before `completed`). The stream ends when the task has ended or waits for input,
//! or the server stops. It follows the run's row, woken by the run's change
//! channel as API v1's event streams are.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::methods::{Call, question};
use super::rpc::{self, RpcError};
use super::shapes;
use crate::store::RunStatus;

struct Follow {
    call: Call,
    rpc_id: Value,
    task: String,
    /// The status last reported.
    last: RunStatus,
    pending: VecDeque<Value>,
    done: bool,
}

/// The stream of task `task`, starting with the task as it is now.
pub async fn respond(call: Call, rpc_id: Value, task: &str) -> Result<Response, RpcError> {
    let run = call.find(task).await?;
    let first = shapes::wrapped(call.version, "task", call.task(&run, usize::MAX).await?);
    let follow = Follow {
        done: run.status.is_stopped(),
        call,
        rpc_id,
        task: task.to_string(),
        last: run.status,
        pending: VecDeque::from([first]),
    };
    let events = futures::stream::unfold(follow, |mut follow| async move {
        let result = follow.next().await?;
        let data = rpc::success(&follow.rpc_id, result).to_string();
        Some((Ok::<_, Infallible>(Event::default().data(data)), follow))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()).into_response())
}

impl Follow {
    async fn next(&mut self) -> Option<Value> {
        let server = self.call.server.clone();
        let mut closing = server.closing.subscribe();
        loop {
            if let Some(next) = self.pending.pop_front() {
                return Some(next);
            }
            if self.done || *closing.borrow() {
                return None;
            }
            // Subscribed before reading: a change after the read wakes us.
            let mut changes = server.subscribe(&self.task);
            let run = match server.store.run(&self.task).await {
                Ok(Some(run)) => run,
                Ok(None) => return None,
                Err(error) => {
                    tracing::error!(%error, "cannot read a task's run");
                    return None;
                }
            };
            if run.status != self.last {
                let version = self.call.version;
                let view = match self.call.view(&run, 0, true, true).await {
                    Ok(view) => view,
                    Err(error) => {
                        tracing::error!(error = %error.message, "cannot read what a task shows");
                        return None;
                    }
                };
                for artifact in shapes::artifacts(&run, version, &view) {
                    let update = shapes::artifact_update(&run, version, artifact);
                    self.pending.push_back(shapes::wrapped(version, "artifactUpdate", update));
                }
                let asked = if run.status == RunStatus::Paused { question(&server, &run.id).await } else { None };
                let update = shapes::status_update(&run, version, asked.as_deref());
                self.pending.push_back(shapes::wrapped(version, "statusUpdate", update));
                self.done = run.status.is_stopped();
                self.last = run.status;
                continue;
            }
            tokio::select! {
                _ = changes.changes.changed() => {}
                _ = closing.changed() => {}
                () = tokio::time::sleep(Duration::from_secs(5)) => {}
            }
        }
    }
}
