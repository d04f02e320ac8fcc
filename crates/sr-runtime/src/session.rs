//! Sessions in SQLite: every event of every run, appended and committed as it
//! happens (so nothing is lost if the process dies), the conversation an agent
//! entry continues, and the runs of each session (number, status, lease). A
//! run paused for a human needs nothing more: its journal says what it
//! started with and was answered.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{Event, EventSink, Payload};

/// The version of the JSON stored in `events.event`.
const EVENT_FORMAT: i64 = 1;

#[derive(Clone)]
pub struct SessionStore {
    conn: Arc<Mutex<Connection>>,
    /// Events the sinks could not save, for the run to report when it ends.
    lost: Arc<Mutex<Vec<String>>>,
}

/// Why the store cannot answer: the database failed, or a row it holds is
/// not what this version wrote.
#[derive(Debug)]
pub enum StoreError {
    Sql(rusqlite::Error),
    Undecodable { what: String, error: String },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Sql(e) => write!(f, "{e}"),
            StoreError::Undecodable { what, error } => write!(f, "{what} cannot be read: {error}"),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        StoreError::Sql(e)
    }
}

/// A run of a session, and the run it continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLineage {
    pub run: i64,
    pub status: String,
    /// The run this one resumed.
    pub parent: Option<i64>,
    /// The step of the parent's journal from which this run went live (`--from`).
    pub from_step: Option<u64>,
}

impl RunLineage {
    /// A row of `run, status, parent, from_step`, as both the sessions
    /// database and the server's embedded store select them.
    pub fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunLineage> {
        Ok(RunLineage {
            run: row.get(0)?,
            status: row.get(1)?,
            parent: row.get(2)?,
            from_step: row.get::<_, Option<i64>>(3)?.map(|s| s as u64),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub id: String,
    pub workload: String,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub runs: i64,
    pub status: String,
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

impl SessionStore {
    /// Opens (creating it and its directory if needed) a session database.
    pub fn open(path: &Path) -> rusqlite::Result<SessionStore> {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let conn = Connection::open(path)?;
        Self::init(conn)
    }

    pub fn in_memory() -> rusqlite::Result<SessionStore> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> rusqlite::Result<SessionStore> {
        // Concurrent runs of one project share the database: writers wait
        // for each other instead of failing.
        conn.busy_timeout(std::time::Duration::from_secs(60))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS sessions (
                 id TEXT PRIMARY KEY,
                 workload TEXT NOT NULL,
                 created_ms INTEGER NOT NULL,
                 updated_ms INTEGER NOT NULL,
                 status TEXT NOT NULL DEFAULT 'open'
             );
             CREATE TABLE IF NOT EXISTS events (
                 session_id TEXT NOT NULL REFERENCES sessions(id),
                 run INTEGER NOT NULL,
                 seq INTEGER NOT NULL,
                 version INTEGER NOT NULL,
                 event TEXT NOT NULL,
                 PRIMARY KEY (session_id, run, seq)
             );
             CREATE TABLE IF NOT EXISTS messages (
                 session_id TEXT NOT NULL REFERENCES sessions(id),
                 position INTEGER NOT NULL,
                 message TEXT NOT NULL,
                 PRIMARY KEY (session_id, position)
             );
             CREATE TABLE IF NOT EXISTS runs (
                 session_id TEXT NOT NULL REFERENCES sessions(id),
                 run INTEGER NOT NULL,
                 status TEXT NOT NULL,
                 lease TEXT,
                 PRIMARY KEY (session_id, run)
             );",
        )?;
        // Which run a run continues, and from which step of its journal
        // (added after the table: older stores get the columns now). Under a
        // write lock, so processes opening the store at once add each column once.
        let mut conn = conn;
        let migration = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        for column in ["parent INTEGER", "from_step INTEGER"] {
            let name = column.split(' ').next().unwrap_or_default();
            let present: bool = migration.query_row(
                "SELECT COUNT(*) > 0 FROM pragma_table_info('runs') WHERE name = ?1",
                [name],
                |r| r.get(0),
            )?;
            if !present {
                migration.execute_batch(&format!("ALTER TABLE runs ADD COLUMN {column}"))?;
            }
        }
        migration.commit()?;
        Ok(SessionStore { conn: Arc::new(Mutex::new(conn)), lost: Arc::default() })
    }

    pub fn create(&self, id: &str, workload: &str) -> rusqlite::Result<()> {
        let now = now_ms();
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).execute(
            "INSERT INTO sessions (id, workload, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?3)",
            params![id, workload, now],
        )?;
        Ok(())
    }

    /// Creates the session unless it exists (also when another process
    /// creates it at the same time).
    pub fn ensure(&self, id: &str, workload: &str) -> rusqlite::Result<()> {
        let now = now_ms();
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).execute(
            "INSERT OR IGNORE INTO sessions (id, workload, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?3)",
            params![id, workload, now],
        )?;
        Ok(())
    }

    /// Reserves the next run number of the session, atomically across
    /// processes (one immediate transaction; the primary key forbids a
    /// number twice), as `running`. `lease` is the lock file the live run
    /// holds, by which [`SessionStore::recover`] tells a dead run.
    pub fn reserve_run(&self, session: &str, lease: Option<&Path>) -> rusqlite::Result<i64> {
        self.reserve_continuing(session, lease, None)
    }

    /// Like [`SessionStore::reserve_run`], for a run that continues run
    /// `origin.0` of the session (a resume), from step `origin.1` of its
    /// journal when it goes live there (`--from`).
    pub fn reserve_continuing(
        &self,
        session: &str,
        lease: Option<&Path>,
        origin: Option<(i64, Option<u64>)>,
    ) -> rusqlite::Result<i64> {
        let mut conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let run: i64 = tx.query_row(
            "SELECT MAX(COALESCE((SELECT MAX(run) FROM runs WHERE session_id = ?1), 0),
                        COALESCE((SELECT MAX(run) FROM events WHERE session_id = ?1), 0)) + 1",
            [session],
            |r| r.get(0),
        )?;
        let (parent, from) = origin.map_or((None, None), |(parent, from)| (Some(parent), from.map(|s| s as i64)));
        tx.execute(
            "INSERT INTO runs (session_id, run, status, lease, parent, from_step) VALUES (?1, ?2, 'running', ?3, ?4, ?5)",
            params![session, run, lease.map(|p| p.display().to_string()), parent, from],
        )?;
        tx.commit()?;
        Ok(run)
    }

    pub fn set_run_status(&self, session: &str, run: i64, status: &str) -> rusqlite::Result<()> {
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .execute("UPDATE runs SET status = ?3 WHERE session_id = ?1 AND run = ?2", params![session, run, status])?;
        Ok(())
    }

    /// The session's runs, in order: number, status, and the run (and step)
    /// each continues.
    pub fn run_lineage(&self, session: &str) -> rusqlite::Result<Vec<RunLineage>> {
        let conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut statement =
            conn.prepare("SELECT run, status, parent, from_step FROM runs WHERE session_id = ?1 ORDER BY run")?;
        let rows = statement.query_map([session], RunLineage::from_row)?;
        rows.collect()
    }

    /// Takes a session's conversation and runs from a store of record (`sr
    /// serve`'s database, which any replica may have written since this
    /// cache was): the recorded conversation replaces the cached one when it
    /// is longer, each recorded run replaces the cached run of its number
    /// unless that one is running (its lease says whether it still is), and
    /// a cached run the record lacks is kept. One transaction.
    pub fn restore(
        &self,
        session: &str,
        workload: &str,
        messages: &[Value],
        runs: &[RunLineage],
    ) -> rusqlite::Result<()> {
        let mut conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let now = now_ms();
        tx.execute(
            "INSERT OR IGNORE INTO sessions (id, workload, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?3)",
            params![session, workload, now],
        )?;
        let cached: i64 =
            tx.query_row("SELECT COUNT(*) FROM messages WHERE session_id = ?1", [session], |r| r.get(0))?;
        if messages.len() as i64 > cached {
            tx.execute("DELETE FROM messages WHERE session_id = ?1", [session])?;
            for (position, message) in messages.iter().enumerate() {
                tx.execute(
                    "INSERT INTO messages (session_id, position, message) VALUES (?1, ?2, ?3)",
                    params![session, position as i64, message.to_string()],
                )?;
            }
        }
        for run in runs {
            tx.execute(
                "INSERT INTO runs (session_id, run, status, lease, parent, from_step) VALUES (?1, ?2, ?3, NULL, ?4, ?5)
                 ON CONFLICT (session_id, run) DO UPDATE
                 SET status = excluded.status, parent = excluded.parent, from_step = excluded.from_step
                 WHERE runs.status <> 'running'",
                params![session, run.run, run.status, run.parent, run.from_step.map(|s| s as i64)],
            )?;
        }
        tx.commit()
    }

    /// The session's runs and their status, in order.
    pub fn runs(&self, session: &str) -> rusqlite::Result<Vec<(i64, String)>> {
        let conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut statement = conn.prepare("SELECT run, status FROM runs WHERE session_id = ?1 ORDER BY run")?;
        let rows = statement.query_map([session], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect()
    }

    /// Marks `interrupted` every `running` run whose process is gone: its
    /// lease (a lock file held for the life of the run) is no longer locked.
    /// Runs without a lease are left alone. Returns the runs marked.
    pub fn recover(&self) -> rusqlite::Result<Vec<(String, i64)>> {
        let running: Vec<(String, i64, String)> = {
            let conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let mut statement =
                conn.prepare("SELECT session_id, run, lease FROM runs WHERE status = 'running' AND lease IS NOT NULL")?;
            let rows = statement.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let mut marked = Vec::new();
        for (session, run, lease) in running {
            if crate::lease::is_held(Path::new(&lease)) {
                continue;
            }
            let conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let changed = conn.execute(
                "UPDATE runs SET status = 'interrupted' WHERE session_id = ?1 AND run = ?2 AND status = 'running'",
                params![session, run],
            )?;
            if changed > 0 {
                conn.execute(
                    "UPDATE sessions SET status = 'interrupted', updated_ms = ?2 WHERE id = ?1",
                    params![session, now_ms()],
                )?;
                marked.push((session, run));
            }
        }
        Ok(marked)
    }

    /// Stores one event, committed before this returns. Text deltas are not
    /// stored: the model's response event that follows holds the whole text.
    /// The session's `updated_ms` moves when its status does.
    pub fn append_event(&self, session: &str, run: i64, event: &Event) -> Result<(), StoreError> {
        if matches!(event.payload, Payload::TextDelta { .. }) {
            return Ok(());
        }
        let json = serde_json::to_string(event)
            .map_err(|e| StoreError::Undecodable { what: format!("event {}", event.seq), error: e.to_string() })?;
        let conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut insert = conn
            .prepare_cached("INSERT INTO events (session_id, run, seq, version, event) VALUES (?1, ?2, ?3, ?4, ?5)")?;
        insert.execute(params![session, run, event.seq as i64, EVENT_FORMAT, json])?;
        Ok(())
    }

    /// Every event of a session, run by run.
    pub fn events(&self, session: &str) -> Result<Vec<(i64, Event)>, StoreError> {
        let conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut statement =
            conn.prepare("SELECT run, seq, event FROM events WHERE session_id = ?1 ORDER BY run, seq")?;
        let rows = statement
            .query_map([session], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (run, seq, json) = row?;
            let event = serde_json::from_str(&json).map_err(|e| StoreError::Undecodable {
                what: format!("event {seq} of run {run} of session {session}"),
                error: e.to_string(),
            })?;
            out.push((run, event));
        }
        Ok(out)
    }

    /// Appends conversation messages (as JSON) after the existing ones.
    pub fn append_messages(&self, session: &str, messages: &[Value]) -> rusqlite::Result<()> {
        let mut conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // Immediate: a deferred transaction that reads, then writes, fails at
        // once when another process wrote in between.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let start: i64 = tx.query_row(
            "SELECT COALESCE(MAX(position), -1) + 1 FROM messages WHERE session_id = ?1",
            [session],
            |r| r.get(0),
        )?;
        for (i, message) in messages.iter().enumerate() {
            tx.execute(
                "INSERT INTO messages (session_id, position, message) VALUES (?1, ?2, ?3)",
                params![session, start + i as i64, message.to_string()],
            )?;
        }
        tx.commit()
    }

    /// The session's conversation, oldest first.
    pub fn messages(&self, session: &str) -> Result<Vec<Value>, StoreError> {
        let conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut statement =
            conn.prepare("SELECT position, message FROM messages WHERE session_id = ?1 ORDER BY position")?;
        let rows = statement.query_map([session], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (position, json) = row?;
            out.push(serde_json::from_str(&json).map_err(|e| StoreError::Undecodable {
                what: format!("message {position} of session {session}"),
                error: e.to_string(),
            })?);
        }
        Ok(out)
    }

    pub fn set_status(&self, session: &str, status: &str) -> rusqlite::Result<()> {
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).execute(
            "UPDATE sessions SET status = ?2, updated_ms = ?3 WHERE id = ?1",
            params![session, status, now_ms()],
        )?;
        Ok(())
    }

    /// Sessions, most recently updated first.
    pub fn list(&self) -> rusqlite::Result<Vec<SessionSummary>> {
        let conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut statement = conn.prepare(
            "SELECT s.id, s.workload, s.created_ms, s.updated_ms, s.status,
                    (SELECT COUNT(DISTINCT run) FROM events e WHERE e.session_id = s.id)
             FROM sessions s ORDER BY s.updated_ms DESC, s.id",
        )?;
        let rows = statement.query_map([], |r| {
            Ok(SessionSummary {
                id: r.get(0)?,
                workload: r.get(1)?,
                created_ms: r.get(2)?,
                updated_ms: r.get(3)?,
                status: r.get(4)?,
                runs: r.get(5)?,
            })
        })?;
        rows.collect()
    }

    /// A sink that appends a run's events to this session as they happen.
    /// Events it cannot save are kept for [`SessionStore::take_lost`].
    pub fn sink(&self, session: &str, run: i64) -> Arc<dyn EventSink> {
        let store = self.clone();
        let session = session.to_string();
        Arc::new(move |event: &Event| {
            if let Err(e) = store.append_event(&session, run, event) {
                let lost = format!("cannot save event {} of run {run} of session {session}: {e}", event.seq);
                store.lost.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(lost);
            }
        })
    }

    /// Why the sinks could not save events, since the last call.
    pub fn take_lost(&self) -> Vec<String> {
        std::mem::take(&mut *self.lost.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn processes_opening_a_new_store_at_once_all_succeed() {
        let dir = std::env::temp_dir().join(format!("sr-session-open-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sessions.db");
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
        let openers: Vec<_> = (0..8)
            .map(|_| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    SessionStore::open(&path).map(|_| ())
                })
            })
            .collect();
        for opener in openers {
            opener.join().unwrap().unwrap();
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    use super::*;
    use crate::event::Emitter;

    #[test]
    fn events_and_messages_are_stored_as_they_come() {
        let store = SessionStore::in_memory().unwrap();
        store.create("s1", "demo.sr").unwrap();
        let run = store.reserve_run("s1", None).unwrap();
        assert_eq!(run, 1);
        let emitter = Emitter::new("inv", vec![store.sink("s1", run)]);
        emitter.emit(Payload::Log { message: "one".into() });
        // Stored before the next event exists.
        assert_eq!(store.events("s1").unwrap().len(), 1);
        emitter.emit(Payload::Log { message: "two".into() });
        assert_eq!(store.reserve_run("s1", None).unwrap(), 2);
        assert_eq!(store.runs("s1").unwrap(), [(1, "running".to_string()), (2, "running".to_string())]);
        store.append_messages("s1", &[serde_json::json!({"role": "user", "text": "hi"})]).unwrap();
        store.append_messages("s1", &[serde_json::json!({"role": "assistant", "text": "hello"})]).unwrap();
        assert_eq!(store.messages("s1").unwrap().len(), 2);
        let sessions = store.list().unwrap();
        assert_eq!((sessions[0].id.as_str(), sessions[0].runs), ("s1", 1));
    }

    /// A record replaces what the cache has less of, and leaves alone what
    /// the record lacks.
    #[test]
    fn a_restored_session_takes_the_record_and_keeps_newer_cached_runs() {
        let store = SessionStore::in_memory().unwrap();
        let lineage = |run, status: &str, parent| RunLineage { run, status: status.into(), parent, from_step: None };
        store.create("s1", "demo.sr").unwrap();
        store.append_messages("s1", &[serde_json::json!({"role": "user", "text": "cached"})]).unwrap();
        assert_eq!(store.reserve_run("s1", None).unwrap(), 1);
        assert_eq!(store.reserve_run("s1", None).unwrap(), 2);
        store.set_run_status("s1", 1, "interrupted").unwrap();
        let recorded: Vec<Value> =
            ["a", "b", "c"].iter().map(|t| serde_json::json!({"role": "user", "text": t})).collect();
        store.restore("s1", "demo.sr", &recorded, &[lineage(1, "paused", None)]).unwrap();
        assert_eq!(store.messages("s1").unwrap(), recorded);
        // Run 2 is the cache's own, not in the record: kept.
        assert_eq!(store.runs("s1").unwrap(), [(1, "paused".to_string()), (2, "running".to_string())]);
        // A cached running run is the runtime's to judge, by its lease.
        store.restore("s1", "demo.sr", &[], &[lineage(2, "interrupted", Some(1))]).unwrap();
        assert_eq!(store.runs("s1").unwrap()[1], (2, "running".to_string()));
        // A shorter recorded conversation leaves the longer cached one.
        store.restore("s1", "demo.sr", &recorded[..1], &[]).unwrap();
        assert_eq!(store.messages("s1").unwrap().len(), 3);
        // A session the cache never saw is created.
        store
            .restore("s2", "demo.sr", &recorded[..1], &[lineage(1, "completed", None), lineage(2, "paused", Some(1))])
            .unwrap();
        assert_eq!(store.run_lineage("s2").unwrap()[1], lineage(2, "paused", Some(1)));
        assert_eq!(store.reserve_run("s2", None).unwrap(), 3);
    }

    #[test]
    fn rows_this_version_cannot_read_are_errors_not_gaps() {
        let store = SessionStore::in_memory().unwrap();
        store.create("s1", "demo.sr").unwrap();
        let run = store.reserve_run("s1", None).unwrap();
        let emitter = Emitter::new("inv", vec![store.sink("s1", run)]);
        emitter.emit(Payload::Log { message: "kept".into() });
        let conn = store.conn.lock().unwrap();
        conn.execute("INSERT INTO events (session_id, run, seq, version, event) VALUES ('s1', 1, 99, 1, '{')", [])
            .unwrap();
        conn.execute("INSERT INTO messages (session_id, position, message) VALUES ('s1', 0, 'not json')", []).unwrap();
        drop(conn);
        let error = store.events("s1").unwrap_err().to_string();
        assert!(error.starts_with("event 99 of run 1 of session s1 cannot be read"), "{error}");
        let error = store.messages("s1").unwrap_err().to_string();
        assert!(error.starts_with("message 0 of session s1 cannot be read"), "{error}");
    }

    #[test]
    fn events_a_sink_cannot_save_are_reported_not_printed() {
        let store = SessionStore::in_memory().unwrap();
        store.create("s1", "demo.sr").unwrap();
        let run = store.reserve_run("s1", None).unwrap();
        store.conn.lock().unwrap().execute("DROP TABLE events", []).unwrap();
        let emitter = Emitter::new("inv", vec![store.sink("s1", run)]);
        emitter.emit(Payload::Log { message: "lost".into() });
        let lost = store.take_lost();
        assert_eq!(lost.len(), 1);
        assert!(lost[0].starts_with("cannot save event 1 of run 1 of session s1: no such table: events"), "{lost:?}");
        assert!(store.take_lost().is_empty());
    }
}
