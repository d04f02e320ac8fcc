//! The server's own records in SQLite (`serve.db` in the state directory):
//! sessions, the queue of runs with their status and result, and every event
//! of every run under the id the event stream gives it. The runtime keeps its
//! own sessions database and journals beside it; this file is what the API
//! answers from. Every write is committed before it returns, so a restart
//! (after `kill -9` too) finds every run and event.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use serde_json::Value;

/// A run's status as the API names it.
pub const STATUSES: [&str; 7] = ["queued", "running", "paused", "in_doubt", "done", "failed", "cancelled"];

/// Statuses that hold their session: no other run of it starts meanwhile.
const ACTIVE: &str = "('running', 'paused', 'in_doubt')";

#[derive(Clone)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
}

/// A run as the API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    pub id: String,
    pub session: String,
    pub workload: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip)]
    pub message: String,
    #[serde(skip)]
    pub model: Option<String>,
    /// The runtime's run number of the last attempt (`None`: never started).
    #[serde(skip)]
    pub attempt_run: Option<i64>,
    /// The answer a paused run continues with.
    #[serde(skip)]
    pub pending_input: Option<String>,
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

/// Why a run was not queued.
#[derive(Debug)]
pub enum Refusal {
    /// `reject` and the session has a run that has not ended.
    SessionBusy(String),
    Sql(rusqlite::Error),
}

impl From<rusqlite::Error> for Refusal {
    fn from(e: rusqlite::Error) -> Refusal {
        Refusal::Sql(e)
    }
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

const RUN_COLUMNS: &str =
    "id, session, workload, entry, status, result, error, message, model, attempt_run, pending_input";

fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRow> {
    let result: Option<String> = r.get(5)?;
    Ok(RunRow {
        id: r.get(0)?,
        session: r.get(1)?,
        workload: r.get(2)?,
        entry: r.get(3)?,
        status: r.get(4)?,
        result: result.and_then(|text| serde_json::from_str(&text).ok()),
        error: r.get(6)?,
        message: r.get(7)?,
        model: r.get(8)?,
        attempt_run: r.get(9)?,
        pending_input: r.get(10)?,
    })
}

impl Store {
    pub fn open(path: &Path) -> rusqlite::Result<Store> {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(60))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS sessions (
                 id TEXT PRIMARY KEY,
                 created_ms INTEGER NOT NULL
             );
             CREATE TABLE IF NOT EXISTS runs (
                 position INTEGER PRIMARY KEY AUTOINCREMENT,
                 id TEXT NOT NULL UNIQUE,
                 session TEXT NOT NULL REFERENCES sessions(id),
                 workload TEXT NOT NULL,
                 entry TEXT,
                 message TEXT NOT NULL,
                 model TEXT,
                 status TEXT NOT NULL,
                 result TEXT,
                 error TEXT,
                 attempt_run INTEGER,
                 pending_input TEXT,
                 created_ms INTEGER NOT NULL,
                 updated_ms INTEGER NOT NULL
             );
             CREATE UNIQUE INDEX IF NOT EXISTS one_active_run_per_session
                 ON runs(session) WHERE status IN ('running', 'paused', 'in_doubt');
             CREATE INDEX IF NOT EXISTS runs_by_status ON runs(status, position);
             CREATE TABLE IF NOT EXISTS run_events (
                 run TEXT NOT NULL,
                 id INTEGER NOT NULL,
                 event TEXT NOT NULL,
                 PRIMARY KEY (run, id)
             );",
        )?;
        Ok(Store { conn: Arc::new(Mutex::new(conn)) })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn create_session(&self, id: &str) -> rusqlite::Result<()> {
        self.conn()
            .execute("INSERT OR IGNORE INTO sessions (id, created_ms) VALUES (?1, ?2)", params![id, now_ms()])?;
        Ok(())
    }

    pub fn session_exists(&self, id: &str) -> rusqlite::Result<bool> {
        self.conn().query_row("SELECT COUNT(*) > 0 FROM sessions WHERE id = ?1", [id], |r| r.get(0))
    }

    /// Queues a run. With `reject`, a session that has a run not yet ended
    /// (queued, running, paused or in doubt) refuses it, in the same
    /// transaction that would insert it.
    pub fn submit(&self, run: &NewRun<'_>, reject: bool) -> Result<(), Refusal> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute("INSERT OR IGNORE INTO sessions (id, created_ms) VALUES (?1, ?2)", params![run.session, now_ms()])?;
        if reject {
            let busy: Option<String> = tx
                .query_row(
                    "SELECT id FROM runs WHERE session = ?1
                     AND status IN ('queued', 'running', 'paused', 'in_doubt') LIMIT 1",
                    [run.session],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(busy) = busy {
                return Err(Refusal::SessionBusy(busy));
            }
        }
        let now = now_ms();
        tx.execute(
            "INSERT INTO runs (id, session, workload, entry, message, model, status, created_ms, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7, ?7)",
            params![run.id, run.session, run.workload, run.entry, run.message, run.model, now],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Takes the oldest queued run whose session has no active run and marks
    /// it running; the unique index makes a second active run of a session
    /// impossible whatever the callers do.
    pub fn claim(&self) -> rusqlite::Result<Option<RunRow>> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let next: Option<RunRow> = tx
            .query_row(
                &format!(
                    "SELECT {RUN_COLUMNS} FROM runs AS q WHERE status = 'queued' AND NOT EXISTS
                     (SELECT 1 FROM runs AS a WHERE a.session = q.session AND a.status IN {ACTIVE})
                     ORDER BY position LIMIT 1"
                ),
                [],
                run_row,
            )
            .optional()?;
        let Some(mut run) = next else { return Ok(None) };
        tx.execute("UPDATE runs SET status = 'running', updated_ms = ?2 WHERE id = ?1", params![run.id, now_ms()])?;
        tx.commit()?;
        run.status = "running".to_string();
        Ok(Some(run))
    }

    pub fn run(&self, id: &str) -> rusqlite::Result<Option<RunRow>> {
        self.conn().query_row(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"), [id], run_row).optional()
    }

    pub fn session_runs(&self, session: &str) -> rusqlite::Result<Vec<RunRow>> {
        let conn = self.conn();
        let mut statement =
            conn.prepare(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE session = ?1 ORDER BY position"))?;
        let rows = statement.query_map([session], run_row)?;
        rows.collect()
    }

    /// Runs a previous process left running (it died or was stopped): they
    /// are queued again, ahead of newer runs, to resume from their journals.
    pub fn requeue_running(&self) -> rusqlite::Result<usize> {
        self.conn().execute("UPDATE runs SET status = 'queued', updated_ms = ?1 WHERE status = 'running'", [now_ms()])
    }

    pub fn set_attempt(&self, id: &str, attempt_run: i64) -> rusqlite::Result<()> {
        self.conn().execute(
            "UPDATE runs SET attempt_run = ?2, pending_input = NULL, updated_ms = ?3 WHERE id = ?1",
            params![id, attempt_run, now_ms()],
        )?;
        Ok(())
    }

    /// Records how a run ended (or paused); `from` guards against a change
    /// made meanwhile (a cancel): nothing changes unless the run is `from`.
    pub fn finish(
        &self,
        id: &str,
        from: &str,
        status: &str,
        result: Option<&Value>,
        error: Option<&str>,
    ) -> rusqlite::Result<bool> {
        let changed = self.conn().execute(
            "UPDATE runs SET status = ?3, result = ?4, error = ?5, updated_ms = ?6 WHERE id = ?1 AND status = ?2",
            params![id, from, status, result.map(Value::to_string), error, now_ms()],
        )?;
        Ok(changed > 0)
    }

    /// Queues a paused run again with the answer it waits for.
    pub fn answer(&self, id: &str, input: &str) -> rusqlite::Result<bool> {
        let changed = self.conn().execute(
            "UPDATE runs SET status = 'queued', pending_input = ?2, updated_ms = ?3 WHERE id = ?1 AND status = 'paused'",
            params![id, input, now_ms()],
        )?;
        Ok(changed > 0)
    }

    /// Appends a run's event under the next id, committed before it returns.
    pub fn append_event(&self, run: &str, id: u64, event: &str) -> rusqlite::Result<()> {
        let conn = self.conn();
        let mut insert = conn.prepare_cached("INSERT INTO run_events (run, id, event) VALUES (?1, ?2, ?3)")?;
        insert.execute(params![run, id as i64, event])?;
        Ok(())
    }

    /// The last event id of a run, and how many of its events are not text
    /// deltas (what a continued run skips of its replayed start).
    pub fn event_tally(&self, run: &str) -> rusqlite::Result<(u64, u64)> {
        let conn = self.conn();
        let last: i64 =
            conn.query_row("SELECT COALESCE(MAX(id), 0) FROM run_events WHERE run = ?1", [run], |r| r.get(0))?;
        // A paused run's last event (its end, paused) is not replayed by the
        // run that continues it.
        let kept: i64 = conn.query_row(
            "SELECT COUNT(*) FROM run_events WHERE run = ?1
             AND json_extract(event, '$.type') NOT IN ('text_delta', 'run_finished')",
            [run],
            |r| r.get(0),
        )?;
        Ok((last as u64, kept as u64))
    }

    /// Up to `limit` events of a run after id `after`, in order.
    pub fn events_after(&self, run: &str, after: u64, limit: usize) -> rusqlite::Result<Vec<(u64, String)>> {
        let conn = self.conn();
        let mut statement =
            conn.prepare_cached("SELECT id, event FROM run_events WHERE run = ?1 AND id > ?2 ORDER BY id LIMIT ?3")?;
        // Ids past i64::MAX do not exist: nothing is after them.
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let rows =
            statement.query_map(params![run, after, limit as i64], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))?;
        rows.collect()
    }

    /// How many runs are in each status (every status listed, zeros included).
    pub fn counts(&self) -> rusqlite::Result<Vec<(&'static str, i64)>> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached("SELECT COUNT(*) FROM runs WHERE status = ?1")?;
        STATUSES.iter().map(|status| Ok((*status, statement.query_row([status], |r| r.get(0))?))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_run<'a>(id: &'a str, session: &'a str) -> NewRun<'a> {
        NewRun { id, session, workload: "w", entry: None, message: "hi", model: None }
    }

    #[test]
    fn a_session_runs_one_run_at_a_time_in_order() {
        let store =
            Store::open(&std::env::temp_dir().join(format!("sr-serve-store-{}.db", uuid::Uuid::new_v4()))).unwrap();
        store.submit(&new_run("a", "s"), false).unwrap();
        store.submit(&new_run("b", "s"), false).unwrap();
        store.submit(&new_run("c", "t"), false).unwrap();
        assert!(matches!(store.submit(&new_run("d", "s"), true), Err(Refusal::SessionBusy(id)) if id == "a"));
        assert_eq!(store.claim().unwrap().unwrap().id, "a");
        // b waits for a; c's session is free.
        assert_eq!(store.claim().unwrap().unwrap().id, "c");
        assert!(store.claim().unwrap().is_none());
        // The index refuses a second active run of a session, whoever asks.
        let second = store.conn().execute("UPDATE runs SET status = 'running' WHERE id = 'b'", []);
        assert!(second.is_err(), "{second:?}");
        assert!(store.finish("a", "running", "paused", None, None).unwrap());
        assert!(store.claim().unwrap().is_none(), "a paused run holds its session");
        assert!(store.answer("a", "yes").unwrap());
        let again = store.claim().unwrap().unwrap();
        assert_eq!((again.id.as_str(), again.pending_input.as_deref()), ("a", Some("yes")));
        assert!(!store.finish("a", "queued", "cancelled", None, None).unwrap(), "only from the status it is in");
        assert!(store.finish("a", "running", "done", Some(&Value::from(1)), None).unwrap());
        assert_eq!(store.claim().unwrap().unwrap().id, "b");
        let counts: Vec<_> = store.counts().unwrap().into_iter().filter(|(_, n)| *n > 0).collect();
        assert_eq!(counts, [("running", 2), ("done", 1)]);
    }
}
