//! The order a replay serves its exchanges in: the order the live run finished
//! them, each after as many requests as the live run had made by then.
//! Branches that run at once ask in any order; each reply waits for the
//! exchanges recorded before its own and for the requests that preceded it,
//! so replies reach the run where they reached the live one, and a replay of
//! parallel branches tells its story in the same order every time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, Stream, StreamExt};
use tokio::sync::Notify;

use crate::{ChatEvent, LlmError};

/// How long an exchange waits for earlier ones that nobody asks for (the
/// replayed program took another path): then it is served anyway, so a
/// replay that diverges goes on to fail loudly instead of hanging.
const UNASKED_GRACE: Duration = Duration::from_secs(1);

/// How far the replay is: requests made, and which recorded exchanges are
/// finished, by their recorded position.
#[derive(Default)]
pub(crate) struct Turns {
    progress: Mutex<Progress>,
    changed: Notify,
}

#[derive(Default)]
struct Progress {
    asked: usize,
    /// Every position below this one is finished.
    below: usize,
    /// Finished positions at or above `below`.
    later: std::collections::BTreeSet<usize>,
}

impl Turns {
    fn update(&self, change: impl FnOnce(&mut Progress)) {
        change(&mut self.progress.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        self.changed.notify_waiters();
    }

    /// Counts a request the replayed run made.
    pub(crate) fn asked(&self) {
        self.update(|progress| progress.asked += 1);
    }

    fn finish(&self, position: usize) {
        self.update(|Progress { below, later, .. }| {
            later.insert(position);
            while later.remove(below) {
                *below += 1;
            }
        });
    }

    fn is_turn_of(&self, turn: &Turn) -> bool {
        let progress = self.progress.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        progress.below >= turn.position && progress.asked >= turn.after_asked
    }

    /// Serves `items`, the exchange recorded at `position`, once every earlier
    /// exchange is finished and `after_asked` requests were made; it is
    /// finished when its last item is out or its stream is dropped. A
    /// `cancelled` exchange then sends nothing more.
    pub(crate) fn serve(
        self: &Arc<Self>,
        position: usize,
        after_asked: usize,
        items: Vec<Result<ChatEvent, LlmError>>,
        cancelled: bool,
    ) -> impl Stream<Item = Result<ChatEvent, LlmError>> + Send + 'static {
        let turn = Turn { turns: self.clone(), position, after_asked, finished: false };
        let mut items = Some(items);
        stream::once(turn.wait()).flat_map(move |mut turn| {
            let items = items.take().unwrap_or_default();
            if items.is_empty() {
                turn.finish();
            }
            let last = items.len().saturating_sub(1);
            let items = stream::iter(items.into_iter().enumerate()).map(move |(i, item)| {
                if i == last {
                    turn.finish();
                }
                item
            });
            let rest = match cancelled {
                true => stream::pending().boxed(),
                false => stream::empty().boxed(),
            };
            items.chain(rest)
        })
    }
}

/// One exchange's claim on the order; dropping it unfinished finishes it.
struct Turn {
    turns: Arc<Turns>,
    position: usize,
    after_asked: usize,
    finished: bool,
}

impl Turn {
    async fn wait(self) -> Turn {
        let deadline = tokio::time::Instant::now() + UNASKED_GRACE;
        let turns = self.turns.clone();
        loop {
            let changed = turns.changed.notified();
            if turns.is_turn_of(&self) || tokio::time::timeout_at(deadline, changed).await.is_err() {
                return self;
            }
        }
    }

    fn finish(&mut self) {
        if !std::mem::replace(&mut self.finished, true) {
            self.turns.finish(self.position);
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;

    fn text(t: &str) -> Vec<Result<ChatEvent, LlmError>> {
        vec![Ok(ChatEvent::TextDelta(t.into()))]
    }

    #[tokio::test(start_paused = true)]
    async fn exchanges_are_served_in_recorded_order_whoever_asks_first() {
        let turns = Arc::new(Turns::default());
        let order = Arc::new(Mutex::new(Vec::new()));
        let ask = |position: usize, name: &'static str| {
            let (stream, order) = (turns.serve(position, 0, text(name), false), order.clone());
            tokio::spawn(async move {
                let items: Vec<_> = stream.collect().await;
                order.lock().unwrap().push(name);
                items.len()
            })
        };
        let third = ask(2, "c");
        let second = ask(1, "b");
        tokio::task::yield_now().await;
        assert!(order.lock().unwrap().is_empty(), "nothing is served before the first exchange");
        let first = ask(0, "a");
        for task in [first, second, third] {
            assert_eq!(task.await.unwrap(), 1);
        }
        assert_eq!(*order.lock().unwrap(), ["a", "b", "c"]);
    }

    #[tokio::test(start_paused = true)]
    async fn an_exchange_nobody_asks_for_delays_the_later_ones_only_briefly() {
        let turns = Arc::new(Turns::default());
        let started = tokio::time::Instant::now();
        let items: Vec<_> = turns.serve(1, 0, text("late"), false).collect().await;
        assert_eq!(items.len(), 1);
        assert_eq!(started.elapsed(), UNASKED_GRACE);
        // A dropped exchange counts as finished.
        drop(turns.serve(0, 0, text("dropped"), true));
        let next = turns.serve(2, 1, text("next"), false);
        let waiting = tokio::spawn(next.collect::<Vec<_>>());
        tokio::time::sleep(UNASKED_GRACE / 2).await;
        assert!(!waiting.is_finished(), "a reply waits for the requests made before it");
        turns.asked();
        assert_eq!(waiting.await.unwrap().len(), 1);
        assert_eq!(started.elapsed(), UNASKED_GRACE * 3 / 2);
    }
}
