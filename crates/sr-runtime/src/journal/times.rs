//! When a run's events happened, kept in its journal so that a replay shows
//! the recorded run's times rather than its own. Each event's time and type
//! are written in `event_times` lines (`{"from": SEQ, "t0": MS, "events":
//! [[MS_SINCE_PREVIOUS, TYPE], …]}`), one line per event other than a text
//! delta, carrying the deltas before it, so a streamed reply costs no line
//! of its own. A later line's time for a `seq` replaces an earlier one's
//! (a resumed run writes the times it served again).
//!
//! A run served from a journal gives an event the recorded time of its
//! `seq` while the recorded event there has the same type and nothing has
//! gone live on purpose (a fork); from the first event that differs (a run
//! that paused goes on with the answer where the recorded one unwound), or
//! past the recorded times, every event gets the wall clock's time.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::Journal;
use crate::event::{Clock, Event, now_ms};

pub(crate) const TIMES_KIND: &str = "event_times";

/// The recorded time and type of each `seq`.
pub type Recorded = HashMap<u64, (u64, String)>;

/// The times of journal `text`'s events, by `seq`. Lines that are not JSON
/// or not `event_times` lines are not this reader's business.
pub fn read(text: &str) -> Recorded {
    let mut times = Recorded::new();
    for line in text.lines().filter(|l| l.contains(TIMES_KIND)) {
        let Ok(entry) = serde_json::from_str::<Value>(line) else { continue };
        if entry["kind"] != TIMES_KIND {
            continue;
        }
        let (Some(from), Some(mut at), Some(events)) =
            (entry["from"].as_u64(), entry["t0"].as_u64(), entry["events"].as_array())
        else {
            continue;
        };
        for (seq, event) in (from..).zip(events) {
            let (Some(delta), Some(kind)) = (event[0].as_u64(), event[1].as_str()) else { break };
            at = at.saturating_add(delta);
            times.insert(seq, (at, kind.to_string()));
        }
    }
    times
}

/// The run's clock: recorded times while the run gives the recorded events,
/// the wall clock's after; every time written to the journal (when it
/// writes one).
pub struct EventTimes {
    recorded: Recorded,
    journal: Arc<Journal>,
    /// An event differed from the recorded one at its `seq`, or came past them.
    diverged: AtomicBool,
    /// Times not written yet: `(seq, ms, type)`.
    pending: Mutex<Vec<(u64, u64, String)>>,
}

impl EventTimes {
    pub fn new(journal: Arc<Journal>, recorded: Recorded) -> EventTimes {
        EventTimes { recorded, journal, diverged: AtomicBool::new(false), pending: Mutex::default() }
    }

    /// The recorded time of `event`, while the run still gives the recorded events.
    fn served(&self, seq: u64, kind: &str) -> Option<u64> {
        if self.diverged.load(Ordering::SeqCst) || self.journal.went_live() {
            return None;
        }
        match self.recorded.get(&seq) {
            Some((at, recorded)) if recorded == kind => Some(*at),
            _ => {
                self.diverged.store(true, Ordering::SeqCst);
                None
            }
        }
    }

    /// Writes the pending times in one line.
    fn flush(&self, pending: &mut Vec<(u64, u64, String)>) {
        let Some(&(from, t0, _)) = pending.first() else { return };
        let mut previous = t0;
        let events: Vec<Value> = pending
            .drain(..)
            .map(|(_, at, kind)| {
                let delta = at.saturating_sub(previous);
                previous = at;
                json!([delta, kind])
            })
            .collect();
        // A time the journal fails to keep costs a replay only that
        // event's time; the run's effects, which it serves, are written
        // (and their failures reported) on their own.
        let _ = self.journal.write(&json!({"kind": TIMES_KIND, "from": from, "t0": t0, "events": events}));
    }
}

impl Clock for EventTimes {
    fn stamp(&self, event: &Event) -> u64 {
        let kind = serde_json::to_value(&event.payload)
            .ok()
            .and_then(|payload| payload["type"].as_str().map(str::to_string))
            .unwrap_or_default();
        let at = self.served(event.seq, &kind).unwrap_or_else(now_ms);
        if self.journal.writes() {
            let mut pending = self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let delta = kind == "text_delta";
            pending.push((event.seq, at, kind));
            if !delta {
                self.flush(&mut pending);
            }
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Payload;
    use crate::journal::{Mode, Recorded as Effects};

    fn event(seq: u64, payload: Payload) -> Event {
        Event { seq, invocation_id: "i".into(), path: Vec::new(), at_ms: None, payload }
    }

    fn log(seq: u64) -> Event {
        event(seq, Payload::Log { message: String::new() })
    }

    /// Seqs 1 to 3 recorded as logs at 10, 20, 30, served in `mode`.
    fn clock(mode: Mode) -> (Arc<Journal>, EventTimes) {
        let journal = Arc::new(Journal::new(mode, Effects::default(), None, None));
        let recorded = (1..=3).map(|seq| (seq, (seq * 10, "log".to_string()))).collect();
        (journal.clone(), EventTimes::new(journal, recorded))
    }

    #[test]
    fn recorded_times_are_served_until_an_event_differs_then_never_again() {
        let (_, clock) = clock(Mode::Replay);
        assert_eq!(clock.stamp(&log(1)), 10);
        let warning = event(2, Payload::Warning { message: String::new() });
        assert!(clock.stamp(&warning) > 30, "another event than the recorded one: the wall clock's");
        assert!(clock.stamp(&log(3)) > 30, "after a difference, even a recorded one");
        let (_, past) = self::clock(Mode::Replay);
        assert!(past.stamp(&log(4)) > 30, "past the recorded times");
    }

    #[test]
    fn after_a_fork_every_time_is_the_wall_clocks() {
        let (journal, clock) = clock(Mode::Travel);
        assert_eq!(clock.stamp(&log(1)), 10);
        journal.fork(&Arc::from("main"), 2).unwrap();
        assert!(clock.stamp(&log(2)) > 30);
    }

    #[test]
    fn times_are_read_by_seq_and_a_later_line_wins() {
        let text = [
            r#"{"kind":"meta","format":9}"#,
            r#"{"kind":"event_times","from":1,"t0":1000,"events":[[0,"run_started"],[5,"text_delta"],[10,"flow_finished"]]}"#,
            "not json, with event_times in it",
            r#"{"kind":"event_times","from":3,"t0":2000,"events":[[0,"state_change"],[7,"run_finished"]]}"#,
            r#"{"kind":"event_times","from":9,"t0":1,"events":[["bad"],[1,"log"]]}"#,
        ]
        .join("\n");
        let times = read(&text);
        let at = |seq| times.get(&seq).map(|(ms, kind)| (*ms, kind.as_str()));
        assert_eq!(at(1), Some((1000, "run_started")));
        assert_eq!(at(2), Some((1005, "text_delta")));
        assert_eq!(at(3), Some((2000, "state_change")), "the later line's");
        assert_eq!(at(4), Some((2007, "run_finished")));
        assert_eq!(at(9), None, "a damaged entry ends its line");
    }
}
