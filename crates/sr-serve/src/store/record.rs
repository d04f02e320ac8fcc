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
    /// are written, `RunStore::write_batch`; not saved with the record).
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

/// Lines of one attempt's journal, stored in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalLines {
    pub session: String,
    /// The attempt (the runtime's run number).
    pub attempt: i64,
    /// The attempt it continues and the step it went live from.
    pub origin: Option<(i64, Option<u64>)>,
    /// Whether these lines begin the attempt (its inherited lines first):
    /// the attempt is recorded running and as its run's last, the answer
    /// the run waited with is taken, and whatever an earlier claim stored
    /// of the attempt is replaced.
    pub opening: bool,
    /// The number of the first of `lines` in the journal (0-based).
    pub first: i64,
    pub lines: Vec<String>,
}
