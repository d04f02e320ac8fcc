//! A claimed run's journal, copied to the store as the runtime writes it
//! (`sr_runtime::launch::JournalCopies`), fenced by the claim's epoch. A
//! line that records an effect or what a later effect depends on (a model
//! reply, a tool call's start and result, a value, an answer, a decision)
//! is committed before the runtime goes on, as the file's own write is, with
//! every line held back before it. Lines that record no effect (the
//! journal's start and MCP listings, a block's interleaving, file blobs,
//! the events' times, the run's `end`) are held back: they ride with the
//! next line committed, with the claim check before the run's next effect
//! ([`RunJournal::before_effect`]; events' times alone wait on), or with the
//! run's end. So the store always holds a prefix of the journal
//! in which every step counted as done is recorded, a replica that dies at any
//! instant leaves its run to whichever replica claims it next, and a
//! replica that lost its claim cannot add a line.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use sr_llm::LineCopy;
use sr_runtime::launch::JournalCopies;

use crate::Server;
use crate::store::{JournalLines, StoreError, committed};

/// The journal of one claim of run `run`: the lines the store does not have yet.
pub struct RunJournal {
    server: Arc<Server>,
    run: String,
    epoch: i64,
    /// The attempt's lines held back (none before the attempt's journal opens).
    held: Mutex<Option<JournalLines>>,
}

impl RunJournal {
    pub fn new(server: Arc<Server>, run: String, epoch: i64) -> Arc<RunJournal> {
        Arc::new(RunJournal { server, run, epoch, held: Mutex::new(None) })
    }

    /// Commits the lines held back, or with none only checks that the claim
    /// holds: before each effect of the run (`fence`). A claim that is lost
    /// stops the run, and so does a store that does not answer for a whole
    /// lease (the others may have taken the run by then).
    pub fn before_effect(&self) -> Result<(), String> {
        off_workers(|| {
            let mut held = crate::locked(&self.held);
            // Events' times alone wait on: no effect depends on them.
            let times_only = held.as_ref().is_some_and(|l| !l.opening && l.lines.iter().all(|line| times(line)));
            if times_only { self.store(None) } else { self.commit(&mut held) }
        })
    }

    /// The lines still held back, for the run's end to store (`Ending::with_journal`).
    pub fn rest(&self) -> Option<JournalLines> {
        crate::locked(&self.held).take().filter(|lines| lines.opening || !lines.lines.is_empty())
    }

    /// Stores what `held` holds, asking again while the store does not
    /// answer, for at most a lease; then starts the next batch.
    fn commit(&self, held: &mut Option<JournalLines>) -> Result<(), String> {
        self.store(held.as_ref().filter(|lines| lines.opening || !lines.lines.is_empty()))?;
        if let Some(lines) = held {
            lines.first += lines.lines.len() as i64;
            lines.lines.clear();
            lines.opening = false;
        }
        Ok(())
    }

    /// Writes `lines` (with none: checks that the claim holds), asking again
    /// while the store does not answer, for at most a lease.
    fn store(&self, lines: Option<&JournalLines>) -> Result<(), String> {
        let started = Instant::now();
        loop {
            match committed(self.server.store.write_journal(&self.run, self.epoch, lines)) {
                Ok(()) => break,
                Err(error @ StoreError::Fenced { .. }) => {
                    self.server.lose(&self.run, "the run's claim was lost");
                    return Err(format!("cannot copy the journal to the store: {error}"));
                }
                Err(error) if started.elapsed() < self.server.settings.lease => {
                    tracing::warn!(%error, "cannot copy the run's journal to the store; asking again");
                    std::thread::sleep(Duration::from_millis(250));
                }
                Err(error) => {
                    tracing::error!(%error, "cannot copy the run's journal to the store for a whole lease");
                    self.server.lose(&self.run, "the store could not be reached for a whole lease");
                    return Err(format!("cannot copy the journal to the store: {error}"));
                }
            }
        }
        Ok(())
    }

    /// Adds a line the runtime wrote; commits it with those held back
    /// unless it records no effect.
    fn add(&self, line: &str) -> Result<(), String> {
        off_workers(|| {
            let mut held = crate::locked(&self.held);
            let Some(lines) = held.as_mut() else {
                return Err("cannot copy the journal to the store: the run's attempt has ended".to_string());
            };
            lines.lines.push(line.to_string());
            if held_back(line) { Ok(()) } else { self.commit(&mut held) }
        })
    }
}

/// Runs `wait` (it may wait on the lines' lock, the store, or between two
/// tries) on a thread the async workers can do without, on the server's
/// multi-thread runtime; directly elsewhere.
fn off_workers<T>(wait: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(wait),
        _ => wait(),
    }
}

/// Whether a journal line records no effect and nothing a later effect
/// depends on, so it may wait for the next line committed (the events'
/// times too: a crash that loses some makes those events' times the wall
/// clock's, as it does for a file journal's unflushed tail).
fn held_back(line: &str) -> bool {
    kind(line).is_some_and(|k| {
        matches!(k.as_str(), "meta" | "mcp_tools" | "mcp_notice" | "interleave" | "blob" | "end" | "event_times")
    })
}

/// Whether a journal line holds only events' times.
fn times(line: &str) -> bool {
    kind(line).is_some_and(|k| k == "event_times")
}

fn kind(line: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Kind {
        kind: String,
    }
    serde_json::from_str::<Kind>(line).ok().map(|k| k.kind)
}

/// The copies of a claim's attempts (`sr_runtime::launch::Storage::copies`).
pub struct StoreCopies(pub Arc<RunJournal>);

impl JournalCopies for StoreCopies {
    fn open(
        &self,
        session: &str,
        number: i64,
        origin: Option<(i64, Option<u64>)>,
        inherited: &str,
    ) -> Result<Arc<dyn LineCopy>, String> {
        let lines = inherited.lines().map(str::to_string).collect();
        // Stored with the first line committed: a journal that never gets
        // one was cut off before its run made any effect.
        let opening =
            JournalLines { session: session.to_string(), attempt: number, origin, opening: true, first: 0, lines };
        *crate::locked(&self.0.held) = Some(opening);
        Ok(Arc::new(StoreLines(self.0.clone())))
    }
}

/// The runtime's handle on the attempt's copy.
struct StoreLines(Arc<RunJournal>);

impl LineCopy for StoreLines {
    fn copy(&self, line: &str) -> Result<(), String> {
        // The cassette calls this under its file's lock: one line at a time, in order.
        self.0.add(line)
    }
}
