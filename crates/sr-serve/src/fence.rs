//! The claim's epoch checked before every effect a run makes: before each
//! model call and each tool call (a file a tool writes included) the store
//! says whether this replica still holds the run's claim, so a replica that
//! lost a run (stalled past its lease while another took it over) makes no
//! further effect, not only no further write to the store.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use sr_runtime::hook::{Control, Failure, Step, StepHook, StepPoint};

use crate::Server;

/// `inner` (the run's own hook), behind the check of the claim.
pub struct Fenced {
    pub server: Arc<Server>,
    pub run: String,
    pub epoch: i64,
    pub inner: Arc<dyn StepHook>,
}

impl Fenced {
    /// Whether the claim is still this replica's. A store that does not
    /// answer is asked again until it does or a lease has passed (the others
    /// may have taken the run by then): no effect is made meanwhile.
    async fn held(&self) -> bool {
        let claim = [(self.run.clone(), self.epoch)];
        let started = tokio::time::Instant::now();
        loop {
            match self.server.store.heartbeat(&claim).await {
                Ok(lost) if lost.is_empty() => return true,
                Ok(_) => {
                    self.server.lose(&self.run, "the run's claim was lost before its next effect");
                    return false;
                }
                Err(error) if started.elapsed() < self.server.settings.lease => {
                    tracing::warn!(%error, "cannot check the run's claim before its next effect; asking again");
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Err(error) => {
                    tracing::error!(%error, "cannot check the run's claim for a whole lease");
                    self.server.lose(&self.run, "the run's claim could not be checked for a whole lease");
                    return false;
                }
            }
        }
    }
}

impl StepHook for Fenced {
    fn on_step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Control> {
        Box::pin(async move {
            let effect = matches!(step.point, StepPoint::ModelCall { .. } | StepPoint::ToolCall { .. });
            if effect && !self.held().await {
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
