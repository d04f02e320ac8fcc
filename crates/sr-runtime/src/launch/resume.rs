//! `sr run --resume SESSION`: which run of the session continues, with what
//! message, answers and journal.

use crate::record::recorded_input;
use crate::session::SessionStore;
use crate::state::StateDir;

/// The run a resumed run continues.
pub struct Resume {
    /// The message the run was started with.
    pub message: String,
    /// Answers to its `escalate to human`s, in order.
    pub answers: Vec<String>,
    /// Its journal: completed model calls and tool calls are served from it.
    pub journal: String,
}

/// The last run of `session`, if it can be continued: paused for a human
/// (`input` is the answer) or interrupted (its process died; no `input`).
pub fn find(store: &SessionStore, state: &StateDir, session: &str, input: Option<&str>) -> Result<Resume, String> {
    let runs = store.runs(session).map_err(|e| format!("cannot read session {session}: {e}"))?;
    let Some((run, status)) = runs.last() else {
        return Err(format!("session {session} has no run to resume"));
    };
    let read_journal = || {
        let path = state.journal(session, *run).map_err(|e| e.to_string())?;
        std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read the journal of run {run} ({}): {e}", path.display()))
    };
    match status.as_str() {
        "paused" => {
            let input = input.ok_or_else(|| {
                format!("run {run} of session {session} is paused for a human: answer it with --input TEXT")
            })?;
            let pause = store
                .pause(session)
                .map_err(|e| format!("cannot read session {session}: {e}"))?
                .ok_or_else(|| format!("run {run} of session {session} is paused but its state is missing"))?;
            let mut answers = pause.answers;
            answers.push(input.to_string());
            Ok(Resume { message: pause.input, answers, journal: read_journal()? })
        }
        "interrupted" => {
            if input.is_some() {
                return Err(format!(
                    "run {run} of session {session} was interrupted, not paused for a human: resume it without --input"
                ));
            }
            let journal = read_journal()?;
            let (message, answers) = recorded_input(&journal)
                .ok_or_else(|| format!("the journal of run {run} of session {session} does not say how it started"))?;
            Ok(Resume { message, answers, journal })
        }
        "running" => Err(format!("run {run} of session {session} is still running")),
        other => Err(format!("session {session} has nothing to resume: its last run ({run}) is {other}")),
    }
}
