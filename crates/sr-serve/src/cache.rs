//! A replica's state directory is a cache of the store: what the runtime
//! keeps of a session (its `sessions.db` rows, its journals) is taken from
//! the store's record before a claimed run starts; the run's journal is
//! copied to the store as it is written (`copies`), and its conversation
//! and attempts are stored with the run's end (`Ending::recording`). So a
//! session's next run, an answer to a run's question, a decision about a
//! call in doubt or a run a dead replica left continues on any replica, and
//! an emptied state directory loses nothing the store holds.

use std::path::Path;

use sr_runtime::ids::BadId;
use sr_runtime::state::StateDir;

use crate::Server;
use crate::store::{Record, RunRow, StoreError};

/// Why the state directory cannot take, or give back, a session's record.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("cannot read the session's record: {0}")]
    Record(#[source] StoreError),
    #[error("cannot cache the session's record: {0}")]
    Restore(#[source] rusqlite::Error),
    /// A session id in the store that cannot name a file.
    #[error(transparent)]
    BadId(#[from] BadId),
    #[error("cannot cache the journal of attempt {attempt}: {source}")]
    Journal { attempt: i64, source: std::io::Error },
    #[error("cannot read the session's runs: {0}")]
    Runs(#[source] rusqlite::Error),
    #[error("cannot read the session's messages: {0}")]
    Messages(#[source] sr_runtime::session::StoreError),
    /// The run's last attempt is neither cached here nor in the store.
    #[error(
        "attempt {attempt} of run {run} is not in the store (its replica stopped before the attempt's \
         journal began): it cannot be continued here"
    )]
    NotStored { attempt: i64, run: String },
}

/// Brings the state directory up to what the store holds of `run`'s
/// session, before the run starts; keeps what the cache has that the record
/// lacks. A run whose last attempt is neither cached nor recorded cannot be
/// continued here: an error says so.
pub async fn hydrate(server: &Server, run: &RunRow) -> Result<(), CacheError> {
    let mut record = server.store.record(&run.session).await.map_err(CacheError::Record)?;
    // This replica holds the claim now: an attempt the store shows running
    // was a replica's that stopped (the cache keeps its own running ones,
    // which the runtime tells by their leases).
    for attempt in record.attempts.iter_mut().filter(|a| a.status == "running") {
        attempt.status = "interrupted".to_string();
    }
    server
        .sessions
        .restore(&run.session, &run.workload, &record.messages, &record.attempts)
        .map_err(CacheError::Restore)?;
    let state = StateDir { dir: server.settings.state_dir.clone() };
    for (attempt, lines) in &record.journals {
        let path = state.journal(&run.session, *attempt)?;
        if cached_lines(&path) < lines.len() {
            let text = record.journal_text(*attempt).unwrap_or_default();
            write(&path, &text).map_err(|source| CacheError::Journal { attempt: *attempt, source })?;
        }
    }
    if let Some(attempt) = run.attempt_run {
        let cached = server.sessions.runs(&run.session).map_err(CacheError::Runs)?;
        if !cached.iter().any(|(n, _)| *n == attempt) {
            return Err(CacheError::NotStored { attempt, run: run.id.clone() });
        }
    }
    Ok(())
}

/// The session as the run's attempt left it in the cache, to store with the
/// run's end: its conversation and its attempts (one still marked running
/// has stopped: the run's task is over). Its journal is in the store already.
pub fn collect(server: &Server, session: &str) -> Result<Record, CacheError> {
    let messages = server.sessions.messages(session).map_err(CacheError::Messages)?;
    let mut attempts = server.sessions.run_lineage(session).map_err(CacheError::Runs)?;
    for attempt in attempts.iter_mut().filter(|a| a.status == "running") {
        attempt.status = "interrupted".to_string();
    }
    Ok(Record { session: session.to_string(), messages, attempts, journals: Vec::new() })
}

fn cached_lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

/// Writes `text` whole or not at all (a temporary file renamed over `path`).
fn write(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("a journal's path names no directory"))?;
    std::fs::create_dir_all(dir)?;
    let temporary = path.with_extension("jsonl.part");
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)
}
