//! A coding agent's steps through the journal. A step is a tool call named
//! `CODE_STEP` (`tool_start` and `tool` lines): its arguments are the
//! agent, the step's number and its code; its result is what the step did
//! (output, outcome, the calls it made) and its files the work directory's
//! changes while it ran. The tool calls the code made are effects of their
//! own, numbered after the step's. A served step runs nothing: the runtime
//! makes its calls again through the journal (served too), then puts the
//! files as the step left them ([`Journal::settle_code`]).

use std::collections::HashMap;

use serde_json::{Value, json};

use super::entry::TOOL_KIND;
use super::files::{Change, State};
use super::{CODE_STEP, Effect, EffectAt, Journal, JournalError, Mode, RestoreError};

impl Journal {
    /// Where the thread goes on after the step at `at`, cut off and not run
    /// again: past the effects its code made before the cut. Those are all the
    /// thread recorded after the step's start, or, when a resumed run journaled
    /// the step's end (a `skip`), those recorded before that end.
    pub(crate) fn past_cut_off_step(&self, at: &EffectAt) -> u32 {
        let ended = match self.recorded.effect(at) {
            Some(Effect::Tool { outcome: Some(_), step, .. }) => Some(*step),
            _ => None,
        };
        let mut n = at.n + 1;
        while let Some(effect) = self.recorded.effect(&EffectAt { thread: at.thread.clone(), n }) {
            if ended.is_some_and(|ended| effect.step() >= ended) {
                break;
            }
            n += 1;
        }
        n
    }

    /// The live step at `at` (its arguments `args`) was stopped by a
    /// divergence in a call its code made: its `tool` line says so, so that a
    /// replay of this journal does not wait for the step to end.
    pub(crate) fn stopped_step(&self, at: &EffectAt, args: &Value, error: &str) -> Result<(), JournalError> {
        if !self.writes() {
            return Ok(());
        }
        self.write(&json!({
            "kind": TOOL_KIND, "at": &*at.thread, "n": at.n, "step": self.take_step(),
            "name": CODE_STEP, "args": args, "error": error,
        }))
    }

    /// After the served step at `at` and its calls (the thread's effects
    /// before `end`) made their file changes again one by one, each path they
    /// touched gets the state the step left it in: its change across the step,
    /// else (changed by a call, then put back by the code) its state before.
    pub(crate) fn settle_code(&self, at: &EffectAt, end: u32) -> Result<(), RestoreError> {
        let Some(workspace) = &self.workspace else { return Ok(()) };
        if !matches!(self.mode, Mode::Replay | Mode::Travel) {
            return Ok(());
        }
        let Some(Effect::Tool { changes: across, .. }) = self.recorded.effect(at) else { return Ok(()) };
        let mut first: HashMap<&str, &State> = HashMap::new();
        let mut order = Vec::new();
        for n in at.n + 1..end {
            let call = EffectAt { thread: at.thread.clone(), n };
            if let Some(Effect::Tool { changes, .. }) = self.recorded.effect(&call) {
                for change in changes {
                    if !first.contains_key(change.path.as_str()) {
                        first.insert(&change.path, &change.before);
                        order.push(change.path.as_str());
                    }
                }
            }
        }
        // Put back what the code undid, last first (files before their directories).
        let restored: Vec<Change> = order
            .iter()
            .rev()
            .filter(|path| !across.iter().any(|c| c.path == **path))
            .map(|path| Change { path: path.to_string(), before: State::Absent, after: first[path].clone() })
            .collect();
        workspace.redo(&self.recorded, &restored)?;
        workspace.redo(&self.recorded, across)
    }
}
