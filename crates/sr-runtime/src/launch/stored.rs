//! A run kept in a session: the conversation it continues, then its turn
//! and how it ended.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use sr_llm::Message;

use crate::event::{Emitter, EventSink, Payload, RunStatus};
use crate::lease::Lease;
use crate::run::RunOutcome;
use crate::session::{SessionStore, StoreError};

/// Why a session's conversation cannot be read back.
#[derive(Debug, thiserror::Error)]
pub(super) enum HistoryError {
    #[error("{0}")]
    Store(StoreError),
    #[error("a message of session {session} is not a conversation message: {source}")]
    NotAMessage { session: String, source: serde_json::Error },
}

/// A run reserved in a session, alive while its lease is held.
pub(super) struct StoredRun {
    pub session: SessionRun,
    pub journal: PathBuf,
    pub lease: Lease,
    /// Whether the session store keeps the run's events: not when a store of
    /// record does (`Storage::copies`, `sr serve`), which keeps each once.
    pub keeps_events: bool,
}

/// Run `run` of session `id`.
#[derive(Clone)]
pub(super) struct SessionRun {
    pub store: SessionStore,
    pub id: String,
    pub run: i64,
}

impl SessionRun {
    /// Stores each event of the run.
    pub fn sink(&self) -> Arc<dyn EventSink> {
        self.store.sink(&self.id, self.run)
    }

    /// The session's conversation so far; the session is running from now on.
    pub fn start(&self) -> Result<Vec<Message>, HistoryError> {
        let history = self.store.messages(&self.id).map_err(HistoryError::Store).and_then(|messages| {
            messages
                .into_iter()
                .map(serde_json::from_value::<Message>)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|source| HistoryError::NotAMessage { session: self.id.clone(), source })
        });
        let _ = self.store.set_status(&self.id, "running");
        history
    }

    /// Records the run's turn (`message` and its result, redacted) and how it
    /// ended. A run stopped `in_doubt` about a tool call has not finished its
    /// turn: it is recorded when the run, decided, continues (its requests
    /// must not see its own message twice).
    pub fn end(&self, emitter: &Emitter, message: String, outcome: &RunOutcome, in_doubt: bool) {
        let mut turn = vec![serde_json::to_value(Message::user(message)).unwrap_or(Value::Null)];
        if let Some(result) = &outcome.result {
            turn.push(serde_json::to_value(Message::assistant(crate::value::display(result))).unwrap_or(Value::Null));
        }
        let redactor = emitter.redactor();
        turn.iter_mut().for_each(|message| {
            redactor.redact_value(message);
        });
        if !in_doubt && let Err(e) = self.store.append_messages(&self.id, &turn) {
            emitter.emit(Payload::Warning { message: format!("cannot save the conversation: {e}") });
        }
        let (status, run_status) = match outcome.status {
            // Resumed like an interrupted run, its decider deciding.
            RunStatus::Paused if in_doubt => ("paused", crate::in_doubt::STATUS),
            RunStatus::Paused => ("paused", "paused"),
            RunStatus::Failed => ("failed", "failed"),
            RunStatus::Cancelled => ("failed", "cancelled"),
            RunStatus::Completed => ("open", "completed"),
        };
        let _ = self.store.set_run_status(&self.id, self.run, run_status);
        let _ = self.store.set_status(&self.id, status);
    }
}
