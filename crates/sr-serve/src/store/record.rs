//! What the runtime keeps of a session (its conversation, its attempts and
//! their journals), as the store holds it: a replica's state directory is a
//! cache of it (`crate::cache`). A run's end stores what its attempt changed
//! in the same transaction as its status (`Ending::recording`).

use serde_json::Value;
use sr_runtime::session::RunLineage;

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Record {
    pub session: String,
    /// The conversation, oldest first (the runtime's messages, as JSON).
    pub messages: Vec<Value>,
    /// The runtime's runs of the session, in order.
    pub attempts: Vec<RunLineage>,
    /// Journals by attempt, each as its lines (copied to the store as they
    /// are written, `RunStore::append_journal_line`; not saved with the record).
    pub journals: Vec<(i64, Vec<String>)>,
}

impl Record {
    /// The journal of `attempt` as the runtime reads it (one line each, `\n` ended).
    pub fn journal_text(&self, attempt: i64) -> Option<String> {
        self.journals.iter().find(|(a, _)| *a == attempt).map(|(_, lines)| {
            lines.iter().fold(String::new(), |mut text, line| {
                text.push_str(line);
                text.push('\n');
                text
            })
        })
    }
}

/// One attempt of a session, as its journal's copy names it.
pub struct Attempt<'a> {
    pub session: &'a str,
    pub number: i64,
    /// The attempt it continues and the step it went live from.
    pub origin: Option<(i64, Option<u64>)>,
}
