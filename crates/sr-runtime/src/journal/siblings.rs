//! The `parallel` blocks under way, for a call the recorded run cancelled
//! when a sibling branch failed, in a run that goes live (a fork from a step
//! before the failure, a resume): no recorded result is there to serve, and
//! making the call at once would ask the world for what the sibling's
//! failure may cancel again. The call waits until every other branch of its
//! block has ended or waits too; a failure cancels it first, as in the
//! recorded run. Only when none comes is it made.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::{EffectAt, Journal};

/// A block's count of branches that ended or wait, and its number of branches.
pub(crate) type Settled = (Arc<watch::Sender<usize>>, usize);

/// The blocks under way, by place.
pub(crate) type Blocks = Mutex<HashMap<(Arc<str>, u32), Settled>>;

/// A block under way, known to the journal until dropped.
pub(crate) struct UnderWay<'a> {
    journal: &'a Journal,
    at: EffectAt,
}

impl Drop for UnderWay<'_> {
    fn drop(&mut self) {
        let mut blocks = self.journal.blocks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        blocks.remove(&(self.at.thread.clone(), self.at.n));
    }
}

/// One branch counted as waiting, until dropped (it goes live, or it is
/// cancelled).
struct Waiting(Arc<watch::Sender<usize>>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Journal {
    /// The block at `at` is under way with `settled`'s branches: until the
    /// guard drops, a cancelled call of one of them waits on it.
    pub(crate) fn block_under_way(&self, at: &EffectAt, settled: Settled) -> UnderWay<'_> {
        let mut blocks = self.blocks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        blocks.insert((at.thread.clone(), at.n), settled);
        UnderWay { journal: self, at: at.clone() }
    }

    /// When `thread` is a branch of a block under way: a wait that ends
    /// once every other branch of the block has ended or waits too.
    pub(crate) fn siblings_settled(
        &self,
        thread: &str,
    ) -> Option<impl std::future::Future<Output = ()> + Send + 'static> {
        let (parent, branch) = thread.rsplit_once('/')?;
        let n: u32 = branch.split('.').next()?.parse().ok()?;
        let blocks = self.blocks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (settled, branches) = blocks.get(&(Arc::from(parent), n)).cloned()?;
        Some(async move {
            let mut told = settled.subscribe();
            settled.send_modify(|n| *n += 1);
            let _waiting = Waiting(settled);
            let _ = told.wait_for(|&n| n >= branches).await;
        })
    }
}
