//! Which of a run's stored events a replay of its journal emits again: the
//! dispatcher skips those when a run continues (a resume, an answered pause),
//! and time travel counts its moments in them.

use serde_json::Value;
use sr_runtime::event::branch_of;

use crate::store::{Store, StoreError};

/// Whether a replay emits an event of this type again, wherever it is: not a
/// text delta (a served model call's), not a `run_finished` (see [`repeated`]).
pub fn counted(kind: &str) -> bool {
    !matches!(kind, "text_delta" | "run_finished")
}

/// For each of a run's stored events (their types, in id order), whether a
/// replay of its journal emits it again, in that order. Not text deltas, not
/// a `run_finished` (a pause's, or the end, which a replay emits after the
/// others), and not what a run that paused for a question emitted while it
/// unwound (the flows and agents it left, between the question and the
/// pause's `run_finished`): the run that went on from its journal did not
/// leave them, and its answer's state change comes next instead. A question
/// answered at once is followed by that state change, not by a pause. A run
/// that stopped in doubt about a tool call (`tool_in_doubt`) is the same: the
/// run that goes on with its decision emits the `tool_in_doubt` again, then
/// the call's `tool_result`, not what the stop unwound; a decision taken at
/// once is followed by that `tool_result`.
pub fn repeated<S: AsRef<str>>(kinds: &[S]) -> Vec<bool> {
    let mut repeated: Vec<bool> = kinds.iter().map(|k| counted(k.as_ref())).collect();
    // The open question: where it was asked, and the event that answers it at once.
    let mut question: Option<(usize, &str)> = None;
    for (i, kind) in kinds.iter().enumerate() {
        match kind.as_ref() {
            "human_input_requested" => question = Some((i, "state_change")),
            "tool_in_doubt" => question = Some((i, "tool_result")),
            "run_finished" => {
                if let Some((asked, _)) = question.take() {
                    repeated[asked + 1..i].fill(false);
                }
            }
            answer if question.is_some_and(|(_, answered_by)| answered_by == answer) => question = None,
            _ => {}
        }
    }
    repeated
}

/// The event's type as stored.
pub fn kind_of(event: &Value) -> String {
    let kind = event["type"].as_str().unwrap_or_default();
    let kind = if kind == "event_too_large" { event["original_type"].as_str().unwrap_or(kind) } else { kind };
    kind.to_string()
}

/// Events read from the store at once.
const BATCH: usize = 4096;

/// A stored event as a replay finds it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub id: u64,
    /// Its type ([`kind_of`]).
    pub kind: String,
    /// The `parallel` branches it was emitted in, outermost first: their
    /// threads' ids (`branch:ID` in its path); none on the main thread.
    pub branches: Vec<u32>,
}

/// The branches an event's `path` names, outermost first.
pub fn branches_of(event: &Value) -> Vec<u32> {
    let path = event["path"].as_array().map(Vec::as_slice).unwrap_or_default();
    path.iter().filter_map(|p| branch_of(p.as_str()?)).collect()
}

/// A run's stored events, all of them, in id order.
pub async fn stored_events(store: &Store, run: &str) -> Result<Vec<Stored>, StoreError> {
    let mut events = Vec::new();
    let mut after = 0;
    loop {
        let batch = store.events_after(run, after, BATCH).await?;
        let Some((newest, _)) = batch.last() else { break };
        after = *newest;
        for (id, text) in batch {
            let event = serde_json::from_str(&text).unwrap_or(Value::Null);
            events.push(Stored { id, kind: kind_of(&event), branches: branches_of(&event) });
        }
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_pause_unwinds() {
        let paused = ["human_input_requested", "agent_finished", "flow_finished", "run_finished", "state_change"];
        assert_eq!(repeated(&paused), [true, false, false, false, true]);
        // Answered at once: the run went on, and what it did is repeated.
        let answered = ["human_input_requested", "state_change", "flow_finished", "run_finished"];
        assert_eq!(repeated(&answered), [true, true, true, false]);
        let in_doubt = ["tool_call", "tool_in_doubt", "agent_finished", "flow_finished", "run_finished"];
        assert_eq!(repeated(&in_doubt), [true, true, false, false, false]);
        let decided_at_once = ["tool_call", "tool_in_doubt", "tool_result", "agent_finished", "run_finished"];
        assert_eq!(repeated(&decided_at_once), [true, true, true, true, false]);
        let deltas = ["run_started", "text_delta", "model_response", "run_finished"];
        assert_eq!(repeated(&deltas), [true, false, true, false]);
    }

    #[test]
    fn an_oversized_event_keeps_its_type() {
        let event = serde_json::json!({"type": "event_too_large", "original_type": "tool_result"});
        assert_eq!(kind_of(&event), "tool_result");
        assert_eq!(kind_of(&serde_json::json!({"type": "log"})), "log");
    }

    #[test]
    fn an_event_names_its_branches() {
        let event = |path: Value| serde_json::json!({"type": "log", "path": path});
        let nested = event(serde_json::json!(["flow:main", "branch:3", "agent:a", "branch:7"]));
        assert_eq!(branches_of(&nested), [3, 7]);
        for odd in [serde_json::json!([]), serde_json::json!(["branch:x", 5, "branch:"]), Value::Null] {
            assert_eq!(branches_of(&event(odd)), Vec::<u32>::new());
        }
    }
}
