//! The server's records: sessions, the queue of runs with their status and
//! result, and every event of every run under the id the event stream gives
//! it. One type, two backends with one semantics: SQLite in the state
//! directory (`serve.db`, the embedded mode) or PostgreSQL shared by
//! replicas (`--database-url`). Every write is committed before it returns,
//! so a restart (after `kill -9` too) finds every run and event. Each
//! backend implements [`RunStore`]; its schema is the versioned files of
//! `migrations/<backend>/`, applied by [`migrate`].
//!
//! A claim gives the run an epoch, one more than its last; every write of a
//! claimed run (its events, attempt, end, lease) carries that epoch and is
//! refused ([`StoreError::Fenced`]) once another claim moved it on, so a
//! replica that lost a run can no longer write to it. In PostgreSQL a claim
//! also takes a lease (`lease_until`, kept by [`RunStore::heartbeat`]); a
//! running run whose lease has expired is claimed again by any replica.

mod ending;
mod migrate;
mod postgres;
mod record;
mod sqlite;
#[cfg(test)]
mod tests;

use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use std::collections::HashMap;

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
pub use sr_runtime::served::RunStatus;

pub use self::ending::{Ending, MAX_EVENT_BYTES, stored};
pub use self::record::{JournalLines, Record};
use tokio::sync::mpsc;

/// The server's store, whichever backend holds it; its calls are [`RunStore`]'s.
#[derive(Clone)]
pub struct Store {
    backend: Arc<dyn RunStore>,
}

/// A run as the API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    pub id: String,
    pub session: String,
    pub workload: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    pub status: RunStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What a run in doubt asks (`sr_runtime::in_doubt::Question`: tool,
    /// args, idempotency key); stored where an ended run keeps its result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<Value>,
    #[serde(skip)]
    pub message: String,
    #[serde(skip)]
    pub model: Option<String>,
    /// The runtime's run number of the last attempt (`None`: never started).
    #[serde(skip)]
    pub attempt_run: Option<i64>,
    /// The answer a paused run continues with, or the decision (`retry`,
    /// `skip`, `fail`) a run in doubt continues with.
    #[serde(skip)]
    pub pending_input: Option<String>,
    /// How many times the run was claimed; the writes of a claim carry it.
    #[serde(skip)]
    pub epoch: i64,
    /// Whether A2A added to the run (`RunStore::change_a2a`): the files its
    /// messages brought are placed before each attempt.
    #[serde(skip)]
    pub a2a: bool,
    /// The run's OpenTelemetry trace id (`RunStore::trace`), once it is traced.
    #[serde(skip)]
    pub trace_id: Option<String>,
}

impl RunRow {
    /// A run in doubt shows its stored question as such, not as a result.
    pub(crate) fn questioned(mut self) -> RunRow {
        if self.status == RunStatus::InDoubt {
            self.question = self.result.take();
        }
        self
    }
}

/// A run to add to the queue.
pub struct NewRun<'a> {
    pub id: &'a str,
    pub session: &'a str,
    pub workload: &'a str,
    pub entry: Option<&'a str>,
    pub message: &'a str,
    pub model: Option<&'a str>,
    /// An A2A task: its record is written before it is queued.
    pub a2a: bool,
}

/// A run as the studio lists it (`GET /v1/runs`).
pub struct RecentRun {
    pub id: String,
    pub session: String,
    pub workload: String,
    pub entry: Option<String>,
    pub status: RunStatus,
    pub error: Option<String>,
    pub created_ms: i64,
    pub updated_ms: i64,
    /// The run's last event (its `run_finished` once it ended).
    pub last_event: Option<String>,
}

/// Which sessions `RunStore::sessions` lists: those whose id or a run's
/// workload contains `q` (lowercase; any case matches), after the cursor
/// `before` (a session's `(active_ms, id)`: the list is newest first), at
/// most `limit`.
#[derive(Debug, Default, Clone)]
pub struct SessionPage {
    pub q: Option<String>,
    pub before: Option<(i64, String)>,
    pub limit: u32,
}

/// A session as the studio lists it (`GET /v1/sessions`).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: String,
    pub created_ms: i64,
    /// Its newest run's submission, or its creation: the list's order.
    pub active_ms: i64,
    pub runs: i64,
    pub last: Option<LastRun>,
    /// The workloads its runs ran, each once, newest first.
    pub workloads: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LastRun {
    pub id: String,
    pub created_ms: i64,
    pub status: RunStatus,
}

/// The SQL (`?N` placeholders, which PostgreSQL spells `$N`) of a page of
/// sessions: `contains` is the backend's substring test (`instr`, `strpos`).
/// Parameters: the search (or NULL), the cursor's `active_ms` and id (or
/// NULL), the limit.
fn sessions_sql(contains: &str) -> String {
    format!(
        "SELECT s.id, s.created_ms, s.active_ms, (SELECT COUNT(*) FROM runs AS r WHERE r.session = s.id)
         FROM sessions AS s
         WHERE (?1 IS NULL OR {contains}(lower(s.id), ?1) > 0
                OR EXISTS (SELECT 1 FROM runs AS r WHERE r.session = s.id AND {contains}(lower(r.workload), ?1) > 0))
           AND (?2 IS NULL OR s.active_ms < ?2 OR (s.active_ms = ?2 AND s.id < ?3))
         ORDER BY s.active_ms DESC, s.id DESC LIMIT ?4"
    )
}

/// A session's newest run.
const LAST_RUN_SQL: &str = "SELECT id, created_ms, status FROM runs WHERE session = ?1 ORDER BY position DESC LIMIT 1";

/// A session's workloads, newest first.
const WORKLOADS_SQL: &str =
    "SELECT workload FROM runs WHERE session = ?1 GROUP BY workload ORDER BY MAX(position) DESC";

/// Why a run was not queued.
#[derive(Debug)]
pub enum Refusal {
    /// `reject` and the session has a run that has not ended.
    SessionBusy(String),
    Sql(StoreError),
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Refusal {
        Refusal::Sql(e)
    }
}

#[derive(Debug)]
pub enum StoreError {
    Sqlite(rusqlite::Error),
    Postgres(String),
    /// The thread reading the embedded store for the studio failed.
    Reader(String),
    /// A stored status that names no status (a store written by another program).
    Status(sr_runtime::served::UnknownStatus),
    /// A stored row of a session's record this version cannot read.
    Undecodable(String),
    /// A write of a run by a claim that is no longer its last: another
    /// replica claimed it since (this one's lease expired).
    Fenced {
        run: String,
        epoch: i64,
    },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Sqlite(e) => write!(f, "{e}"),
            StoreError::Postgres(e) => write!(f, "PostgreSQL: {e}"),
            StoreError::Reader(e) => write!(f, "the store's reader failed: {e}"),
            StoreError::Status(e) => write!(f, "a stored run's status: {e}"),
            StoreError::Undecodable(what) => write!(f, "{what}"),
            StoreError::Fenced { run, epoch } => {
                write!(f, "run {run} was claimed again since this claim (epoch {epoch}): write refused")
            }
        }
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        StoreError::Sqlite(e)
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// What another replica changed, heard through PostgreSQL's `LISTEN`.
#[derive(Debug, PartialEq, Eq)]
pub enum Note {
    /// A run was queued, answered or released, or a run ended: claim again.
    Wake,
    /// Run `id` has new events.
    Run(String),
    /// Run `id` has a new status (perhaps with new events).
    Status(String),
    /// A cancel of run `id` was asked (on whichever replica runs it).
    Cancel(String),
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

impl Store {
    /// The embedded store: SQLite at `path`, migrated.
    pub fn open(path: &Path) -> Result<Store> {
        Ok(Store { backend: Arc::new(sqlite::Sqlite::open(path)?) })
    }

    /// The shared store: PostgreSQL at `url`, migrated under an advisory
    /// lock. `replica` names this process in its claims; `lease` is how
    /// long a claim lasts without a heartbeat.
    pub async fn connect(url: &str, replica: &str, lease: Duration) -> Result<Store> {
        Ok(Store { backend: Arc::new(postgres::Postgres::connect(url, replica, lease).await?) })
    }
}

impl Deref for Store {
    type Target = dyn RunStore;

    fn deref(&self) -> &(dyn RunStore + 'static) {
        self.backend.as_ref()
    }
}

/// What the server asks of its records; each backend keeps one semantics
/// (`tests.rs` runs one suite on both).
pub trait RunStore: Send + Sync {
    fn create_session<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<()>>;

    fn session_exists<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool>>;

    /// Queues a run. With `reject`, a session that has a run not yet ended
    /// (queued, running, paused or in doubt) refuses it, in the same
    /// transaction that would insert it.
    fn submit<'a>(&'a self, run: &'a NewRun<'a>, reject: bool) -> BoxFuture<'a, Result<(), Refusal>>;

    /// Takes the oldest queued run that heads its session's queue (no run
    /// of the session before it has not ended) and marks it running under a
    /// new epoch; in PostgreSQL, a running run whose lease expired too. A
    /// partial unique index makes a second active run of a session
    /// impossible whatever the callers do.
    fn claim(&self) -> BoxFuture<'_, Result<Option<RunRow>>>;

    /// [`RunStore::claim`], and whether another run was claimable with the
    /// one claimed: the dispatcher claims again at once only then, and
    /// otherwise waits for a wake. By default (SQLite, whose claims cost
    /// no round trip) it says yes whenever it claimed one.
    fn claim_next(&self) -> BoxFuture<'_, Result<(Option<RunRow>, bool)>> {
        Box::pin(async move {
            let claimed = self.claim().await?;
            let more = claimed.is_some();
            Ok((claimed, more))
        })
    }

    fn run<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<RunRow>>>;

    fn session_runs<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Vec<RunRow>>>;

    /// Runs a previous process left running are queued again, ahead of
    /// newer runs, to resume from their journals. Embedded mode only: with
    /// PostgreSQL other replicas may be running them, and a dead replica's
    /// runs are claimed again when their leases expire (0 runs).
    fn requeue_running(&self) -> Result<usize>;

    /// Records how a run that is not running ended (a cancel of a queued or
    /// paused run) and appends its last events, in one transaction; `from`
    /// guards against a change made meanwhile: nothing changes unless the
    /// run is `from`.
    fn finish<'a>(&'a self, id: &'a str, from: RunStatus, ending: &'a Ending) -> BoxFuture<'a, Result<bool>>;

    /// Records how a claimed run ended (or paused) and appends its last
    /// events (its `run_finished` first), its journal's last lines and its
    /// session's record, in one transaction fenced by its epoch. Answers
    /// whether a run of its session waits in the queue (the dispatchers
    /// are woken for it; no other end wakes them).
    fn end<'a>(&'a self, id: &'a str, epoch: i64, ending: &'a Ending) -> BoxFuture<'a, Result<bool>>;

    /// What the store holds of session `session`'s runtime state (empty
    /// when its runs never ended anywhere).
    fn record<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Record>>;

    /// The lines of attempt `attempt`'s journal in session `session`, in
    /// order (none when the store has none): one attempt's, where `record`
    /// reads the whole session.
    fn journal<'a>(&'a self, session: &'a str, attempt: i64) -> BoxFuture<'a, Result<Vec<String>>>;

    /// Stores `lines` of a claimed run's journal and the run's `events`
    /// (ids in order, after those stored) in one transaction, fenced by the
    /// claim's epoch, committed before it returns, and announces the events
    /// once; with neither, only checks that the claim still holds (a read:
    /// nothing committed).
    fn write_batch<'a>(
        &'a self,
        run: &'a str,
        epoch: i64,
        lines: Option<&'a JournalLines>,
        events: &'a [(u64, String)],
    ) -> BoxFuture<'a, Result<()>>;

    /// Keeps the plan (JSON) of fork `run`, before it is queued.
    fn save_plan<'a>(&'a self, run: &'a str, plan: &'a str) -> BoxFuture<'a, Result<()>>;

    /// Forgets the plan of a fork that was not queued after all.
    fn discard_plan<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<()>>;

    /// The plan of run `run`, if it is a fork.
    fn plan<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Option<String>>>;

    /// The plans of those of `runs` that are forks, by run, in one query (a
    /// list of runs shows each one's origin).
    fn plans<'a>(&'a self, runs: &'a [String]) -> BoxFuture<'a, Result<HashMap<String, String>>>;

    /// What A2A added to run `run` (JSON, `a2a::record`), if anything.
    fn a2a_record<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Option<String>>>;

    /// Keeps `files` (hash, bytes) for run `run` and changes its A2A record
    /// with `change`, in one transaction that holds the record's row, so the
    /// changes of every replica apply one after another, and marks the run
    /// (once it is queued) as one A2A added to; whether the record changed.
    fn change_a2a<'a>(
        &'a self,
        run: &'a str,
        files: &'a [(String, Vec<u8>)],
        change: &'a A2aChange<'a>,
    ) -> BoxFuture<'a, Result<bool>>;

    /// The bytes of the files kept for run `run`, by hash.
    fn a2a_files<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<HashMap<String, Vec<u8>>>>;

    /// Names `follower` (a replica's id; `None`: none) as the replica that
    /// sends run `run`'s push notifications while some are still to be sent.
    fn follow_a2a<'a>(&'a self, run: &'a str, follower: Option<&'a str>) -> BoxFuture<'a, Result<()>>;

    /// The runs whose push notifications `follower` still has to send.
    fn a2a_followed<'a>(&'a self, follower: &'a str) -> BoxFuture<'a, Result<Vec<String>>>;

    /// Forgets run `run`'s A2A record and files (a task that was not queued after all).
    fn forget_a2a<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<()>>;

    /// Queues a paused run again with the answer it waits for.
    fn answer<'a>(&'a self, id: &'a str, input: &'a str) -> BoxFuture<'a, Result<bool>>;

    /// Queues a run in doubt again with the decision it waits for.
    fn decide<'a>(&'a self, id: &'a str, decision: &'a str) -> BoxFuture<'a, Result<bool>>;

    /// The last event id of a run (0 when it has none).
    fn last_event<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<u64>>;

    /// Up to `limit` events of a run after id `after`, in order.
    fn events_after<'a>(&'a self, run: &'a str, after: u64, limit: usize) -> BoxFuture<'a, Result<Vec<(u64, String)>>>;

    /// A run's status and up to `limit` of its events after id `after`, read
    /// in one statement (a stream's one read per change: a run's end is
    /// stored with its last events, so an ended status comes with all of
    /// them); `None` for an unknown run.
    fn follow<'a>(&'a self, run: &'a str, after: u64, limit: usize) -> BoxFuture<'a, Result<Option<Followed>>>;

    /// The run's trace id: the one stored, else `trace_id`, stored now, so
    /// that every attempt of a run, on any replica, traces into one trace.
    /// `None`: no such run.
    fn trace<'a>(&'a self, run: &'a str, trace_id: &'a str) -> BoxFuture<'a, Result<Option<String>>>;

    /// How many runs are in each status (every status listed, zeros included).
    fn counts(&self) -> BoxFuture<'_, Result<Vec<(RunStatus, i64)>>>;

    /// Extends the leases of this process's claims; returns the runs whose
    /// claim was lost (claimed again by another replica, or ended).
    fn heartbeat<'a>(&'a self, claims: &'a [(String, i64)]) -> BoxFuture<'a, Result<Vec<String>>>;

    /// Gives up a claim without ending the run (a drain stopped it): another
    /// replica may claim it at once. The embedded store queues it at the
    /// next start instead, and does nothing here.
    fn release<'a>(&'a self, id: &'a str, epoch: i64) -> BoxFuture<'a, Result<()>>;

    /// Asks whichever replica runs `id` to cancel it (the embedded store has
    /// no other replica: nothing to do).
    fn request_cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<()>>;

    /// The newest runs first, for the studio.
    fn recent_runs(&self, status: Option<RunStatus>, limit: u32) -> BoxFuture<'_, Result<Vec<RecentRun>>>;

    /// A page of sessions, the one active last first, for the studio.
    fn sessions<'a>(&'a self, page: &'a SessionPage) -> BoxFuture<'a, Result<Vec<SessionRow>>>;

    /// Other replicas' changes, as they commit (PostgreSQL only: `None`
    /// for the embedded store, where this process makes every change).
    fn listen(&self) -> Option<mpsc::Receiver<Note>>;

    /// Whether the store answers a query now (`/readyz`).
    fn ping(&self) -> BoxFuture<'_, Result<()>>;

    /// Whether other processes share the store (PostgreSQL).
    #[cfg(test)]
    fn is_shared(&self) -> bool;

    /// A statement of the test's own (to break the rules on purpose); the rows it changed.
    #[cfg(test)]
    fn raw<'a>(&'a self, sql: &'a str) -> BoxFuture<'a, Result<u64>>;

    /// Appends one event of a claimed run (a batch of one).
    #[cfg(test)]
    fn append_event<'a>(&'a self, run: &'a str, epoch: i64, id: u64, event: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move { self.write_batch(run, epoch, None, &[(id, event.to_string())]).await })
    }
}

/// A change of a run's A2A record ([`RunStore::change_a2a`]): given the
/// stored JSON (`None`: none yet), the new JSON, or `None` to leave it.
pub type A2aChange<'a> = dyn Fn(Option<&str>) -> Result<Option<String>> + Send + Sync + 'a;

/// What [`RunStore::follow`] reads: the run's status and events.
pub type Followed = (RunStatus, Vec<(u64, String)>);

/// Ids past i64::MAX do not exist: nothing is after them.
fn stored_id(after: u64) -> i64 {
    i64::try_from(after).unwrap_or(i64::MAX)
}

/// Message `position` of `session` as stored: JSON, or an error naming it.
fn stored_message(session: &str, position: i64, json: &str) -> Result<Value> {
    serde_json::from_str(json).map_err(|e| {
        StoreError::Undecodable(format!("message {position} of session {session} in the store is not JSON: {e}"))
    })
}

/// Waits for a store write from the runtime's synchronous journal copy
/// (`copies::RunJournal`): a line that records an effect is committed
/// before the run goes on, so the store never lags the journal. The PostgreSQL store's writes run on the async runtime, which
/// needs its worker threads (`block_in_place`, so the multi-thread runtime
/// `sr` runs); the embedded store's writes wait on nothing and are done at
/// their first poll. A write that would wait on a single-thread runtime is
/// an error, not a hang.
pub(crate) fn committed<T>(write: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
    use futures::FutureExt;
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| handle.block_on(write))
        }
        _ => write.now_or_never().unwrap_or_else(|| {
            Err(StoreError::Postgres("a run's events need the multi-thread async runtime".to_string()))
        }),
    }
}
