//! The server's records: sessions, the queue of runs with their status and
//! result, and every event of every run under the id the event stream gives
//! it. One type, two backends with one semantics: SQLite in the state
//! directory (`serve.db`, the embedded mode) or PostgreSQL shared by
//! replicas (`--database-url`). Every write is committed before it returns,
//! so a restart (after `kill -9` too) finds every run and event.
//!
//! A claim gives the run an epoch, one more than its last; every write of a
//! claimed run (its events, attempt, end, lease) carries that epoch and is
//! refused ([`StoreError::Fenced`]) once another claim moved it on, so a
//! replica that lost a run can no longer write to it. In PostgreSQL a claim
//! also takes a lease (`lease_until`, kept by [`Store::heartbeat`]); a
//! running run whose lease has expired is claimed again by any replica.

mod postgres;
mod sqlite;
#[cfg(test)]
mod tests;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;
pub use sr_runtime::served::RunStatus;
use tokio::sync::mpsc;

#[derive(Clone)]
pub struct Store {
    backend: Backend,
}

#[derive(Clone)]
enum Backend {
    Sqlite(sqlite::Sqlite),
    Postgres(Arc<postgres::Postgres>),
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
    /// Run `id` has a new event or status.
    Run(String),
    /// A cancel of run `id` was asked (on whichever replica runs it).
    Cancel(String),
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Dispatches one call to the backend, awaiting PostgreSQL's.
macro_rules! each {
    ($store:expr, $b:ident => $call:expr) => {
        match &$store.backend {
            Backend::Sqlite($b) => $call,
            Backend::Postgres($b) => $call.await,
        }
    };
}

impl Store {
    /// The embedded store: SQLite at `path`.
    pub fn open(path: &Path) -> Result<Store> {
        Ok(Store { backend: Backend::Sqlite(sqlite::Sqlite::open(path)?) })
    }

    /// The shared store: PostgreSQL at `url`, migrated under an advisory
    /// lock. `replica` names this process in its claims; `lease` is how
    /// long a claim lasts without a heartbeat.
    pub async fn connect(url: &str, replica: &str, lease: Duration) -> Result<Store> {
        Ok(Store { backend: Backend::Postgres(Arc::new(postgres::Postgres::connect(url, replica, lease).await?)) })
    }

    pub async fn create_session(&self, id: &str) -> Result<()> {
        each!(self, b => b.create_session(id))
    }

    pub async fn session_exists(&self, id: &str) -> Result<bool> {
        each!(self, b => b.session_exists(id))
    }

    /// Queues a run. With `reject`, a session that has a run not yet ended
    /// (queued, running, paused or in doubt) refuses it, in the same
    /// transaction that would insert it.
    pub async fn submit(&self, run: &NewRun<'_>, reject: bool) -> Result<(), Refusal> {
        each!(self, b => b.submit(run, reject))
    }

    /// Takes the oldest queued run that heads its session's queue (no run
    /// of the session before it has not ended) and marks it running under a
    /// new epoch; in PostgreSQL, a running run whose lease expired too. A
    /// partial unique index makes a second active run of a session
    /// impossible whatever the callers do.
    pub async fn claim(&self) -> Result<Option<RunRow>> {
        each!(self, b => b.claim())
    }

    pub async fn run(&self, id: &str) -> Result<Option<RunRow>> {
        each!(self, b => b.run(id))
    }

    pub async fn session_runs(&self, session: &str) -> Result<Vec<RunRow>> {
        each!(self, b => b.session_runs(session))
    }

    /// Runs a previous process left running are queued again, ahead of
    /// newer runs, to resume from their journals. Embedded mode only: with
    /// PostgreSQL other replicas may be running them, and a dead replica's
    /// runs are claimed again when their leases expire.
    pub fn requeue_running(&self) -> Result<usize> {
        match &self.backend {
            Backend::Sqlite(b) => b.requeue_running(),
            Backend::Postgres(_) => Ok(0),
        }
    }

    pub async fn set_attempt(&self, id: &str, epoch: i64, attempt_run: i64) -> Result<()> {
        each!(self, b => b.set_attempt(id, epoch, attempt_run))
    }

    /// Records how a run that is not running ended (a cancel of a queued or
    /// paused run); `from` guards against a change made meanwhile: nothing
    /// changes unless the run is `from`.
    pub async fn finish(
        &self,
        id: &str,
        from: RunStatus,
        status: RunStatus,
        result: Option<&Value>,
        error: Option<&str>,
    ) -> Result<bool> {
        each!(self, b => b.finish(id, from, status, result, error))
    }

    /// Records how a claimed run ended (or paused), fenced by its epoch.
    pub async fn end(
        &self,
        id: &str,
        epoch: i64,
        status: RunStatus,
        result: Option<&Value>,
        error: Option<&str>,
    ) -> Result<()> {
        each!(self, b => b.end(id, epoch, status, result, error))
    }

    /// Queues a paused run again with the answer it waits for.
    pub async fn answer(&self, id: &str, input: &str) -> Result<bool> {
        each!(self, b => b.answer(id, input))
    }

    /// Queues a run in doubt again with the decision it waits for.
    pub async fn decide(&self, id: &str, decision: &str) -> Result<bool> {
        each!(self, b => b.decide(id, decision))
    }

    /// Appends a run's event under id `id`, fenced by the claim's epoch,
    /// committed before it returns.
    pub async fn append_event(&self, run: &str, epoch: i64, id: u64, event: &str) -> Result<()> {
        each!(self, b => b.append_event(run, epoch, id, event))
    }

    /// The last event id of a run (0 when it has none).
    pub async fn last_event(&self, run: &str) -> Result<u64> {
        each!(self, b => b.last_event(run))
    }

    /// Up to `limit` events of a run after id `after`, in order.
    pub async fn events_after(&self, run: &str, after: u64, limit: usize) -> Result<Vec<(u64, String)>> {
        // Ids past i64::MAX do not exist: nothing is after them.
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        each!(self, b => b.events_after(run, after, limit as i64))
    }

    /// How many runs are in each status (every status listed, zeros included).
    pub async fn counts(&self) -> Result<Vec<(RunStatus, i64)>> {
        each!(self, b => b.counts())
    }

    /// Extends the leases of this process's claims; returns the runs whose
    /// claim was lost (claimed again by another replica, or ended).
    pub async fn heartbeat(&self, claims: &[(String, i64)]) -> Result<Vec<String>> {
        each!(self, b => b.heartbeat(claims))
    }

    /// Gives up a claim without ending the run (a drain stopped it): another
    /// replica may claim it at once. The embedded store queues it at the next start.
    pub async fn release(&self, id: &str, epoch: i64) -> Result<()> {
        match &self.backend {
            Backend::Sqlite(_) => Ok(()),
            Backend::Postgres(b) => b.release(id, epoch).await,
        }
    }

    /// Asks whichever replica runs `id` to cancel it.
    pub async fn request_cancel(&self, id: &str) -> Result<()> {
        match &self.backend {
            Backend::Sqlite(_) => Ok(()),
            Backend::Postgres(b) => b.request_cancel(id).await,
        }
    }

    /// The newest runs first, for the studio.
    pub async fn recent_runs(&self, status: Option<RunStatus>, limit: u32) -> Result<Vec<RecentRun>> {
        match &self.backend {
            Backend::Sqlite(b) => {
                let b = b.clone();
                tokio::task::spawn_blocking(move || b.recent_runs(status, limit))
                    .await
                    .map_err(|e| StoreError::Reader(e.to_string()))?
            }
            Backend::Postgres(b) => b.recent_runs(status, limit).await,
        }
    }

    /// Other replicas' changes, as they commit (PostgreSQL only: `None`
    /// for the embedded store, where this process makes every change).
    pub fn listen(&self) -> Option<mpsc::Receiver<Note>> {
        match &self.backend {
            Backend::Sqlite(_) => None,
            Backend::Postgres(b) => Some(b.listen()),
        }
    }
}
