//! How a run ends (or stops to wait for a human): its status, result and
//! error, the events it emitted since the last batch stored
//! (`copies::RunJournal`), and its last events from its `run_finished` on.
//! The store writes them in one transaction (`RunStore::end`, `RunStore::finish`), so a run's
//! `run_finished` is stored exactly when its status says it stopped.

use serde_json::Value;
use sr_runtime::event::{Event, Payload, Usage};

use super::RunStatus;
use super::record::{JournalLines, Record};

/// An event over this many bytes of JSON is stored and streamed as an
/// `event_too_large` event that keeps its id, type and size.
pub const MAX_EVENT_BYTES: usize = 1 << 20;

pub struct Ending {
    pub status: RunStatus,
    pub result: Option<Value>,
    pub error: Option<String>,
    /// Events not stored yet, under the ids they were given, before `events`.
    pending: Vec<(u64, String)>,
    /// The run's `run_finished` and whatever the runtime emitted after it.
    events: Vec<Event>,
    /// What the run's attempt changed of its session's record, stored with its end.
    pub record: Option<Record>,
    /// The last lines of the attempt's journal, which record no effect (its
    /// `end`), stored with the run's end.
    pub journal: Option<JournalLines>,
}

impl Ending {
    /// A run's end. `tail` is what the runtime emitted from its
    /// `run_finished` on; when it has none (a cancel, or a failure that kept
    /// the run from its end), the server writes a `run_finished` saying
    /// `status`, under invocation id `invocation` (the run's events', or
    /// empty when the server has none at hand), with no usage counted.
    pub fn new(
        status: RunStatus,
        result: Option<Value>,
        error: Option<String>,
        tail: Vec<Event>,
        invocation: &str,
    ) -> Ending {
        let events = match tail.first() {
            Some(Event { payload: Payload::RunFinished { .. }, .. }) => tail,
            _ => vec![Event {
                seq: 0,
                invocation_id: invocation.to_string(),
                path: Vec::new(),
                // The server ends the run now (a cancel, a failure to start).
                at_ms: Some(sr_runtime::event::now_ms()),
                payload: Payload::RunFinished {
                    status: status.to_runtime().unwrap_or(sr_runtime::event::RunStatus::Failed),
                    result: result.clone(),
                    error: error.clone(),
                    usage: Usage::default(),
                },
            }],
        };
        Ending { status, result, error, pending: Vec::new(), events, record: None, journal: None }
    }

    /// The ending, storing `record` (the session as the attempt left it) with it.
    pub fn recording(self, record: Option<Record>) -> Ending {
        Ending { record, ..self }
    }

    /// The ending, storing `journal` (lines its journal's copy held back) with it.
    pub fn with_journal(self, journal: Option<JournalLines>) -> Ending {
        Ending { journal, ..self }
    }

    /// The ending, storing `pending` (events given their ids, not stored
    /// yet) before its last events.
    pub fn with_events(self, pending: Vec<(u64, String)>) -> Ending {
        Ending { pending, ..self }
    }

    /// The ending's events as stored: those pending, then the last ones
    /// under the ids after them (from `first` on when none is pending:
    /// `first` is one after the last id stored).
    pub fn stored_events(&self, first: u64) -> Vec<(u64, String)> {
        let first = self.pending.last().map_or(first, |(id, _)| id + 1);
        let last = self.events.iter().zip(first..).map(|(event, id)| (id, stored(event, id)));
        self.pending.iter().cloned().chain(last).collect()
    }

    /// Whether the ending's ids follow from those pending, so the store
    /// need not read its last id.
    pub fn numbered(&self) -> bool {
        !self.pending.is_empty()
    }
}

/// Event `event` as stored under id `id`: its JSON with `seq` the id, or an
/// `event_too_large` event in its place.
pub fn stored(event: &Event, id: u64) -> String {
    let mut event = event.clone();
    event.seq = id;
    let json = serde_json::to_string(&event).unwrap_or_default();
    if json.len() <= MAX_EVENT_BYTES {
        return json;
    }
    let kind = serde_json::to_value(&event.payload).ok().and_then(|v| v["type"].as_str().map(str::to_string));
    serde_json::json!({
        "seq": id,
        "invocation_id": event.invocation_id,
        "path": event.path,
        "at_ms": event.at_ms,
        "type": "event_too_large",
        "original_type": kind,
        "bytes": json.len(),
    })
    .to_string()
}

#[cfg(test)]
impl Ending {
    /// An ending with the `run_finished` the server writes.
    pub fn of(status: RunStatus, result: Option<&Value>, error: Option<&str>) -> Ending {
        Ending::new(status, result.cloned(), error.map(str::to_string), Vec::new(), "")
    }
}
