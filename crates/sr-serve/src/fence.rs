//! The claim's epoch checked before every effect a run makes: before each
//! model call and each tool call (a file a tool writes included) the store
//! says whether this replica still holds the run's claim, in the statement
//! that commits the journal lines held back since the last effect
//! (`copies::RunJournal::before_effect`), so a replica that lost a run
//! (stalled past its lease while another took it over) makes no further
//! effect, not only no further write to the store.

use std::sync::Arc;

use futures::future::BoxFuture;
use sr_runtime::hook::{Control, Failure, Step, StepHook, StepPoint};

use crate::copies::RunJournal;

/// `inner` (the run's own hook), behind the check of the claim.
pub struct Fenced {
    pub journal: Arc<RunJournal>,
    pub inner: Arc<dyn StepHook>,
}

impl StepHook for Fenced {
    fn on_step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Control> {
        Box::pin(async move {
            let effect = matches!(step.point, StepPoint::ModelCall { .. } | StepPoint::ToolCall { .. });
            // A claim found lost stops the run here.
            if effect && self.journal.before_effect().is_err() {
                return Control::Terminate;
            }
            self.inner.on_step(step).await
        })
    }

    fn interrupt(&self, thread: u32) -> BoxFuture<'static, ()> {
        self.inner.interrupt(thread)
    }

    fn on_thread(&self, thread: u32, parent: u32, started: bool) {
        self.inner.on_thread(thread, parent, started);
    }

    fn on_failure<'a>(&'a self, step: Step<'a>, failure: Failure<'a>) -> BoxFuture<'a, Control> {
        self.inner.on_failure(step, failure)
    }

    fn on_human<'a>(&'a self, step: Step<'a>, message: &'a str) -> BoxFuture<'a, Option<String>> {
        self.inner.on_human(step, message)
    }
}
