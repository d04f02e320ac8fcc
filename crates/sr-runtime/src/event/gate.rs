//! The order in which the branches of a `parallel` block emit their events.
//! Branches run concurrently, so the live order depends on timing; a live run
//! records it, and a replay holds each event back until the recorded order
//! reaches its branch, so the replay's event log is the live run's, byte for
//! byte. Nested blocks have their own gates: an inner block's events pass its
//! gate first, then their branch's place in the outer one.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::Payload;

/// An event on its way out: the producer's path and the payload.
pub(crate) type Pending = (Vec<String>, Payload);

/// One `parallel` block's gate.
pub struct Gate {
    state: Mutex<State>,
    /// Whether every event of the recorded order has passed.
    caught_up: tokio::sync::watch::Sender<bool>,
}

struct State {
    /// The recorded order still to come (a replay); `None` records.
    replay: Option<VecDeque<u32>>,
    /// The order events passed in (what a live run records; in a resumed
    /// run, the recorded order and then what came after it).
    seen: Vec<u32>,
    /// Events held back, per branch (a replay).
    held: Vec<VecDeque<Pending>>,
    /// The branch that paused the run or failed: the others' events are
    /// dropped but for those the recorded order still has.
    cut_by: Option<u32>,
}

impl Gate {
    /// A gate for `branches` branches: replaying `recorded`, or recording.
    pub fn new(branches: usize, recorded: Option<Vec<u32>>) -> Arc<Gate> {
        let caught_up = tokio::sync::watch::channel(recorded.as_ref().is_none_or(Vec::is_empty)).0;
        let state = State {
            replay: recorded.map(VecDeque::from),
            seen: Vec::new(),
            held: (0..branches).map(|_| VecDeque::new()).collect(),
            cut_by: None,
        };
        Arc::new(Gate { state: Mutex::new(state), caught_up })
    }

    /// Ends once every event of the recorded order has passed (at once
    /// when recording): a served branch has emitted what the recorded run's
    /// did before it paused or a sibling's failure cancelled it.
    pub(crate) async fn caught_up(&self) {
        let mut caught_up = self.caught_up.subscribe();
        // The sender lives as long as the gate.
        let _ = caught_up.wait_for(|&done| done).await;
    }

    /// Events branch `index` emits; returns those to emit now, in order.
    pub(crate) fn pass(&self, index: u32, mut items: Vec<Pending>) -> Vec<Pending> {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let State { replay, seen, held, cut_by } = &mut *state;
        // After a pause or a failure another branch's events pass only while
        // the recorded order still has some of its own (those the recorded
        // run emitted).
        if cut_by.is_some_and(|cut_by| cut_by != index) {
            let recorded = replay.as_ref().map_or(0, |order| order.iter().filter(|&&b| b == index).count());
            let queued = held.get(index as usize).map_or(0, VecDeque::len);
            let room = recorded.saturating_sub(queued);
            items.truncate(room);
        }
        let Some(order) = replay else {
            seen.extend(std::iter::repeat_n(index, items.len()));
            return items;
        };
        let Some(queue) = held.get_mut(index as usize) else { return items };
        queue.extend(items);
        let mut out = Vec::new();
        while let Some(&next) = order.front() {
            match held.get_mut(next as usize).and_then(VecDeque::pop_front) {
                Some(item) => {
                    order.pop_front();
                    seen.push(next);
                    out.push(item);
                }
                None => break,
            }
        }
        // Past the recorded order (the recording was cut short), events go
        // out as they come.
        if order.is_empty() {
            self.caught_up.send_replace(true);
            for (branch, queue) in (0..).zip(held.iter_mut()) {
                seen.extend(std::iter::repeat_n(branch, queue.len()));
                out.extend(queue.drain(..));
            }
        }
        out
    }

    /// Branch `index` paused the run: from now on the other branches' events
    /// (the calls they had in flight ending, see `journal::pausing`) are
    /// dropped, but for those a served run's recorded order still has. The
    /// paused process's events end with the question and the pause, as the
    /// resumed run's events go on from the question: the resumed run serves
    /// those calls and emits their events.
    pub(crate) fn pause(&self, index: u32) {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // The first pause is the run's: a sibling's question asked while
        // the calls in flight end is asked again by the resumed run.
        state.cut_by.get_or_insert(index);
    }

    /// Branch `index` failed: the block cancels the others, in a replay once
    /// they have emitted what the recorded run's did before the failure
    /// cancelled them (`caught_up`), and no more. Past the recorded order
    /// (recording, or a resumed run gone live) their events pass as they
    /// come: those of their cancellation too.
    pub(crate) fn fail(&self, index: u32) {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if state.replay.as_ref().is_some_and(|order| !order.is_empty()) {
            state.cut_by.get_or_insert(index);
        }
    }

    /// When the block ends: the events still held, in the recorded order as
    /// far as it goes, then branch by branch.
    pub(crate) fn finish(&self) -> Vec<Pending> {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let State { replay, held, seen, .. } = &mut *state;
        let mut out = Vec::new();
        for next in replay.iter_mut().flat_map(|order| order.drain(..)) {
            if let Some(item) = held.get_mut(next as usize).and_then(VecDeque::pop_front) {
                seen.push(next);
                out.push(item);
            }
        }
        for (branch, queue) in (0..).zip(held.iter_mut()) {
            seen.extend(std::iter::repeat_n(branch, queue.len()));
            out.extend(queue.drain(..));
        }
        out
    }

    /// The order the branches' events passed in.
    pub fn order(&self) -> Vec<u32> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).seen.clone()
    }
}

/// A gate and the branch an emitter belongs to; `outer` is the gate of the
/// block around this one.
#[derive(Clone)]
pub(crate) struct GateLink {
    pub(crate) gate: Arc<Gate>,
    pub(crate) index: u32,
    pub(crate) outer: Option<Arc<GateLink>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(n: u32) -> Pending {
        (vec![format!("branch:{n}")], Payload::Log { message: n.to_string() })
    }

    fn names(items: &[Pending]) -> Vec<String> {
        items
            .iter()
            .map(|(_, payload)| match payload {
                Payload::Log { message } => message.clone(),
                _ => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn a_replay_emits_in_the_recorded_order_whoever_runs_first() {
        let gate = Gate::new(2, Some(vec![1, 0, 0, 1]));
        assert!(gate.pass(0, vec![event(0)]).is_empty(), "branch 0 waits for branch 1's first event");
        assert!(gate.pass(0, vec![event(0)]).is_empty());
        assert_eq!(names(&gate.pass(1, vec![event(1)])), ["1", "0", "0"]);
        assert_eq!(names(&gate.pass(1, vec![event(1)])), ["1"]);
        assert!(gate.finish().is_empty());
    }

    #[tokio::test]
    async fn after_a_pause_only_the_paused_branchs_events_pass_and_are_recorded() {
        let live = Gate::new(2, None);
        assert_eq!(names(&live.pass(1, vec![event(1)])), ["1"]);
        live.pause(0);
        assert!(live.pass(1, vec![event(1)]).is_empty(), "the sibling's call ended after the pause");
        assert_eq!(names(&live.pass(0, vec![event(0)])), ["0"]);
        assert!(live.finish().is_empty());
        assert_eq!(live.order(), [1, 0]);

        // A replay of the paused run: the sibling's recorded events pass,
        // in their order, also when its branch pauses first.
        let again = Gate::new(2, Some(vec![1, 0, 1]));
        assert!(again.pass(0, vec![event(0)]).is_empty(), "branch 0 waits for branch 1's first event");
        again.pause(0);
        let caught_up = again.caught_up();
        tokio::pin!(caught_up);
        assert!(futures::poll!(caught_up.as_mut()).is_pending());
        assert_eq!(names(&again.pass(1, vec![event(1), event(1), event(1)])), ["1", "0", "1"]);
        assert!(futures::poll!(caught_up.as_mut()).is_ready());
        assert!(again.pass(1, vec![event(1)]).is_empty(), "past the recorded order");
        assert_eq!(again.order(), [1, 0, 1]);
    }

    #[tokio::test]
    async fn after_a_failure_a_replay_lets_through_what_was_recorded_and_a_live_run_everything() {
        // Live: the cancelled sibling's last events (its cancellation) pass.
        let live = Gate::new(2, None);
        live.fail(0);
        assert_eq!(names(&live.pass(1, vec![event(1)])), ["1"]);
        assert_eq!(live.order(), [1]);

        // A replay: the sibling's recorded events pass, in their order, and
        // the block's wait ends when they have; more does not pass.
        let again = Gate::new(2, Some(vec![0, 1, 1]));
        assert_eq!(names(&again.pass(0, vec![event(0)])), ["0"]);
        again.fail(0);
        let caught_up = again.caught_up();
        tokio::pin!(caught_up);
        assert!(futures::poll!(caught_up.as_mut()).is_pending(), "the sibling has not emitted its recorded events");
        assert_eq!(names(&again.pass(1, vec![event(1), event(1), event(1)])), ["1", "1"]);
        assert!(futures::poll!(caught_up.as_mut()).is_ready());
        assert_eq!(again.order(), [0, 1, 1]);

        // A resumed run past its recording: as live.
        let resumed = Gate::new(2, Some(vec![1]));
        assert_eq!(names(&resumed.pass(1, vec![event(1)])), ["1"]);
        resumed.fail(0);
        assert_eq!(names(&resumed.pass(1, vec![event(1)])), ["1"]);
    }

    #[test]
    fn a_live_run_records_its_order_and_a_short_recording_lets_the_rest_through() {
        let live = Gate::new(2, None);
        assert_eq!(names(&live.pass(1, vec![event(1), event(1)])), ["1", "1"]);
        assert_eq!(names(&live.pass(0, vec![event(0)])), ["0"]);
        assert_eq!(live.order(), [1, 1, 0]);

        let short = Gate::new(2, Some(vec![0]));
        assert!(short.pass(1, vec![event(1)]).is_empty());
        assert_eq!(names(&short.pass(0, vec![event(0)])), ["0", "1"]);
        assert_eq!(names(&short.pass(1, vec![event(1)])), ["1"]);
    }

    #[test]
    fn what_is_held_when_the_block_ends_comes_out_in_order() {
        let gate = Gate::new(3, Some(vec![2, 0, 1]));
        assert!(gate.pass(1, vec![event(1)]).is_empty());
        assert!(gate.pass(0, vec![event(0)]).is_empty());
        // Branch 2 never emitted (a failure cancelled it): the rest still comes out.
        assert_eq!(names(&gate.finish()), ["0", "1"]);
    }
}
