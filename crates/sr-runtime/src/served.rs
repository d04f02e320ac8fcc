//! A served run's status (`sr serve`): the one vocabulary its store, its API
//! (v1, A2A) and its clients (`sr eval --server`) use. The runtime names a
//! run's end in its own words (`event::RunStatus`, and the session store's
//! `completed`, `interrupted`…); [`RunStatus::from_runtime`] and
//! [`RunStatus::of_attempt`] are the only translations between the two.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::event;

/// Where a served run is: waiting in the queue, running, waiting for a human
/// (`paused`, `in_doubt`), or ended (`done`, `failed`, `cancelled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Queued,
    Running,
    /// Waiting for the answer to an `escalate to human`.
    Paused,
    /// Stopped at a tool call cut off by a crash; waits for a decision.
    InDoubt,
    Done,
    Failed,
    Cancelled,
}

impl RunStatus {
    /// Every status, in the order a run goes through them.
    pub const ALL: [RunStatus; 7] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Paused,
        RunStatus::InDoubt,
        RunStatus::Done,
        RunStatus::Failed,
        RunStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Paused => "paused",
            RunStatus::InDoubt => "in_doubt",
            RunStatus::Done => "done",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }

    /// Done, failed or cancelled: nothing more happens to the run.
    pub fn is_ended(self) -> bool {
        matches!(self, RunStatus::Done | RunStatus::Failed | RunStatus::Cancelled)
    }

    /// Ended, or waiting for a human (paused, in doubt): the run goes no
    /// further on its own.
    pub fn is_stopped(self) -> bool {
        self.is_ended() || matches!(self, RunStatus::Paused | RunStatus::InDoubt)
    }

    /// The served status of a run the runtime ended with `status`.
    pub fn from_runtime(status: event::RunStatus) -> RunStatus {
        match status {
            event::RunStatus::Completed => RunStatus::Done,
            event::RunStatus::Failed => RunStatus::Failed,
            event::RunStatus::Paused => RunStatus::Paused,
            event::RunStatus::Cancelled => RunStatus::Cancelled,
        }
    }

    /// The status a `run_finished` event of a run that stopped in this
    /// status says (`None`: queued and running are no end).
    pub fn to_runtime(self) -> Option<event::RunStatus> {
        match self {
            RunStatus::Queued | RunStatus::Running => None,
            RunStatus::Paused | RunStatus::InDoubt => Some(event::RunStatus::Paused),
            RunStatus::Done => Some(event::RunStatus::Completed),
            RunStatus::Failed => Some(event::RunStatus::Failed),
            RunStatus::Cancelled => Some(event::RunStatus::Cancelled),
        }
    }

    /// The served status of a run of the runtime's session store
    /// (`session::SessionStore::runs`): `None` for `interrupted` (the
    /// process running it died) and any status it does not know.
    pub fn of_attempt(status: &str) -> Option<RunStatus> {
        match status {
            "running" => Some(RunStatus::Running),
            "completed" => Some(RunStatus::Done),
            "failed" => Some(RunStatus::Failed),
            "paused" => Some(RunStatus::Paused),
            crate::in_doubt::STATUS => Some(RunStatus::InDoubt),
            _ => None,
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that names no status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStatus(pub String);

impl fmt::Display for UnknownStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = RunStatus::ALL.iter().map(|s| s.as_str()).collect();
        write!(f, "{:?} is not a run status (one of {})", self.0, known.join(", "))
    }
}

impl std::error::Error for UnknownStatus {}

impl FromStr for RunStatus {
    type Err = UnknownStatus;

    fn from_str(text: &str) -> Result<RunStatus, UnknownStatus> {
        RunStatus::ALL.into_iter().find(|s| s.as_str() == text).ok_or_else(|| UnknownStatus(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_reads_back_from_its_name_and_its_json() {
        for status in RunStatus::ALL {
            assert_eq!(status.to_string().parse::<RunStatus>(), Ok(status));
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{status}\""));
            assert_eq!(serde_json::from_str::<RunStatus>(&json).unwrap(), status);
        }
        assert!("completed".parse::<RunStatus>().unwrap_err().to_string().contains("done"));
    }

    #[test]
    fn the_runtime_words_map_to_the_served_ones() {
        assert_eq!(RunStatus::from_runtime(event::RunStatus::Completed), RunStatus::Done);
        for status in RunStatus::ALL.into_iter().filter(|s| s.is_ended()) {
            assert_eq!(status.to_runtime().map(RunStatus::from_runtime), Some(status));
        }
        assert_eq!(RunStatus::InDoubt.to_runtime(), Some(event::RunStatus::Paused));
        assert_eq!(RunStatus::Running.to_runtime(), None);
        assert_eq!(RunStatus::of_attempt("completed"), Some(RunStatus::Done));
        assert_eq!(RunStatus::of_attempt(crate::in_doubt::STATUS), Some(RunStatus::InDoubt));
        assert_eq!(RunStatus::of_attempt("interrupted"), None);
        let ended: Vec<RunStatus> = RunStatus::ALL.into_iter().filter(|s| s.is_ended()).collect();
        assert_eq!(ended, [RunStatus::Done, RunStatus::Failed, RunStatus::Cancelled]);
    }
}
