//! A run that pauses while `parallel` branches have calls in flight (a
//! question in one branch, a cli command or a model call in another): the
//! calls already made are let finish and journaled, ok or not, so that the
//! resumed run serves them instead of finding them cut off (in doubt, or
//! asked twice); no new call starts once the pause began. The block that
//! sees its branch pause waits for [`Journal::calls_ended`] before it
//! cancels the other branches.

use std::sync::Arc;

use tokio::sync::watch;

use super::{CODE_STEP, EffectAt, Journal};

/// Whether the run pauses, how many live calls are in flight, and the
/// threads whose coding agent's step is one of them.
#[derive(Clone, Default)]
pub(crate) struct Calls {
    pausing: bool,
    in_flight: usize,
    steps: Vec<Arc<str>>,
}

/// The run's count of live calls, shared with their guards.
pub(crate) type Count = Arc<watch::Sender<Calls>>;

pub(crate) fn count() -> Count {
    Arc::new(watch::channel(Calls::default()).0)
}

/// A live call in flight, counted until dropped; a coding agent's step
/// names its thread.
pub(crate) struct InFlight(Count, Option<Arc<str>>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let step = self.1.take();
        self.0.send_modify(|calls| {
            calls.in_flight -= 1;
            if let Some(position) = step.and_then(|thread| calls.steps.iter().position(|t| *t == thread)) {
                calls.steps.swap_remove(position);
            }
        });
    }
}

/// The live call of tool `name` (none for a model call) at `at` may start:
/// it is counted until the guard drops. Once the run pauses, `None`: the
/// call must not start (the block it is in cancels it when the calls in
/// flight have ended), unless a coding agent's step in flight on its thread
/// makes it: the step ends only when its code's calls do.
pub(crate) fn admit(calls: &Count, at: &EffectAt, name: &str) -> Option<InFlight> {
    let step = (name == CODE_STEP).then(|| at.thread.clone());
    let mut admitted = false;
    calls.send_if_modified(|calls| {
        admitted = !calls.pausing || calls.steps.contains(&at.thread);
        if admitted {
            calls.in_flight += 1;
            calls.steps.extend(step.clone());
        }
        admitted
    });
    admitted.then(|| InFlight(calls.clone(), step))
}

impl Journal {
    /// [`admit`] for this journal's run.
    pub(crate) fn admit(&self, at: &EffectAt, name: &str) -> Option<InFlight> {
        admit(&self.calls, at, name)
    }

    /// The run pauses: no live call starts from now on.
    pub(crate) fn pause_begun(&self) {
        self.calls.send_modify(|calls| calls.pausing = true);
    }

    /// Ends once no live call is in flight.
    pub(crate) async fn calls_ended(&self) {
        let mut calls = self.calls.subscribe();
        // The sender lives as long as the journal.
        let _ = calls.wait_for(|calls| calls.in_flight == 0).await;
    }
}

#[cfg(test)]
mod tests {
    use crate::journal::{CODE_STEP, EffectAt, Journal};

    #[tokio::test]
    async fn a_pause_lets_the_calls_in_flight_end_and_starts_no_other() {
        let journal = Journal::unrecorded();
        let at = |thread: &str| EffectAt { thread: thread.into(), n: 0 };
        let first = journal.admit(&at("main/0.0"), "execute_cli_command").expect("nothing pauses yet");
        let step = journal.admit(&at("main/0.1"), CODE_STEP).expect("nothing pauses yet");
        journal.pause_begun();
        assert!(journal.admit(&at("main/0.0"), "write_file").is_none(), "no call starts once the run pauses");
        let called = journal.admit(&at("main/0.1"), "write_file").expect("the step's code calls it");
        drop(step);
        assert!(journal.admit(&at("main/0.1"), "write_file").is_none(), "the step has ended");
        let ended = journal.calls_ended();
        tokio::pin!(ended);
        assert!(futures::poll!(ended.as_mut()).is_pending(), "a call is in flight");
        drop(first);
        assert!(futures::poll!(ended.as_mut()).is_pending(), "the step's call is in flight");
        drop(called);
        assert!(futures::poll!(ended.as_mut()).is_ready());
    }
}
