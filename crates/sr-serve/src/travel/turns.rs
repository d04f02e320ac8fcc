//! Whose step it is in a replay with `parallel` branches. The branches run
//! concurrently, and the runtime holds a branch's events back until the
//! recorded order reaches them; a branch served from the journal would run
//! ahead of its events, and a moment counted in events would find it past
//! the event. So each thread waits at its steps until the run's stored
//! events say it may go on: the next one is its own, or one of a branch it
//! started (it must go on to start it), or it has none left. Past the target
//! event only the event's thread goes on, to its next step, where the replay
//! stops; once that thread has ended, or waits at a call the recorded run
//! was cancelled in (a sibling's failure cancels it: it takes no step
//! before), any thread does.
//!
//! Threads are the runtime's ids, as the events' paths name them
//! (`branch:ID`); a replay gives each block's branches the ids its journal
//! recorded for them (its `interleave` line), so they are the stored
//! events' also where branches running at once started blocks (nested
//! `parallel`) in an order timing decided. A journal written before the ids
//! were kept gets new ones in the order its blocks start: there a thread
//! that waits [`WAIT`] with nothing moving ends the replay with an error
//! rather than a hang.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;

use crate::locked;

/// How long a thread waits for its turn while nothing moves.
pub const WAIT: Duration = Duration::from_secs(10);

pub struct Turns {
    /// The branches of each counted stored event, in order (`Target::branches`).
    order: Vec<Vec<u32>>,
    /// Each thread's last counted event: its index in `order`.
    last_of: HashMap<u32, usize>,
    /// The thread of the target event.
    target: u32,
    ended: Mutex<HashSet<u32>>,
    moved: Notify,
}

impl Turns {
    /// Turns over `order`, the target being its event `target` (an index).
    pub fn new(order: Vec<Vec<u32>>, target: usize) -> Turns {
        let thread = |chain: &Vec<u32>| chain.last().copied().unwrap_or(0);
        let last_of = order.iter().enumerate().map(|(i, chain)| (thread(chain), i)).collect();
        let target = order.get(target).map_or(0, thread);
        Turns { order, last_of, target, ended: Mutex::default(), moved: Notify::new() }
    }

    pub fn target(&self) -> u32 {
        self.target
    }

    /// Whether `thread` may take a step with `emitted` counted events out,
    /// when the replay stops past `stop` of them.
    pub fn may_step(&self, thread: u32, emitted: u64, stop: u64) -> bool {
        if emitted >= stop {
            return thread == self.target || self.has_ended(self.target);
        }
        let at = emitted as usize;
        let Some(next) = self.order.get(at) else { return true };
        thread == 0 || next.contains(&thread) || self.last_of.get(&thread).is_none_or(|&last| last < at)
    }

    /// Waits until `may_step` says yes (reading `emitted` again at each
    /// move) or `done` does; `false` when nothing moved for `patience`
    /// ([`WAIT`]).
    pub async fn wait(
        &self,
        thread: u32,
        emitted: impl Fn() -> u64,
        (stop, patience): (u64, Duration),
        done: impl Fn() -> bool,
    ) -> bool {
        loop {
            let moved = self.moved.notified();
            tokio::pin!(moved);
            moved.as_mut().enable();
            if done() || self.may_step(thread, emitted(), stop) {
                return true;
            }
            if tokio::time::timeout(patience, moved).await.is_err() {
                return false;
            }
        }
    }

    /// The stored event at `index` (counted), by its branches, for an error.
    pub fn describe(&self, index: usize) -> String {
        match self.order.get(index) {
            Some(chain) if chain.is_empty() => "main's".to_string(),
            Some(chain) => format!("branch {chain:?}'s"),
            None => "none".to_string(),
        }
    }

    /// An event went out, a thread ended or the replay stopped: waiting threads look again.
    pub fn moved(&self) {
        self.moved.notify_waiters();
    }

    /// `thread` ended, or waits to be cancelled: it takes no more steps.
    pub fn end(&self, thread: u32) {
        locked(&self.ended).insert(thread);
        self.moved();
    }

    pub fn has_ended(&self, thread: u32) -> bool {
        locked(&self.ended).contains(&thread)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Main's start, then branches 1 and 2 whose events interleave (1, 2, 1, 2),
    /// then main again.
    fn turns(target: usize) -> Turns {
        Turns::new(vec![vec![], vec![1], vec![2], vec![1], vec![2], vec![]], target)
    }

    #[test]
    fn a_branch_waits_for_its_own_event_or_until_it_has_none() {
        let t = turns(5);
        // (thread, emitted) → may it step?
        let table = [
            ((0, 1), true),
            ((1, 1), true),
            ((2, 1), false),
            ((2, 2), true),
            ((1, 2), false),
            ((1, 3), true),
            ((1, 4), true),
            ((2, 4), true),
            ((2, 5), true),
            ((7, 1), true),
        ];
        for ((thread, emitted), may) in table {
            assert_eq!(t.may_step(thread, emitted, 6), may, "thread {thread} after {emitted} events");
        }
    }

    #[test]
    fn a_thread_that_starts_the_next_events_branch_goes_on() {
        // Branch 1 starts branch 3 inside it.
        let t = Turns::new(vec![vec![], vec![1, 3], vec![2], vec![1]], 3);
        assert!(t.may_step(1, 1, 4), "branch 1 must go on to start branch 3");
        assert!(!t.may_step(2, 1, 4));
    }

    #[test]
    fn past_the_target_only_its_thread_steps_until_it_ends() {
        let t = turns(3);
        assert_eq!(t.target(), 1);
        assert!(t.may_step(1, 4, 4));
        assert!(!t.may_step(2, 4, 4) && !t.may_step(0, 4, 4));
        t.end(1);
        assert!(t.may_step(2, 4, 4) && t.may_step(0, 4, 4));
    }

    #[tokio::test]
    async fn a_waiting_thread_goes_on_when_its_turn_comes_and_gives_up_when_nothing_moves() {
        let t = std::sync::Arc::new(turns(5));
        let emitted = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(1));
        let waiter = {
            let (t, emitted) = (t.clone(), emitted.clone());
            let emitted = move || emitted.load(std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move { t.wait(2, emitted, (6, WAIT), || false).await })
        };
        tokio::task::yield_now().await;
        emitted.store(2, std::sync::atomic::Ordering::SeqCst);
        t.moved();
        assert!(waiter.await.unwrap());
        let short = Duration::from_millis(20);
        assert!(!t.wait(2, || 1, (6, short), || false).await, "nothing moved");
        assert!(t.wait(2, || 1, (6, short), || true).await, "the replay stopped");
    }
}
