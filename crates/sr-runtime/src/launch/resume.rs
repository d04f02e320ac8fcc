//! `sr run --resume SESSION`: which run of the session continues, with what
//! message, answers and journal.

use serde_json::json;

use super::{LaunchError, ResumeSpec};
use crate::journal::Recorded;
use crate::session::SessionStore;
use crate::state::StateDir;

/// The run a resumed run continues.
pub struct Resume {
    /// The message the run was started with.
    pub message: String,
    /// Answers to its `escalate to human`s, in order.
    pub answers: Vec<String>,
    /// Its journal: what it completed is served from it. With `--from`, it
    /// ends with a line that voids what was recorded from that step on.
    pub journal: String,
    /// The run it continues.
    pub run: i64,
}

/// The last run of the session, if it can be continued: paused for a human
/// (`input` is the answer), interrupted (its process died; no `input`), in
/// doubt about a tool call (no `input`: the launch's decider decides), or —
/// with `from` — any run that ended, to do again from that step on.
pub fn find(store: &SessionStore, state: &StateDir, spec: &ResumeSpec) -> Result<Resume, LaunchError> {
    let running = store.runs(&spec.session).is_ok_and(|runs| runs.last().is_some_and(|(_, s)| s == "running"));
    find_run(store, state, spec).map_err(if running { LaunchError::Busy } else { LaunchError::Refused })
}

fn find_run(store: &SessionStore, state: &StateDir, spec: &ResumeSpec) -> Result<Resume, String> {
    let ResumeSpec { session, input, from } = spec;
    let runs = store.runs(session).map_err(|e| format!("cannot read session {session}: {e}"))?;
    let Some((run, status)) = runs.last() else {
        return Err(format!("session {session} has no run to resume"));
    };
    let read_journal = || {
        let path = state.journal(session, *run).map_err(|e| e.to_string())?;
        std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read the journal of run {run} ({}): {e}", path.display()))
    };
    let recorded_start = |journal: &str| -> Result<(String, Vec<String>), String> {
        let recorded = Recorded::parse(journal).map_err(|e| format!("the journal of run {run}: {e}"))?;
        let meta = recorded
            .meta
            .ok_or_else(|| format!("the journal of run {run} of session {session} does not say how it started"))?;
        Ok((meta.input, meta.answers))
    };
    let with_from = |mut journal: String| {
        if let Some(from) = from {
            if !journal.is_empty() && !journal.ends_with('\n') {
                journal.push('\n');
            }
            journal.push_str(&json!({"kind": "fork", "from_step": from}).to_string());
            journal.push('\n');
        }
        journal
    };
    match (status.as_str(), input) {
        ("running", _) => Err(format!("run {run} of session {session} is still running")),
        ("paused", Some(input)) => {
            let pause = store
                .pause(session)
                .map_err(|e| format!("cannot read session {session}: {e}"))?
                .ok_or_else(|| format!("run {run} of session {session} is paused but its state is missing"))?;
            let mut answers = pause.answers;
            answers.push(input.clone());
            Ok(Resume { message: pause.input, answers, journal: with_from(read_journal()?), run: *run })
        }
        ("paused", None) if from.is_none() => {
            Err(format!("run {run} of session {session} is paused for a human: answer it with --input TEXT"))
        }
        (crate::in_doubt::STATUS, Some(_)) => Err(format!(
            "run {run} of session {session} waits for a decision about a tool call in doubt, not for a human: \
             resume it with --in-doubt retry|skip|fail, without --input"
        )),
        (_, Some(_)) => Err(format!(
            "run {run} of session {session} is {status}, not paused for a human: resume it without --input"
        )),
        ("interrupted" | crate::in_doubt::STATUS, None) => {
            let journal = read_journal()?;
            let (message, answers) = recorded_start(&journal)?;
            Ok(Resume { message, answers, journal: with_from(journal), run: *run })
        }
        (_, None) if from.is_some() => {
            let journal = read_journal()?;
            let (message, answers) = recorded_start(&journal)?;
            Ok(Resume { message, answers, journal: with_from(journal), run: *run })
        }
        (other, None) => Err(format!(
            "session {session} has nothing to resume: its last run ({run}) is {other}; \
             `--from STEP` runs it again from a step of its journal"
        )),
    }
}
