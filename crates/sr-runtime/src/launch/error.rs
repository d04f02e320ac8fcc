//! Why a run could not be launched, or its end not kept.

use std::path::PathBuf;

use crate::ids::BadId;
use crate::journal::{JournalError, ParseError};

/// One variant per way a launch fails, each one line for the user. A front
/// end picks its answer from the variant: `sr serve` waits while a run is
/// [`Busy`](LaunchError::Busy) and replays a run [`NotResumable`](LaunchError::NotResumable)
/// whose last attempt ended unrecorded.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// A session id that cannot name a file (`crate::ids`).
    #[error(transparent)]
    BadId(#[from] BadId),
    /// The recording to replay cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    UnreadableRecording { path: PathBuf, source: std::io::Error },
    /// A recording, or the journal a run continues, that is not a journal.
    #[error("cannot read the recording: {0}")]
    BadRecording(#[from] ParseError),
    /// A recording whose MCP tool lists cannot be read.
    #[error("cannot read the recording: {0}")]
    BadMcpRecording(#[from] sr_mcp::RecordingError),
    /// A replay given another input than its recording's: it would follow
    /// another path than the recorded run.
    #[error(
        "the run diverged from its journal: the input differs from the recording's: recorded {}, requested {} \
         (leave the prompt out to replay the recorded one)",
        serde_json::Value::from(recorded.as_str()),
        serde_json::Value::from(requested.as_str())
    )]
    InputDiffers { recorded: String, requested: String },
    /// An entry other than the one the recorded run started at.
    #[error(
        "the recorded run started {}: --entry {given} cannot change that (leave it out)",
        recorded.as_deref().map_or("at its default entry".to_string(), |e| format!("at '{e}'"))
    )]
    EntryDiffers { recorded: Option<String>, given: String },
    /// A resumed run named another work directory than the one it ran in,
    /// which still exists: its files are there.
    #[error(
        "the run worked in {} and --work-dir names {}: a resumed run continues on its own files \
         (leave --work-dir out, or move or remove the recorded directory to continue elsewhere)",
        recorded.display(),
        given.display()
    )]
    WorkDirDiffers { recorded: PathBuf, given: PathBuf },
    /// A resumed run named no work directory, and the one it ran in is gone.
    #[error(
        "the run worked in {}, which no longer exists: name the directory to continue in with --work-dir",
        recorded.display()
    )]
    WorkDirGone { recorded: PathBuf },
    /// The work directory cannot be opened.
    #[error("bad work directory {}: {source}", path.display())]
    BadWorkDir { path: PathBuf, source: std::io::Error },
    /// A run that continues a recording goes live where it ends: it cannot
    /// be a replay too.
    #[error("a run that goes back in time goes live: it cannot be served from a recording")]
    ReplayContinued,
    /// The journal of the run to continue cannot be read.
    #[error("cannot read the journal of run {run} ({}): {source}", path.display())]
    UnreadableJournal { run: String, path: PathBuf, source: std::io::Error },
    /// The session's last run cannot be continued as asked (`launch::resume`
    /// says why: nothing to resume, an answer missing or not wanted).
    #[error("{0}")]
    NotResumable(super::resume::ResumeError),
    /// The run to continue is still running.
    #[error("run {run} of session {session} is still running")]
    Busy { session: String, run: i64 },
    /// The sessions database cannot be opened or read.
    #[error("cannot open {}: {source}", path.display())]
    Sessions { path: PathBuf, source: rusqlite::Error },
    /// The session, or its next run, cannot be stored.
    #[error("cannot start a run of session {session}: {source}")]
    Reserve { session: String, source: rusqlite::Error },
    /// The run's lease cannot be taken.
    #[error("cannot take the run's lease: {0}")]
    Lease(std::io::Error),
    /// The run's journal cannot be written, or its files put back.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Events of the run were not saved in its session.
    #[error("{count} event(s) of the run were not saved: {first}")]
    EventsLost { count: usize, first: String },
}
