//! A replica's state directory is a cache of the store: what the runtime
//! keeps of a session (its `sessions.db` rows, its journals) is taken from
//! the store's record before a claimed run starts, and what the run's
//! attempt changed is stored with the run's end (`Ending::recording`). So a
//! session's next run, an answer to a run's question or a decision about a
//! call in doubt continues on any replica, and an emptied state directory
//! loses nothing that ended.

use std::path::Path;

use sr_runtime::state::StateDir;

use crate::Server;
use crate::store::{Record, RunRow};

/// Brings the state directory up to what the store holds of `run`'s
/// session, before the run starts; keeps what the cache has that the record
/// lacks (an attempt this replica made and has not stored yet). A run whose
/// last attempt is neither cached nor recorded (made on a replica that died
/// before storing it) cannot be continued here: an error says so.
pub async fn hydrate(server: &Server, run: &RunRow) -> Result<(), String> {
    let record =
        server.store.record(&run.session).await.map_err(|e| format!("cannot read the session's record: {e}"))?;
    server
        .sessions
        .restore(&run.session, &run.workload, &record.messages, &record.attempts)
        .map_err(|e| format!("cannot cache the session's record: {e}"))?;
    let state = StateDir { dir: server.settings.state_dir.clone() };
    for (attempt, lines) in &record.journals {
        let path = state.journal(&run.session, *attempt).map_err(|e| e.to_string())?;
        if cached_lines(&path) < lines.len() {
            let text = record.journal_text(*attempt).unwrap_or_default();
            write(&path, &text).map_err(|e| format!("cannot cache the journal of attempt {attempt}: {e}"))?;
        }
    }
    if let Some(attempt) = run.attempt_run {
        let cached = server.sessions.runs(&run.session).map_err(|e| format!("cannot read the session's runs: {e}"))?;
        if !cached.iter().any(|(n, _)| *n == attempt) {
            return Err(format!(
                "attempt {attempt} of run {} was made on another replica that stopped before it stored its \
                 journal (a journal is stored when its attempt ends or pauses): it cannot be continued here",
                run.id
            ));
        }
    }
    Ok(())
}

/// The session as attempt `attempt` left it in the cache, to store with the
/// run's end: its conversation, its attempts (one still marked running has
/// stopped: the run's task is over) and the attempt's journal.
pub fn collect(server: &Server, session: &str, attempt: Option<i64>) -> Result<Record, String> {
    let messages = server.sessions.messages(session).map_err(|e| format!("cannot read the session's messages: {e}"))?;
    let mut attempts =
        server.sessions.run_lineage(session).map_err(|e| format!("cannot read the session's runs: {e}"))?;
    for attempt in attempts.iter_mut().filter(|a| a.status == "running") {
        attempt.status = "interrupted".to_string();
    }
    let mut journals = Vec::new();
    if let Some(attempt) = attempt {
        let state = StateDir { dir: server.settings.state_dir.clone() };
        let path = state.journal(session, attempt).map_err(|e| e.to_string())?;
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("cannot read the journal of attempt {attempt}: {e}"))?;
        journals.push((attempt, text.lines().map(str::to_string).collect()));
    }
    Ok(Record { session: session.to_string(), messages, attempts, journals })
}

fn cached_lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

/// Writes `text` whole or not at all (a temporary file renamed over `path`).
fn write(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("a journal path has a directory"))?;
    std::fs::create_dir_all(dir)?;
    let temporary = path.with_extension("jsonl.part");
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)
}
