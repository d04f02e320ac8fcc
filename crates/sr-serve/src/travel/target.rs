//! Which moment of a replay an event id names. A replay emits the run's
//! events again, but not one for one with what the store kept: text deltas
//! of served model calls are not streamed again, and a run that paused and
//! went on stored its unwinding and a `run_finished` (paused) in the middle
//! ([`crate::replayed`]). So a moment is counted in the other events: event `seq`
//! is the moment when the replay has emitted `count` of them. The
//! dispatcher counts the same way what a continued run does not store again.

use crate::replayed::{Stored, repeated};

/// Where a replay stops, counted in [`counted`] events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub seq: u64,
    /// The event's type (`original_type` of an `event_too_large`).
    pub kind: String,
    /// Counted events up to and including `seq`.
    pub count: u64,
    /// The types of those counted events, in order, to check the replay against.
    pub kinds: Vec<String>,
    /// `seq` is the run's last stored event.
    pub last: bool,
    /// The branches each counted event of the whole run was emitted in
    /// ([`Stored::branches`]), in order: a replay follows its threads by them.
    pub branches: Vec<Vec<u32>>,
}

/// Why an event id names no moment of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beyond(pub String);

/// Refuses an event id that is not one of a run's ids `1..=last`.
pub fn check(seq: u64, last: u64) -> Result<(), Beyond> {
    if last == 0 {
        return Err(Beyond(format!("at: the run has no events; {seq} is beyond it")));
    }
    if seq == 0 || seq > last {
        return Err(Beyond(format!("at: the run's events are 1 to {last}; {seq} is beyond them")));
    }
    Ok(())
}

/// The target of event `seq` among a run's stored `events` (in id order, all
/// of them), the last of which is `last`.
pub fn locate(events: &[Stored], seq: u64, last: u64) -> Result<Target, Beyond> {
    check(seq, last)?;
    let all: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    let mut kinds = Vec::new();
    let mut kind = String::new();
    let mut branches = Vec::new();
    for (event, repeated) in events.iter().zip(repeated(&all)) {
        if repeated {
            branches.push(event.branches.clone());
        }
        if event.id > seq {
            continue;
        }
        if repeated {
            kinds.push(event.kind.clone());
        }
        if event.id == seq {
            kind.clone_from(&event.kind);
        }
    }
    if kind.is_empty() {
        return Err(Beyond(format!("at: the run has no event {seq}")));
    }
    Ok(Target { seq, kind, count: kinds.len() as u64, kinds, last: seq == last, branches })
}

impl Target {
    /// The number of counted events emitted when the model reply that event
    /// `seq` belongs to is about to reach its agent: `None` unless the event
    /// is a model call's (its request, or its response).
    pub fn reply_count(&self) -> Option<u64> {
        match self.kind.as_str() {
            "model_request" => Some(self.count),
            "model_response" => Some(self.count - 1),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(kinds: &[&str]) -> Vec<Stored> {
        let stored = |(i, k): (usize, &&str)| Stored { id: i as u64 + 1, kind: k.to_string(), branches: Vec::new() };
        kinds.iter().enumerate().map(stored).collect()
    }

    #[test]
    fn deltas_and_a_pause_in_the_middle_are_not_counted() {
        // As `sr serve` stores a run that paused and was answered.
        let run = events(&[
            "run_started",
            "model_request",
            "text_delta",
            "text_delta",
            "model_response",
            "human_input_requested",
            "flow_finished",
            "run_finished",
            "model_request",
            "run_finished",
        ]);
        let at = |seq| locate(&run, seq, 10).unwrap();
        assert_eq!((at(1).count, at(2).count, at(4).count, at(5).count), (1, 2, 2, 3));
        let kinds = |k: &[&str]| k.iter().map(|k| k.to_string()).collect::<Vec<_>>();
        assert_eq!(at(5).kinds, kinds(&["run_started", "model_request", "model_response"]));
        assert_eq!((at(6).count, at(7).count, at(8).count, at(9).count, at(10).count), (4, 4, 4, 5, 5));
        let mut paused = kinds(&["run_started", "model_request", "model_response", "human_input_requested"]);
        assert_eq!(at(8).kinds, paused, "the pause's unwinding is not counted");
        paused.push("model_request".to_string());
        assert_eq!(at(9).kinds, paused, "after the pause, events are counted again");
        assert!(at(10).last && !at(9).last);
        assert_eq!((at(2).reply_count(), at(5).reply_count(), at(4).reply_count()), (Some(2), Some(2), None));
    }

    #[test]
    fn the_branches_of_every_counted_event_of_the_run_are_kept() {
        let mut run = events(&["run_started", "model_request", "text_delta", "model_request", "state_change"]);
        run.extend(events(&["human_input_requested", "flow_finished", "run_finished", "state_change", "run_finished"]));
        for (i, event) in run.iter_mut().enumerate() {
            event.id = i as u64 + 1;
            event.branches = match i {
                1 | 2 => vec![1],
                3 => vec![2],
                4 => vec![2, 5],
                _ => vec![],
            };
        }
        let target = locate(&run, 2, 10).unwrap();
        assert_eq!(target.count, 2);
        // Past the target too; not the delta, the unwinding or the run_finisheds.
        assert_eq!(target.branches, [vec![], vec![1], vec![2], vec![2, 5], vec![], vec![]]);
    }

    #[test]
    fn ids_outside_the_run_name_the_field() {
        let run = events(&["run_started", "run_finished"]);
        for seq in [0, 3, u64::MAX] {
            let Beyond(message) = locate(&run, seq, 2).unwrap_err();
            assert!(message.starts_with("at: the run's events are 1 to 2"), "{message}");
        }
        assert!(locate(&[], 1, 0).unwrap_err().0.contains("no events"));
        assert!(check(0, 0).is_err() && check(1, 1).is_ok() && check(2, 1).is_err());
        // A gap in the ids (never made by the store) is still an error, not a panic.
        let mut gapped = events(&["run_started", "run_finished"]);
        gapped[1].id = 3;
        assert_eq!(locate(&gapped, 2, 3).unwrap_err().0, "at: the run has no event 2");
    }
}
