//! The embedded store: SQLite in the state directory (`serve.db`), one
//! connection behind a mutex; one process uses it (the `serve.lock` lease),
//! so a claim has no lease to expire: a restart queues again what the
//! previous process left running.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use super::{NewRun, RecentRun, Refusal, Result, RunRow, RunStatus, StoreError, now_ms};

#[derive(Clone)]
pub struct Sqlite {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

/// Statuses that hold their session: no other run of it starts meanwhile.
const ACTIVE: &str = "('running', 'paused', 'in_doubt')";

const RUN_COLUMNS: &str =
    "id, session, workload, entry, status, result, error, message, model, attempt_run, pending_input, epoch";

/// Column `i` of a row as a status.
fn status(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<RunStatus> {
    r.get::<_, String>(i)?
        .parse()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e)))
}

fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRow> {
    let result: Option<String> = r.get(5)?;
    Ok(RunRow {
        id: r.get(0)?,
        session: r.get(1)?,
        workload: r.get(2)?,
        entry: r.get(3)?,
        status: status(r, 4)?,
        result: result.and_then(|text| serde_json::from_str(&text).ok()),
        error: r.get(6)?,
        message: r.get(7)?,
        model: r.get(8)?,
        attempt_run: r.get(9)?,
        pending_input: r.get(10)?,
        epoch: r.get(11)?,
        question: None,
    }
    .questioned())
}

impl Sqlite {
    pub fn open(path: &Path) -> Result<Sqlite> {
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
        // Stores written before claims had epochs.
        for (table, column) in [("runs", "epoch"), ("run_events", "epoch")] {
            let has: bool = conn.query_row(
                &format!("SELECT COUNT(*) > 0 FROM pragma_table_info('{table}') WHERE name = '{column}'"),
                [],
                |r| r.get(0),
            )?;
            if !has {
                conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0"))?;
            }
        }
        Ok(Sqlite { conn: Arc::new(Mutex::new(conn)), path: path.to_path_buf() })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    #[cfg(test)]
    pub fn conn_for_tests(&self) -> MutexGuard<'_, Connection> {
        self.conn()
    }

    pub fn create_session(&self, id: &str) -> Result<()> {
        self.conn()
            .execute("INSERT OR IGNORE INTO sessions (id, created_ms) VALUES (?1, ?2)", params![id, now_ms()])?;
        Ok(())
    }

    pub fn session_exists(&self, id: &str) -> Result<bool> {
        Ok(self.conn().query_row("SELECT COUNT(*) > 0 FROM sessions WHERE id = ?1", [id], |r| r.get(0))?)
    }

    pub fn submit(&self, run: &NewRun<'_>, reject: bool) -> Result<(), Refusal> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(StoreError::from)?;
        let refuse = |e: rusqlite::Error| Refusal::Sql(e.into());
        tx.execute("INSERT OR IGNORE INTO sessions (id, created_ms) VALUES (?1, ?2)", params![run.session, now_ms()])
            .map_err(refuse)?;
        if reject {
            let busy: Option<String> = tx
                .query_row(
                    "SELECT id FROM runs WHERE session = ?1
                     AND status IN ('queued', 'running', 'paused', 'in_doubt') LIMIT 1",
                    [run.session],
                    |r| r.get(0),
                )
                .optional()
                .map_err(refuse)?;
            if let Some(busy) = busy {
                return Err(Refusal::SessionBusy(busy));
            }
        }
        let now = now_ms();
        tx.execute(
            "INSERT INTO runs (id, session, workload, entry, message, model, status, created_ms, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7, ?7)",
            params![run.id, run.session, run.workload, run.entry, run.message, run.model, now],
        )
        .map_err(refuse)?;
        tx.commit().map_err(refuse)?;
        Ok(())
    }

    pub fn claim(&self) -> Result<Option<RunRow>> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let next: Option<String> = tx
            .query_row(
                &format!(
                    "SELECT id FROM runs AS q WHERE status = 'queued' AND NOT EXISTS
                     (SELECT 1 FROM runs AS a WHERE a.session = q.session
                      AND (a.status IN {ACTIVE} OR (a.status = 'queued' AND a.position < q.position)))
                     ORDER BY position LIMIT 1"
                ),
                [],
                |r| r.get(0),
            )
            .optional()?;
        let Some(id) = next else { return Ok(None) };
        let run = tx.query_row(
            &format!(
                "UPDATE runs SET status = 'running', epoch = epoch + 1, updated_ms = ?2 WHERE id = ?1
                 RETURNING {RUN_COLUMNS}"
            ),
            params![id, now_ms()],
            run_row,
        )?;
        tx.commit()?;
        Ok(Some(run))
    }

    pub fn run(&self, id: &str) -> Result<Option<RunRow>> {
        Ok(self.conn().query_row(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"), [id], run_row).optional()?)
    }

    pub fn session_runs(&self, session: &str) -> Result<Vec<RunRow>> {
        let conn = self.conn();
        let mut statement =
            conn.prepare(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE session = ?1 ORDER BY position"))?;
        let rows = statement.query_map([session], run_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn requeue_running(&self) -> Result<usize> {
        Ok(self
            .conn()
            .execute("UPDATE runs SET status = 'queued', updated_ms = ?1 WHERE status = 'running'", [now_ms()])?)
    }

    fn fenced(id: &str, epoch: i64) -> StoreError {
        StoreError::Fenced { run: id.to_string(), epoch }
    }

    pub fn set_attempt(&self, id: &str, epoch: i64, attempt_run: i64) -> Result<()> {
        let changed = self.conn().execute(
            "UPDATE runs SET attempt_run = ?3, pending_input = NULL, updated_ms = ?4
             WHERE id = ?1 AND epoch = ?2 AND status = 'running'",
            params![id, epoch, attempt_run, now_ms()],
        )?;
        if changed == 0 { Err(Self::fenced(id, epoch)) } else { Ok(()) }
    }

    pub fn finish(
        &self,
        id: &str,
        from: RunStatus,
        status: RunStatus,
        result: Option<&Value>,
        error: Option<&str>,
    ) -> Result<bool> {
        let changed = self.conn().execute(
            "UPDATE runs SET status = ?3, result = ?4, error = ?5, updated_ms = ?6 WHERE id = ?1 AND status = ?2",
            params![id, from.as_str(), status.as_str(), result.map(Value::to_string), error, now_ms()],
        )?;
        Ok(changed > 0)
    }

    pub fn end(
        &self,
        id: &str,
        epoch: i64,
        status: RunStatus,
        result: Option<&Value>,
        error: Option<&str>,
    ) -> Result<()> {
        let changed = self.conn().execute(
            "UPDATE runs SET status = ?3, result = ?4, error = ?5, updated_ms = ?6
             WHERE id = ?1 AND epoch = ?2 AND status = 'running'",
            params![id, epoch, status.as_str(), result.map(Value::to_string), error, now_ms()],
        )?;
        if changed == 0 { Err(Self::fenced(id, epoch)) } else { Ok(()) }
    }

    pub fn answer(&self, id: &str, input: &str) -> Result<bool> {
        let changed = self.conn().execute(
            "UPDATE runs SET status = 'queued', pending_input = ?2, updated_ms = ?3 WHERE id = ?1 AND status = 'paused'",
            params![id, input, now_ms()],
        )?;
        Ok(changed > 0)
    }

    pub fn decide(&self, id: &str, decision: &str) -> Result<bool> {
        let changed = self.conn().execute(
            "UPDATE runs SET status = 'queued', pending_input = ?2, updated_ms = ?3 WHERE id = ?1 AND status = 'in_doubt'",
            params![id, decision, now_ms()],
        )?;
        Ok(changed > 0)
    }

    pub fn append_event(&self, run: &str, epoch: i64, id: u64, event: &str) -> Result<()> {
        let conn = self.conn();
        let mut insert = conn.prepare_cached(
            "INSERT INTO run_events (run, id, event, epoch)
             SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM runs WHERE id = ?1 AND epoch = ?4)",
        )?;
        if insert.execute(params![run, id as i64, event, epoch])? == 0 {
            return Err(Self::fenced(run, epoch));
        }
        Ok(())
    }

    pub fn last_event(&self, run: &str) -> Result<u64> {
        let last: i64 =
            self.conn().query_row("SELECT COALESCE(MAX(id), 0) FROM run_events WHERE run = ?1", [run], |r| r.get(0))?;
        Ok(last as u64)
    }

    pub fn events_after(&self, run: &str, after: i64, limit: i64) -> Result<Vec<(u64, String)>> {
        let conn = self.conn();
        let mut statement =
            conn.prepare_cached("SELECT id, event FROM run_events WHERE run = ?1 AND id > ?2 ORDER BY id LIMIT ?3")?;
        let rows = statement.query_map(params![run, after, limit], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn counts(&self) -> Result<Vec<(RunStatus, i64)>> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached("SELECT COUNT(*) FROM runs WHERE status = ?1")?;
        RunStatus::ALL
            .iter()
            .map(|status| Ok((*status, statement.query_row([status.as_str()], |r| r.get(0))?)))
            .collect()
    }

    pub fn heartbeat(&self, claims: &[(String, i64)]) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut held =
            conn.prepare_cached("SELECT COUNT(*) > 0 FROM runs WHERE id = ?1 AND epoch = ?2 AND status = 'running'")?;
        let mut lost = Vec::new();
        for (id, epoch) in claims {
            if !held.query_row(params![id, epoch], |r| r.get::<_, bool>(0))? {
                lost.push(id.clone());
            }
        }
        Ok(lost)
    }

    /// Read on a read-only connection of its own, so it never holds the
    /// store's lock.
    pub fn recent_runs(&self, wanted: Option<RunStatus>, limit: u32) -> Result<Vec<RecentRun>> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let mut statement = conn.prepare(
            "SELECT id, session, workload, entry, status, error, created_ms, updated_ms,
                    (SELECT event FROM run_events AS e WHERE e.run = runs.id ORDER BY e.id DESC LIMIT 1)
             FROM runs WHERE ?1 IS NULL OR status = ?1 ORDER BY position DESC LIMIT ?2",
        )?;
        let rows = statement.query_map(params![wanted.map(RunStatus::as_str), limit], |r| {
            Ok(RecentRun {
                id: r.get(0)?,
                session: r.get(1)?,
                workload: r.get(2)?,
                entry: r.get(3)?,
                status: status(r, 4)?,
                error: r.get(5)?,
                created_ms: r.get(6)?,
                updated_ms: r.get(7)?,
                last_event: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
