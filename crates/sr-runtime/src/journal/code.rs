//! A coding agent's steps through the journal. A step is a tool call named
//! [`CODE_STEP`] (`tool_start` and `tool` lines): its arguments are the
//! agent, the step's number and its code; its result is what the step did
//! (output, outcome, the calls it made) and its files the work directory's
//! changes while it ran. The tool calls the code made are effects of their
//! own, numbered after the step's. A served step runs nothing: the runtime
//! makes its calls again through the journal (served too), then puts the
//! files as the step left them ([`Journal::settle_code`]).

use std::collections::HashMap;

use super::files::{Change, State};
use super::{Effect, EffectAt, Journal, Mode};

/// The name a coding agent's step has in the journal.
pub(crate) const CODE_STEP: &str = "code";

impl Journal {
    /// How many effects `thread` recorded: where a step a crash cut off, and
    /// that is not run again, leaves the thread (its calls were its last effects).
    pub(crate) fn recorded_effects(&self, thread: &std::sync::Arc<str>) -> u32 {
        self.recorded.effects_of(thread)
    }

    /// After the served step at `at` and its calls (the thread's effects
    /// before `end`) made their file changes again one by one, each path they
    /// touched gets the state the step left it in: its change across the step,
    /// else (changed by a call, then put back by the code) its state before.
    pub(crate) fn settle_code(&self, at: &EffectAt, end: u32) -> Result<(), String> {
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
