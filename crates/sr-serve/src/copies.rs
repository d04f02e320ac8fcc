//! A claimed run's journal and events, copied to the store as the runtime
//! writes them (`sr_runtime::launch::JournalCopies`, the run's event sink),
//! fenced by the claim's epoch. A line that records an effect or what a
//! later effect depends on (a model reply, a tool call's start and result,
//! a value, an answer, a decision) is committed before the runtime goes on,
//! as the file's own write is, with every line held back before it and
//! every event emitted since the last batch: one transaction and one
//! notification per step. Lines that record no effect (the journal's start
//! and MCP listings, a block's interleaving, file blobs, the events' times,
//! the run's `end`) are held back: they ride with the next line committed,
//! with the claim check before the run's next effect
//! ([`RunJournal::before_effect`]; events' times alone wait on), or with the
//! run's end. Events ride with the next lines committed or with the run's
//! end; those that wait longer than [`LATE`] ([`LATE_TEXT`] for a model's
//! text deltas), as during a long model or tool call, are committed on
//! their own ([`RunJournal::flush_late`]). So the store always
//! holds a prefix of the journal in which every step counted as done is
//! recorded and a prefix of the events, a replica that dies at any instant
//! leaves its run to whichever replica claims it next (which emits the
//! events not stored again, as its replay of the journal goes past them),
//! and a replica that lost its claim cannot add a line or an event.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use sr_llm::LineCopy;
use sr_runtime::event::{Event, Payload};
use sr_runtime::launch::JournalCopies;
use tokio::sync::Notify;

use crate::Server;
use crate::store::{JournalLines, StoreError, committed, stored};

/// How long an event waits for a batch of the journal to take it before it
/// is committed on its own: the longest a stream waits for it.
pub const LATE: Duration = Duration::from_millis(100);

/// The same for a text delta, which a stream shows as the model writes
/// (the embedded store's commits are local).
pub const LATE_TEXT: Duration = Duration::from_millis(1);

/// The same with PostgreSQL, where a commit is a round trip and a sync:
/// soon enough to read the text as it comes, late enough that a reply a
/// model streams at once is committed with its journal line (at 1 ms, a
/// reply's deltas were often a commit of their own).
pub const LATE_TEXT_SHARED: Duration = Duration::from_millis(50);

/// The journal and events of one claim of run `run`: what the store does not have yet.
pub struct RunJournal {
    server: Arc<Server>,
    run: String,
    epoch: i64,
    /// The attempt's lines held back (none before the attempt's journal opens);
    /// locked only through [`RunJournal::with_held`].
    held: Mutex<Option<JournalLines>>,
    /// The events emitted and not stored yet; taken only while `held` is
    /// locked, so batches are stored in the order of their ids.
    events: Mutex<Pending>,
    /// Told when an event is added: [`RunJournal::flush_late`] waits on it.
    added: Notify,
}

#[derive(Default)]
struct Pending {
    /// The id the next event gets.
    next: u64,
    events: Vec<(u64, String)>,
    /// When the events are committed on their own if no batch took them.
    due: Option<tokio::time::Instant>,
}

impl Pending {
    /// The events, for a batch.
    fn take(&mut self) -> Vec<(u64, String)> {
        self.due = None;
        std::mem::take(&mut self.events)
    }
}

impl RunJournal {
    pub fn new(server: Arc<Server>, run: String, epoch: i64) -> Arc<RunJournal> {
        Arc::new(RunJournal {
            server,
            run,
            epoch,
            held: Mutex::new(None),
            events: Mutex::default(),
            added: Notify::new(),
        })
    }

    /// The next event gets id `next` (one after the last the store holds).
    pub fn number_from(&self, next: u64) {
        crate::locked(&self.events).next = next;
    }

    /// Gives `event` the run's next id and keeps it for the next batch.
    pub fn add_event(&self, event: &Event) {
        let wait = match event.payload {
            Payload::TextDelta { .. } if self.server.settings.shared => LATE_TEXT_SHARED,
            Payload::TextDelta { .. } => LATE_TEXT,
            _ => LATE,
        };
        {
            let mut pending = crate::locked(&self.events);
            let id = pending.next;
            pending.next += 1;
            pending.events.push((id, stored(event, id)));
            let due = tokio::time::Instant::now() + wait;
            pending.due = Some(pending.due.map_or(due, |earlier| earlier.min(due)));
        }
        self.added.notify_one();
    }

    /// Commits the lines held back (with the events pending), or with none
    /// only checks that the claim holds: before each effect of the run
    /// (`fence`). A claim that is lost stops the run, and so does a store
    /// that does not answer for a whole lease (the others may have taken
    /// the run by then).
    pub fn before_effect(&self) -> Result<(), CopyError> {
        self.with_held(|held| {
            // Events' times alone wait on: no effect depends on them.
            let times_only = held.as_ref().is_some_and(|l| !l.opening && l.lines.iter().all(|line| times(line)));
            if times_only { self.store(None, &[]) } else { self.commit(held) }
        })
    }

    /// The lines still held back and the events pending, for the run's end
    /// to store (`Ending::with_journal`, `Ending::with_events`).
    pub fn rest(&self) -> (Option<JournalLines>, Vec<(u64, String)>) {
        self.with_held(|held| {
            let lines = held.take().filter(|lines| lines.opening || !lines.lines.is_empty());
            (lines, crate::locked(&self.events).take())
        })
    }

    /// Runs `f` with the lines held back locked, off the workers, the only
    /// way to take that lock: its holder may wait on the store, whose
    /// connections the workers drive, so a worker waiting for it can stall
    /// every run of the replica (3 replicas under load did, when the run's
    /// end took it on a worker).
    fn with_held<T>(&self, f: impl FnOnce(&mut Option<JournalLines>) -> T) -> T {
        off_workers(|| f(&mut crate::locked(&self.held)))
    }

    /// Commits the events that no batch took within [`LATE`] of the first
    /// of them ([`LATE_TEXT`] or [`LATE_TEXT_SHARED`] of a text delta), until the claim's task
    /// aborts this.
    pub async fn flush_late(self: Arc<Self>) {
        loop {
            let due = crate::locked(&self.events).due;
            match due {
                None => self.added.notified().await,
                Some(due) => tokio::select! {
                    () = tokio::time::sleep_until(due) => self.flush(),
                    // An event that may be due sooner.
                    () = self.added.notified() => {}
                },
            }
        }
    }

    /// Commits the events pending on their own; a store that does not
    /// answer keeps them for the next batch.
    fn flush(&self) {
        self.with_held(|_order| {
            let events = crate::locked(&self.events).take();
            if events.is_empty() {
                return;
            }
            match committed(self.server.store.write_batch(&self.run, self.epoch, None, &events)) {
                Ok(()) => self.server.changed(&self.run),
                Err(error @ StoreError::Fenced { .. }) => {
                    tracing::warn!(%error, "the events of a run this replica lost were refused");
                    self.server.lose(&self.run, "the run's claim was lost");
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot store the run's events; they wait for its next batch");
                    let mut pending = crate::locked(&self.events);
                    let later = std::mem::replace(&mut pending.events, events);
                    pending.events.extend(later);
                    pending.due = Some(tokio::time::Instant::now() + LATE);
                }
            }
        })
    }

    /// Stores what `held` holds with the events pending (with no lines:
    /// only checks the claim, and the events wait), asking again while the
    /// store does not answer, for at most a lease; then starts the next batch.
    fn commit(&self, held: &mut Option<JournalLines>) -> Result<(), CopyError> {
        let lines = held.as_ref().filter(|lines| lines.opening || !lines.lines.is_empty());
        let events = match lines {
            Some(_) => crate::locked(&self.events).take(),
            None => Vec::new(),
        };
        self.store(lines, &events)?;
        if let Some(lines) = held {
            lines.first += lines.lines.len() as i64;
            lines.lines.clear();
            lines.opening = false;
        }
        if !events.is_empty() {
            self.server.changed(&self.run);
        }
        Ok(())
    }

    /// Writes `lines` and `events` (with neither: checks that the claim
    /// holds), asking again while the store does not answer, for at most a lease.
    fn store(&self, lines: Option<&JournalLines>, events: &[(u64, String)]) -> Result<(), CopyError> {
        let started = Instant::now();
        loop {
            match committed(self.server.store.write_batch(&self.run, self.epoch, lines, events)) {
                Ok(()) => break,
                Err(error @ StoreError::Fenced { .. }) => {
                    self.server.lose(&self.run, "the run's claim was lost");
                    return Err(CopyError::Store(error));
                }
                Err(error) if started.elapsed() < self.server.settings.lease => {
                    tracing::warn!(%error, "cannot copy the run's journal to the store; asking again");
                    std::thread::sleep(Duration::from_millis(250));
                }
                Err(error) => {
                    tracing::error!(%error, "cannot copy the run's journal to the store for a whole lease");
                    self.server.lose(&self.run, "the store could not be reached for a whole lease");
                    return Err(CopyError::Store(error));
                }
            }
        }
        Ok(())
    }

    /// Adds a line the runtime wrote; commits it with those held back
    /// unless it records no effect.
    fn add(&self, line: &str) -> Result<(), CopyError> {
        self.with_held(|held| {
            let Some(lines) = held.as_mut() else { return Err(CopyError::Ended) };
            lines.lines.push(line.to_string());
            if held_back(line) { Ok(()) } else { self.commit(held) }
        })
    }
}

/// Why a run's journal lines did not reach the store.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// The store refused them (the claim was lost) or did not answer for a whole lease.
    #[error("cannot copy the journal to the store: {0}")]
    Store(#[source] StoreError),
    /// A line came after the run's attempt ended.
    #[error("cannot copy the journal to the store: the run's attempt has ended")]
    Ended,
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
    ) -> Arc<dyn LineCopy> {
        let lines = inherited.lines().map(str::to_string).collect();
        // Stored with the first line committed: a journal that never gets
        // one was cut off before its run made any effect.
        let opening =
            JournalLines { session: session.to_string(), attempt: number, origin, opening: true, first: 0, lines };
        *crate::locked(&self.0.held) = Some(opening);
        Arc::new(StoreLines(self.0.clone()))
    }
}

/// The runtime's handle on the attempt's copy.
struct StoreLines(Arc<RunJournal>);

impl LineCopy for StoreLines {
    fn copy(&self, line: &str) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        // The cassette calls this under its file's lock: one line at a time, in order.
        Ok(self.0.add(line)?)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::store::{NewRun, Store};

    /// Many runs end at once, each taking its held lines while a step of
    /// the run commits its own, on a runtime of 2 workers and PostgreSQL,
    /// whose connections only the workers drive. A taker of the lines' lock
    /// that waited on a worker would stall them (3 replicas under load did,
    /// when the run's end took it so): a hang, which the watchdog fails.
    #[test]
    fn run_ends_racing_their_steps_never_stall_the_workers() {
        let Some(db) = sr_testing::postgres::start("copies-held") else { return };
        let url = db.url();
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime =
                tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
            runtime.block_on(race(&url));
            let _ = done.send(());
        });
        finished.recv_timeout(Duration::from_secs(120)).expect("the runs' ends and steps stalled the workers");
    }

    async fn race(url: &str) {
        const RUNS: usize = 32;
        let dir = std::env::temp_dir().join(format!("sr-serve-held-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = Store::connect(url, "a", Duration::from_secs(30)).await.unwrap();
        let server = Arc::new(crate::test_server_on(&dir, BTreeMap::new(), store));
        for n in 0..RUNS {
            let (id, session) = (format!("r{n}"), format!("s{n}"));
            let new = NewRun {
                id: &id,
                session: &session,
                workload: "w",
                entry: None,
                message: "hi",
                model: None,
                a2a: false,
            };
            server.store.submit(&new, false).await.unwrap();
        }
        let mut runs = Vec::new();
        for _ in 0..RUNS {
            let run = server.store.claim().await.unwrap().expect("a queued run");
            let journal = RunJournal::new(server.clone(), run.id.clone(), run.epoch);
            let lines = StoreCopies(journal.clone()).open(&run.session, 1, None, r#"{"kind":"meta"}"#);
            // Each line records an effect: it is committed while the lock is held.
            let steps = tokio::spawn(async move {
                let mut stored = 0;
                while stored < 20 && lines.copy(&format!(r#"{{"kind":"tool_result","n":{stored}}}"#)).is_ok() {
                    stored += 1;
                }
                stored
            });
            let end = tokio::spawn(async move {
                tokio::task::yield_now().await;
                journal.rest()
            });
            runs.push((steps, end));
        }
        for (steps, end) in runs {
            let stored = steps.await.unwrap();
            let (rest, _) = end.await.unwrap();
            // The end took what the steps had not committed: the opening when no step came first.
            assert_eq!(rest.is_some(), stored == 0, "{stored} lines stored before the end");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
