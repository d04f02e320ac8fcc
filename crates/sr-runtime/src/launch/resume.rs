//! `sr run --resume SESSION`: which run of the session continues, with what
//! message, answers and journal.

use std::path::PathBuf;

use serde_json::json;

use super::{LaunchError, ResumeSpec};
use crate::event::Payload;
use crate::ids::BadId;
use crate::journal::{ParseError, Recorded, cut_torn, torn_warning};
use crate::session::SessionStore;
use crate::state::StateDir;

/// Why a session's last run cannot be continued. `cause` is what the
/// session store or the journal's reader said.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("cannot read session {session}: {cause}")]
    Session { session: String, cause: String },
    #[error("session {0} has no run to resume")]
    NoRun(String),
    #[error("{0}")]
    BadSession(BadId),
    #[error("cannot read the journal of run {run} ({}): {source}", path.display())]
    ReadJournal { run: i64, path: PathBuf, source: std::io::Error },
    #[error("the journal of run {run} ({}): {cause}", path.display())]
    BadJournal { run: i64, path: PathBuf, cause: ParseError },
    #[error("the journal of run {run} of session {session} does not say how it started")]
    NoStart { run: i64, session: String },
    /// It started after `find` looked.
    #[error("run {run} of session {session} is still running")]
    StillRunning { run: i64, session: String },
    #[error("run {run} of session {session} is paused for a human: answer it with --input TEXT")]
    NeedsAnswer { run: i64, session: String },
    #[error(
        "run {run} of session {session} waits for a decision about a tool call in doubt, not for a human: \
         resume it with --in-doubt retry|skip|fail, without --input"
    )]
    InDoubt { run: i64, session: String },
    #[error("run {run} of session {session} is {status}, not paused for a human: resume it without --input")]
    NotPaused { run: i64, session: String, status: String },
    #[error(
        "session {session} has nothing to resume: its last run ({run}) is {status}; \
         `--from STEP` runs it again from a step of its journal"
    )]
    Nothing { session: String, run: i64, status: String },
}

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
    /// The work directory the run recorded (its journal's `meta`).
    pub work_dir: Option<String>,
    /// What was wrong with the journal and set right (a half-written last
    /// line dropped), for the user.
    pub warnings: Vec<String>,
}

/// The last run of the session, if it can be continued: paused for a human
/// (`input` is the answer), interrupted (its process died; no `input`, or
/// the answer when it died waiting for one), in doubt about a tool call (no
/// `input`: the launch's decider decides), or — with `from` — any run that
/// ended, to do again from that step on.
pub fn find(store: &SessionStore, state: &StateDir, spec: &ResumeSpec) -> Result<Resume, LaunchError> {
    let running = store.runs(&spec.session).ok().and_then(|runs| runs.last().filter(|(_, s)| s == "running").cloned());
    if let Some((run, _)) = running {
        return Err(LaunchError::Busy { session: spec.session.clone(), run });
    }
    find_run(store, state, spec).map_err(LaunchError::NotResumable)
}

fn find_run(store: &SessionStore, state: &StateDir, spec: &ResumeSpec) -> Result<Resume, ResumeError> {
    let ResumeSpec { session, input, from, .. } = spec;
    let runs =
        store.runs(session).map_err(|e| ResumeError::Session { session: session.clone(), cause: e.to_string() })?;
    let Some((run, status)) = runs.last() else {
        return Err(ResumeError::NoRun(session.clone()));
    };
    let (run, session) = (*run, session.clone());
    let path = state.journal(&session, run).map_err(ResumeError::BadSession)?;
    let mut warnings = Vec::new();
    let mut read_journal = || {
        let mut journal = std::fs::read_to_string(&path).map_err(|source| ResumeError::ReadJournal {
            run,
            path: path.clone(),
            source,
        })?;
        if let Some(line) = cut_torn(&mut journal) {
            warnings.push(torn_warning(&path.display().to_string(), line));
        }
        Ok::<_, ResumeError>(journal)
    };
    // How the run started, and the answers it was given: its journal's
    // `meta`, written before the run began, so that a run killed at any
    // instant (a pause included) can be continued.
    let recorded_start = |journal: &str| -> Result<(String, Vec<String>, Option<String>), ResumeError> {
        let recorded =
            Recorded::parse(journal).map_err(|cause| ResumeError::BadJournal { run, path: path.clone(), cause })?;
        let meta = recorded.meta.ok_or_else(|| ResumeError::NoStart { run, session: session.clone() })?;
        Ok((meta.input, meta.answers, meta.work_dir))
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
    let mut answered = |answer: &Option<String>| -> Result<Resume, ResumeError> {
        let journal = read_journal()?;
        let (message, mut answers, work_dir) = recorded_start(&journal)?;
        answers.extend(answer.iter().cloned());
        Ok(Resume { message, answers, journal: with_from(journal), run, work_dir, warnings: Vec::new() })
    };
    let resume = match (status.as_str(), input) {
        // It started after `find` looked.
        ("running", _) => Err(ResumeError::StillRunning { run, session: session.clone() }),
        ("paused", Some(_)) => answered(input),
        ("paused", None) if from.is_none() => Err(ResumeError::NeedsAnswer { run, session: session.clone() }),
        // Killed after it asked and before it was marked paused.
        ("interrupted", Some(_)) if waits_for_human(store, &session, run)? => answered(input),
        (crate::in_doubt::STATUS, Some(_)) => Err(ResumeError::InDoubt { run, session: session.clone() }),
        (_, Some(_)) => Err(ResumeError::NotPaused { run, session: session.clone(), status: status.clone() }),
        ("interrupted" | crate::in_doubt::STATUS, None) => answered(&None),
        (_, None) if from.is_some() => answered(&None),
        (other, None) => Err(ResumeError::Nothing { session: session.clone(), run, status: other.to_string() }),
    };
    resume.map(|resume| Resume { warnings, ..resume })
}

/// Whether run `run` of `session` asked a human last and got no answer
/// (its stored events say so: each is saved before anyone sees it).
fn waits_for_human(store: &SessionStore, session: &str, run: i64) -> Result<bool, ResumeError> {
    let events = store
        .events(session)
        .map_err(|e| ResumeError::Session { session: session.to_string(), cause: e.to_string() })?;
    let mut waiting = false;
    for (_, event) in events.iter().filter(|(of, _)| *of == run) {
        match &event.payload {
            Payload::HumanInputRequested { .. } => waiting = true,
            Payload::StateChange { variable, .. } if variable == "human_input" => waiting = false,
            _ => {}
        }
    }
    Ok(waiting)
}
