//! The threads waiting at a served call to be cancelled, as the recorded run
//! was there ([`Journal::parked`]). A `parallel` block whose branch failed
//! lets a replay's other branches emit what the recorded run's did before
//! the failure cancelled them; a branch parked has nothing more to emit, so
//! the block stops waiting once every branch still running is parked
//! ([`Journal::all_parked`]).

use std::sync::{Arc, Weak};

use tokio::sync::watch;

use super::Journal;

/// The parked threads' keys (a thread parked twice is there twice).
pub(crate) type Threads = Arc<watch::Sender<Vec<Arc<str>>>>;

pub(crate) fn threads() -> Threads {
    Arc::new(watch::channel(Vec::new()).0)
}

/// A thread counted as parked until dropped.
struct Parked(Threads, Arc<str>);

impl Drop for Parked {
    fn drop(&mut self) {
        self.0.send_modify(|threads| {
            if let Some(at) = threads.iter().position(|t| *t == self.1) {
                threads.swap_remove(at);
            }
        });
    }
}

impl Journal {
    /// Waits for ever, as the recorded run did at a call of `thread` until
    /// it was cancelled; the hook hears of it when the wait begins.
    pub(crate) fn parked<T>(&self, thread: &str) -> impl std::future::Future<Output = T> + Send + 'static {
        let hook = self.parked_to.get().and_then(Weak::upgrade);
        let (threads, thread): (_, Arc<str>) = (self.parked.clone(), Arc::from(thread));
        async move {
            threads.send_modify(|parked| parked.push(thread.clone()));
            let _parked = Parked(threads, thread.clone());
            if let Some(hook) = hook {
                hook.on_parked(&thread);
            }
            std::future::pending().await
        }
    }

    /// Ends once every branch of `running` (indexes) of the block whose
    /// branches' threads start with `block` (`THREAD/N.`) is parked, or has
    /// a thread inside it parked.
    pub(crate) async fn all_parked(&self, block: &str, running: &[u32]) {
        let mut parked = self.parked.subscribe();
        let branch_of = |thread: &str| thread.strip_prefix(block)?.split(['/', '.']).next()?.parse::<u32>().ok();
        let _ = parked
            .wait_for(|threads| {
                let stuck: Vec<u32> = threads.iter().filter_map(|t| branch_of(t)).collect();
                running.iter().all(|branch| stuck.contains(branch))
            })
            .await;
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;
    use futures::future::BoxFuture;

    use crate::journal::Journal;

    #[tokio::test]
    async fn a_block_knows_when_every_running_branch_is_parked() {
        let journal = Journal::unrecorded();
        let all = |running: &'static [u32]| {
            let journal = &journal;
            async move { journal.all_parked("main/2.", running).await }
        };
        assert!(all(&[]).now_or_never().is_some(), "no branch running: nothing to wait for");
        let first = parked_now(journal.parked::<()>("main/2.0").boxed());
        assert!(all(&[0]).now_or_never().is_some(), "branch 0 is parked");
        assert!(all(&[0, 1]).now_or_never().is_none(), "branch 1 still runs");
        // A thread deep inside branch 1 (a nested block's branch) parks it.
        let nested = parked_now(journal.parked::<()>("main/2.1/4.0").boxed());
        assert!(all(&[0, 1]).now_or_never().is_some());
        assert!(journal.all_parked("main/3.", &[0]).now_or_never().is_none(), "another block's branches are not");
        drop(nested);
        assert!(all(&[0, 1]).now_or_never().is_none(), "a cancelled wait is no longer parked");
        drop(first);
    }

    /// Polls `future` once (it parks then) and keeps it.
    fn parked_now(mut future: BoxFuture<'static, ()>) -> BoxFuture<'static, ()> {
        assert!((&mut future).now_or_never().is_none(), "a parked thread waits for ever");
        future
    }
}
