//! A claimed run's journal, copied line by line to the store as the runtime
//! writes it (`sr_runtime::launch::JournalCopies`): a line is committed in
//! the store, fenced by the claim's epoch, before the step it records counts
//! as done, as the file's own write is. So a replica that dies at any
//! instant leaves its run's journal (model replies, tool results, file
//! checkpoints) to whichever replica claims the run next, and a replica that
//! lost its claim cannot add a line.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use sr_llm::LineCopy;
use sr_runtime::launch::JournalCopies;

use crate::Server;
use crate::store::{Attempt, StoreError, committed};

/// The copies of run `run`'s attempts under its claim `epoch`.
pub struct StoreCopies {
    pub server: Arc<Server>,
    pub run: String,
    pub epoch: i64,
}

impl JournalCopies for StoreCopies {
    fn open(
        &self,
        session: &str,
        number: i64,
        origin: Option<(i64, Option<u64>)>,
        inherited: &str,
    ) -> Result<Arc<dyn LineCopy>, String> {
        let attempt = Attempt { session, number, origin };
        let lines: Vec<String> = inherited.lines().map(str::to_string).collect();
        committed(self.server.store.open_journal(&self.run, self.epoch, &attempt, &lines))
            .map_err(|e| self.refused(e))?;
        Ok(Arc::new(StoreLines {
            copies: StoreCopies { server: self.server.clone(), run: self.run.clone(), epoch: self.epoch },
            session: session.to_string(),
            number,
            origin,
            next: AtomicI64::new(lines.len() as i64),
        }))
    }
}

impl StoreCopies {
    /// The error a refused copy fails the journal's write with; a fenced one
    /// also stops the run here.
    fn refused(&self, error: StoreError) -> String {
        if matches!(error, StoreError::Fenced { .. }) {
            self.server.lose(&self.run, "the run's claim was lost");
        }
        format!("cannot copy the journal to the store: {error}")
    }
}

/// One attempt's journal in the store: the next line's number.
struct StoreLines {
    copies: StoreCopies,
    session: String,
    number: i64,
    origin: Option<(i64, Option<u64>)>,
    next: AtomicI64,
}

impl LineCopy for StoreLines {
    fn copy(&self, body: &str) -> Result<(), String> {
        // The cassette calls this under its file's lock: one line at a time, in order.
        let line = self.next.fetch_add(1, Ordering::SeqCst);
        let attempt = Attempt { session: &self.session, number: self.number, origin: self.origin };
        committed(self.copies.server.store.append_journal_line(
            &self.copies.run,
            self.copies.epoch,
            &attempt,
            line,
            body,
        ))
        .map_err(|e| self.copies.refused(e))
    }
}
