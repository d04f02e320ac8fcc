//! The embedded store: SQLite in the state directory (`serve.db`), one
//! connection behind a mutex; one process uses it (the `serve.lock` lease),
//! so a claim has no lease to expire: a restart queues again what the
//! previous process left running.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use futures::future::BoxFuture;
use sr_runtime::session::RunLineage;
use tokio::sync::mpsc;

use super::{
    A2aChange, Ending, Followed, JournalLines, LAST_RUN_SQL, LastRun, NewRun, Note, RecentRun, Record, Refusal, Result,
    RunRow, RunStatus, RunStore, SessionPage, SessionRow, StoreError, WORKLOADS_SQL, migrate, now_ms, sessions_sql,
    stored_id, stored_message,
};

#[derive(Clone)]
pub struct Sqlite {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

/// Statuses that hold their session: no other run of it starts meanwhile.
const ACTIVE: &str = "('running', 'paused', 'in_doubt')";

const RUN_COLUMNS: &str = "id, session, workload, entry, status, result, error, message, model, attempt_run, pending_input, epoch, a2a, trace_id";

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
        a2a: r.get(12)?,
        trace_id: r.get(13)?,
        question: None,
    }
    .questioned())
}

/// Brings the store's schema to the last version (`migrate`). A store made
/// before the schema had versions is version 1, once it has the epoch
/// columns that stores made before claims had epochs lack.
fn migrate(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let exists = |table: &str| -> rusqlite::Result<bool> {
        tx.query_row("SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?1", [table], |r| r.get(0))
    };
    let unversioned = !exists("sr_serve_schema")? && exists("runs")?;
    tx.execute_batch(migrate::CREATE_TABLE)?;
    if unversioned {
        for (table, column) in [("runs", "epoch"), ("run_events", "epoch")] {
            let has: bool = tx.query_row(
                &format!("SELECT COUNT(*) > 0 FROM pragma_table_info('{table}') WHERE name = '{column}'"),
                [],
                |r| r.get(0),
            )?;
            if !has {
                tx.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0"))?;
            }
        }
        tx.execute(migrate::RECORD, [1])?;
    }
    let applied: i32 = tx.query_row(migrate::APPLIED, [], |r| r.get(0))?;
    for migration in migrate::pending(migrate::SQLITE, applied) {
        tx.execute_batch(migration.sql)?;
        tx.execute(migrate::RECORD, [migration.version])?;
    }
    tx.commit()?;
    Ok(())
}

impl Sqlite {
    pub fn open(path: &Path) -> Result<Sqlite> {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(60))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        migrate(&mut conn)?;
        Ok(Sqlite { conn: Arc::new(Mutex::new(conn)), path: path.to_path_buf() })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn create_session(&self, id: &str) -> Result<()> {
        self.conn().execute(
            "INSERT OR IGNORE INTO sessions (id, created_ms, active_ms) VALUES (?1, ?2, ?2)",
            params![id, now_ms()],
        )?;
        Ok(())
    }

    fn session_exists(&self, id: &str) -> Result<bool> {
        Ok(self.conn().query_row("SELECT COUNT(*) > 0 FROM sessions WHERE id = ?1", [id], |r| r.get(0))?)
    }

    fn submit(&self, run: &NewRun<'_>, reject: bool) -> Result<(), Refusal> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(StoreError::from)?;
        let refuse = |e: rusqlite::Error| Refusal::Sql(e.into());
        tx.execute(
            "INSERT OR IGNORE INTO sessions (id, created_ms, active_ms) VALUES (?1, ?2, ?2)",
            params![run.session, now_ms()],
        )
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
            "INSERT INTO runs (id, session, workload, entry, message, model, status, created_ms, updated_ms, a2a)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7, ?7, ?8)",
            params![run.id, run.session, run.workload, run.entry, run.message, run.model, now, run.a2a],
        )
        .map_err(refuse)?;
        tx.execute("UPDATE sessions SET active_ms = MAX(active_ms, ?2) WHERE id = ?1", params![run.session, now])
            .map_err(refuse)?;
        tx.commit().map_err(refuse)?;
        Ok(())
    }

    fn claim(&self) -> Result<Option<RunRow>> {
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

    fn run(&self, id: &str) -> Result<Option<RunRow>> {
        Ok(self.conn().query_row(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"), [id], run_row).optional()?)
    }

    fn session_runs(&self, session: &str) -> Result<Vec<RunRow>> {
        let conn = self.conn();
        let mut statement =
            conn.prepare(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE session = ?1 ORDER BY position"))?;
        let rows = statement.query_map([session], run_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn requeue_running(&self) -> Result<usize> {
        Ok(self
            .conn()
            .execute("UPDATE runs SET status = 'queued', updated_ms = ?1 WHERE status = 'running'", [now_ms()])?)
    }

    fn fenced(id: &str, epoch: i64) -> StoreError {
        StoreError::Fenced { run: id.to_string(), epoch }
    }

    fn finish(&self, id: &str, from: RunStatus, ending: &Ending) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let epoch: Option<i64> = tx
            .query_row(
                "UPDATE runs SET status = ?3, result = ?4, error = ?5, updated_ms = ?6 WHERE id = ?1 AND status = ?2
                 RETURNING epoch",
                params![
                    id,
                    from.as_str(),
                    ending.status.as_str(),
                    ending.result.as_ref().map(Value::to_string),
                    ending.error,
                    now_ms()
                ],
                |r| r.get(0),
            )
            .optional()?;
        let Some(epoch) = epoch else { return Ok(false) };
        append_ending(&tx, id, epoch, ending)?;
        tx.commit()?;
        Ok(true)
    }

    fn end(&self, id: &str, epoch: i64, ending: &Ending) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Before the status changes: an opening is fenced by the run still running.
        if let Some(lines) = &ending.journal {
            store_lines(&tx, id, epoch, lines)?;
        }
        let changed = tx.execute(
            "UPDATE runs SET status = ?3, result = ?4, error = ?5, updated_ms = ?6
             WHERE id = ?1 AND epoch = ?2 AND status = 'running'",
            params![
                id,
                epoch,
                ending.status.as_str(),
                ending.result.as_ref().map(Value::to_string),
                ending.error,
                now_ms()
            ],
        )?;
        if changed == 0 {
            return Err(Self::fenced(id, epoch));
        }
        append_ending(&tx, id, epoch, ending)?;
        if let Some(record) = &ending.record {
            save_record(&tx, record)?;
        }
        let queued: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM runs WHERE status = 'queued'
                            AND session = (SELECT session FROM runs WHERE id = ?1))",
            [id],
            |r| r.get(0),
        )?;
        tx.commit()?;
        Ok(queued)
    }

    fn write_batch(&self, run: &str, epoch: i64, lines: Option<&JournalLines>, events: &[(u64, String)]) -> Result<()> {
        let mut conn = self.conn();
        // With nothing to write, a read: no write lock.
        let writes = lines.is_some() || !events.is_empty();
        let behavior = if writes { TransactionBehavior::Immediate } else { TransactionBehavior::Deferred };
        let tx = conn.transaction_with_behavior(behavior)?;
        let held: bool = tx.query_row(
            "SELECT COUNT(*) > 0 FROM runs WHERE id = ?1 AND epoch = ?2 AND status = 'running'",
            params![run, epoch],
            |r| r.get(0),
        )?;
        if !held {
            return Err(Self::fenced(run, epoch));
        }
        if let Some(lines) = lines {
            store_lines(&tx, run, epoch, lines)?;
        }
        insert_events(&tx, run, epoch, events)?;
        tx.commit()?;
        Ok(())
    }

    fn trace(&self, run: &str, trace_id: &str) -> Result<Option<String>> {
        let sql = "UPDATE runs SET trace_id = COALESCE(trace_id, ?2) WHERE id = ?1 RETURNING trace_id";
        Ok(self.conn().query_row(sql, [run, trace_id], |r| r.get(0)).optional()?)
    }

    fn save_plan(&self, run: &str, plan: &str) -> Result<()> {
        self.conn().execute("INSERT INTO fork_plans (run, plan) VALUES (?1, ?2)", params![run, plan])?;
        Ok(())
    }

    fn discard_plan(&self, run: &str) -> Result<()> {
        self.conn().execute("DELETE FROM fork_plans WHERE run = ?1", [run])?;
        Ok(())
    }

    fn plan(&self, run: &str) -> Result<Option<String>> {
        Ok(self.conn().query_row("SELECT plan FROM fork_plans WHERE run = ?1", [run], |r| r.get(0)).optional()?)
    }

    fn a2a_record(&self, run: &str) -> Result<Option<String>> {
        let record: Option<String> =
            self.conn().query_row("SELECT record FROM a2a_records WHERE run = ?1", [run], |r| r.get(0)).optional()?;
        Ok(record.filter(|r| !r.is_empty()))
    }

    fn change_a2a(&self, run: &str, files: &[(String, Vec<u8>)], change: &A2aChange<'_>) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        for (sha256, bytes) in files {
            tx.execute(
                "INSERT OR IGNORE INTO a2a_files (run, sha256, bytes) VALUES (?1, ?2, ?3)",
                params![run, sha256, bytes],
            )?;
        }
        tx.execute("UPDATE runs SET a2a = 1 WHERE id = ?1 AND a2a = 0", [run])?;
        let stored: Option<String> =
            tx.query_row("SELECT record FROM a2a_records WHERE run = ?1", [run], |r| r.get(0)).optional()?;
        let Some(changed) = change(stored.as_deref().filter(|r| !r.is_empty()))? else {
            tx.commit()?;
            return Ok(false);
        };
        tx.execute(
            "INSERT INTO a2a_records (run, record) VALUES (?1, ?2) ON CONFLICT (run) DO UPDATE SET record = ?2",
            params![run, changed],
        )?;
        tx.commit()?;
        Ok(true)
    }

    fn a2a_files(&self, run: &str) -> Result<HashMap<String, Vec<u8>>> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached("SELECT sha256, bytes FROM a2a_files WHERE run = ?1")?;
        let rows = statement.query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn follow_a2a(&self, run: &str, follower: Option<&str>) -> Result<()> {
        self.conn().execute("UPDATE a2a_records SET follower = ?2 WHERE run = ?1", params![run, follower])?;
        Ok(())
    }

    fn a2a_followed(&self, follower: &str) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached("SELECT run FROM a2a_records WHERE follower = ?1 ORDER BY run")?;
        let rows = statement.query_map([follower], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn forget_a2a(&self, run: &str) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute("DELETE FROM a2a_records WHERE run = ?1", [run])?;
        tx.execute("DELETE FROM a2a_files WHERE run = ?1", [run])?;
        tx.commit()?;
        Ok(())
    }

    fn plans(&self, runs: &[String]) -> Result<HashMap<String, String>> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached("SELECT plan FROM fork_plans WHERE run = ?1")?;
        let mut plans = HashMap::new();
        for run in runs {
            if let Some(plan) = statement.query_row([run], |r| r.get::<_, String>(0)).optional()? {
                plans.insert(run.clone(), plan);
            }
        }
        Ok(plans)
    }

    fn record(&self, session: &str) -> Result<Record> {
        let conn = self.conn();
        let mut record = Record { session: session.to_string(), ..Record::default() };
        let mut statement =
            conn.prepare_cached("SELECT position, message FROM session_messages WHERE session = ?1 ORDER BY position")?;
        let rows = statement.query_map([session], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (position, json) = row?;
            record.messages.push(stored_message(session, position, &json)?);
        }
        let mut statement = conn.prepare_cached(
            "SELECT attempt, status, parent, from_step FROM session_attempts WHERE session = ?1 ORDER BY attempt",
        )?;
        let rows = statement.query_map([session], RunLineage::from_row)?;
        record.attempts = rows.collect::<rusqlite::Result<_>>()?;
        let mut statement =
            conn.prepare_cached("SELECT attempt, body FROM journal_lines WHERE session = ?1 ORDER BY attempt, line")?;
        let rows = statement.query_map([session], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (attempt, body) = row?;
            match record.journals.last_mut() {
                Some((last, lines)) if *last == attempt => lines.push(body),
                _ => record.journals.push((attempt, vec![body])),
            }
        }
        Ok(record)
    }

    fn journal(&self, session: &str, attempt: i64) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut statement =
            conn.prepare_cached("SELECT body FROM journal_lines WHERE session = ?1 AND attempt = ?2 ORDER BY line")?;
        let rows = statement.query_map(params![session, attempt], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn answer(&self, id: &str, input: &str) -> Result<bool> {
        let changed = self.conn().execute(
            "UPDATE runs SET status = 'queued', pending_input = ?2, updated_ms = ?3 WHERE id = ?1 AND status = 'paused'",
            params![id, input, now_ms()],
        )?;
        Ok(changed > 0)
    }

    fn decide(&self, id: &str, decision: &str) -> Result<bool> {
        let changed = self.conn().execute(
            "UPDATE runs SET status = 'queued', pending_input = ?2, updated_ms = ?3 WHERE id = ?1 AND status = 'in_doubt'",
            params![id, decision, now_ms()],
        )?;
        Ok(changed > 0)
    }

    fn last_event(&self, run: &str) -> Result<u64> {
        let last: i64 =
            self.conn().query_row("SELECT COALESCE(MAX(id), 0) FROM run_events WHERE run = ?1", [run], |r| r.get(0))?;
        Ok(last as u64)
    }

    fn events_after(&self, run: &str, after: i64, limit: i64) -> Result<Vec<(u64, String)>> {
        let conn = self.conn();
        let mut statement =
            conn.prepare_cached("SELECT id, event FROM run_events WHERE run = ?1 AND id > ?2 ORDER BY id LIMIT ?3")?;
        let rows = statement.query_map(params![run, after, limit], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn follow(&self, run: &str, after: i64, limit: i64) -> Result<Option<Followed>> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT r.status, e.id, e.event FROM runs AS r
             LEFT JOIN (SELECT id, event FROM run_events WHERE run = ?1 AND id > ?2 ORDER BY id LIMIT ?3) AS e
             WHERE r.id = ?1 ORDER BY e.id",
        )?;
        let mut rows = statement.query(params![run, after, limit])?;
        let mut followed: Option<Followed> = None;
        while let Some(row) = rows.next()? {
            let (_, events) = followed.get_or_insert((status(row, 0)?, Vec::new()));
            if let Some(id) = row.get::<_, Option<i64>>(1)? {
                events.push((id as u64, row.get(2)?));
            }
        }
        Ok(followed)
    }

    fn counts(&self) -> Result<Vec<(RunStatus, i64)>> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached("SELECT COUNT(*) FROM runs WHERE status = ?1")?;
        RunStatus::ALL
            .iter()
            .map(|status| Ok((*status, statement.query_row([status.as_str()], |r| r.get(0))?)))
            .collect()
    }

    fn heartbeat(&self, claims: &[(String, i64)]) -> Result<Vec<String>> {
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

    /// A read-only connection of its own, so that the studio's reads never
    /// hold the store's lock.
    fn reader(&self) -> Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        Ok(conn)
    }

    fn sessions(&self, page: &SessionPage) -> Result<Vec<SessionRow>> {
        let conn = self.reader()?;
        let (before_ms, before_id) = page.before.clone().unzip();
        let mut statement = conn.prepare(&sessions_sql("instr"))?;
        let rows = statement.query_map(params![page.q, before_ms, before_id, page.limit], |r| {
            Ok(SessionRow {
                id: r.get(0)?,
                created_ms: r.get(1)?,
                active_ms: r.get(2)?,
                runs: r.get(3)?,
                last: None,
                workloads: Vec::new(),
            })
        })?;
        let mut sessions = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        let (mut last, mut workloads) = (conn.prepare(LAST_RUN_SQL)?, conn.prepare(WORKLOADS_SQL)?);
        for session in &mut sessions {
            session.last = last
                .query_row([&session.id], |r| {
                    Ok(LastRun { id: r.get(0)?, created_ms: r.get(1)?, status: status(r, 2)? })
                })
                .optional()?;
            session.workloads = workloads.query_map([&session.id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        }
        Ok(sessions)
    }

    fn recent_runs(&self, wanted: Option<RunStatus>, limit: u32) -> Result<Vec<RecentRun>> {
        let conn = self.reader()?;
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

/// Stores an attempt's journal `lines` in `tx`; an opening is fenced by the
/// claim's epoch, other lines by the caller.
fn store_lines(tx: &rusqlite::Transaction<'_>, run: &str, epoch: i64, lines: &JournalLines) -> Result<()> {
    let (session, attempt) = (&lines.session, lines.attempt);
    if lines.opening {
        let changed = tx.execute(
            "UPDATE runs SET attempt_run = ?3, pending_input = NULL, updated_ms = ?4
             WHERE id = ?1 AND epoch = ?2 AND status = 'running'",
            params![run, epoch, attempt, now_ms()],
        )?;
        if changed == 0 {
            return Err(Sqlite::fenced(run, epoch));
        }
        let (parent, from) = lines.origin.map_or((None, None), |(p, f)| (Some(p), f.map(|s| s as i64)));
        tx.execute(
            "INSERT OR REPLACE INTO session_attempts (session, attempt, status, parent, from_step)
             VALUES (?1, ?2, 'running', ?3, ?4)",
            params![session, attempt, parent, from],
        )?;
        tx.execute("DELETE FROM journal_lines WHERE session = ?1 AND attempt = ?2", params![session, attempt])?;
    }
    let mut insert =
        tx.prepare_cached("INSERT INTO journal_lines (session, attempt, line, body) VALUES (?1, ?2, ?3, ?4)")?;
    for (line, body) in (lines.first..).zip(&lines.lines) {
        insert.execute(params![session, attempt, line, body])?;
    }
    Ok(())
}

/// Appends a run's last events after its others, in the transaction that ends it.
fn append_ending(tx: &rusqlite::Transaction<'_>, run: &str, epoch: i64, ending: &Ending) -> Result<()> {
    let last: i64 = match ending.numbered() {
        true => 0,
        false => tx.query_row("SELECT COALESCE(MAX(id), 0) FROM run_events WHERE run = ?1", [run], |r| r.get(0))?,
    };
    insert_events(tx, run, epoch, &ending.stored_events(last as u64 + 1))
}

/// Inserts a claimed run's events under their ids, in `tx` (which the caller fenced).
fn insert_events(tx: &rusqlite::Transaction<'_>, run: &str, epoch: i64, events: &[(u64, String)]) -> Result<()> {
    let mut insert = tx.prepare_cached("INSERT INTO run_events (run, id, event, epoch) VALUES (?1, ?2, ?3, ?4)")?;
    for (id, event) in events {
        insert.execute(params![run, *id as i64, event, epoch])?;
    }
    Ok(())
}

/// Replaces the session's conversation and attempts with `record`'s.
fn save_record(tx: &rusqlite::Transaction<'_>, record: &Record) -> Result<()> {
    let session = &record.session;
    tx.execute("DELETE FROM session_messages WHERE session = ?1", [session])?;
    for (position, message) in record.messages.iter().enumerate() {
        tx.execute(
            "INSERT INTO session_messages (session, position, message) VALUES (?1, ?2, ?3)",
            params![session, position as i64, message.to_string()],
        )?;
    }
    tx.execute("DELETE FROM session_attempts WHERE session = ?1", [session])?;
    for attempt in &record.attempts {
        tx.execute(
            "INSERT INTO session_attempts (session, attempt, status, parent, from_step) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![session, attempt.run, attempt.status, attempt.parent, attempt.from_step.map(|s| s as i64)],
        )?;
    }
    Ok(())
}

/// A call answered at once: SQLite's calls are made when asked.
fn ready<'a, T: Send + 'a>(value: T) -> BoxFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl RunStore for Sqlite {
    fn create_session<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<()>> {
        ready(Sqlite::create_session(self, id))
    }

    fn session_exists<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool>> {
        ready(Sqlite::session_exists(self, id))
    }

    fn submit<'a>(&'a self, run: &'a NewRun<'a>, reject: bool) -> BoxFuture<'a, Result<(), Refusal>> {
        ready(Sqlite::submit(self, run, reject))
    }

    fn claim(&self) -> BoxFuture<'_, Result<Option<RunRow>>> {
        ready(Sqlite::claim(self))
    }

    fn run<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<RunRow>>> {
        ready(Sqlite::run(self, id))
    }

    fn session_runs<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Vec<RunRow>>> {
        ready(Sqlite::session_runs(self, session))
    }

    fn requeue_running(&self) -> Result<usize> {
        Sqlite::requeue_running(self)
    }

    fn finish<'a>(&'a self, id: &'a str, from: RunStatus, ending: &'a Ending) -> BoxFuture<'a, Result<bool>> {
        ready(Sqlite::finish(self, id, from, ending))
    }

    fn end<'a>(&'a self, id: &'a str, epoch: i64, ending: &'a Ending) -> BoxFuture<'a, Result<bool>> {
        ready(Sqlite::end(self, id, epoch, ending))
    }

    fn record<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Record>> {
        ready(Sqlite::record(self, session))
    }

    fn journal<'a>(&'a self, session: &'a str, attempt: i64) -> BoxFuture<'a, Result<Vec<String>>> {
        ready(Sqlite::journal(self, session, attempt))
    }

    fn trace<'a>(&'a self, run: &'a str, trace_id: &'a str) -> BoxFuture<'a, Result<Option<String>>> {
        ready(Sqlite::trace(self, run, trace_id))
    }

    fn save_plan<'a>(&'a self, run: &'a str, plan: &'a str) -> BoxFuture<'a, Result<()>> {
        ready(Sqlite::save_plan(self, run, plan))
    }

    fn discard_plan<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<()>> {
        ready(Sqlite::discard_plan(self, run))
    }

    fn plan<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Option<String>>> {
        ready(Sqlite::plan(self, run))
    }

    fn plans<'a>(&'a self, runs: &'a [String]) -> BoxFuture<'a, Result<HashMap<String, String>>> {
        ready(Sqlite::plans(self, runs))
    }

    fn a2a_record<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Option<String>>> {
        ready(Sqlite::a2a_record(self, run))
    }

    fn change_a2a<'a>(
        &'a self,
        run: &'a str,
        files: &'a [(String, Vec<u8>)],
        change: &'a A2aChange<'a>,
    ) -> BoxFuture<'a, Result<bool>> {
        ready(Sqlite::change_a2a(self, run, files, change))
    }

    fn a2a_files<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<HashMap<String, Vec<u8>>>> {
        ready(Sqlite::a2a_files(self, run))
    }

    fn forget_a2a<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<()>> {
        ready(Sqlite::forget_a2a(self, run))
    }

    fn follow_a2a<'a>(&'a self, run: &'a str, follower: Option<&'a str>) -> BoxFuture<'a, Result<()>> {
        ready(Sqlite::follow_a2a(self, run, follower))
    }

    fn a2a_followed<'a>(&'a self, follower: &'a str) -> BoxFuture<'a, Result<Vec<String>>> {
        ready(Sqlite::a2a_followed(self, follower))
    }

    fn write_batch<'a>(
        &'a self,
        run: &'a str,
        epoch: i64,
        lines: Option<&'a JournalLines>,
        events: &'a [(u64, String)],
    ) -> BoxFuture<'a, Result<()>> {
        ready(Sqlite::write_batch(self, run, epoch, lines, events))
    }

    fn answer<'a>(&'a self, id: &'a str, input: &'a str) -> BoxFuture<'a, Result<bool>> {
        ready(Sqlite::answer(self, id, input))
    }

    fn decide<'a>(&'a self, id: &'a str, decision: &'a str) -> BoxFuture<'a, Result<bool>> {
        ready(Sqlite::decide(self, id, decision))
    }

    fn last_event<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<u64>> {
        ready(Sqlite::last_event(self, run))
    }

    fn events_after<'a>(&'a self, run: &'a str, after: u64, limit: usize) -> BoxFuture<'a, Result<Vec<(u64, String)>>> {
        ready(Sqlite::events_after(self, run, stored_id(after), limit as i64))
    }

    fn follow<'a>(&'a self, run: &'a str, after: u64, limit: usize) -> BoxFuture<'a, Result<Option<Followed>>> {
        ready(Sqlite::follow(self, run, stored_id(after), limit as i64))
    }

    fn counts(&self) -> BoxFuture<'_, Result<Vec<(RunStatus, i64)>>> {
        ready(Sqlite::counts(self))
    }

    fn heartbeat<'a>(&'a self, claims: &'a [(String, i64)]) -> BoxFuture<'a, Result<Vec<String>>> {
        ready(Sqlite::heartbeat(self, claims))
    }

    fn release<'a>(&'a self, _id: &'a str, _epoch: i64) -> BoxFuture<'a, Result<()>> {
        ready(Ok(()))
    }

    fn request_cancel<'a>(&'a self, _id: &'a str) -> BoxFuture<'a, Result<()>> {
        ready(Ok(()))
    }

    /// On a thread of its own: the studio's read never waits on a run's writes.
    fn recent_runs(&self, status: Option<RunStatus>, limit: u32) -> BoxFuture<'_, Result<Vec<RecentRun>>> {
        let store = self.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || store.recent_runs(status, limit))
                .await
                .map_err(|e| StoreError::Reader(e.to_string()))?
        })
    }

    /// On a thread of its own, as `recent_runs`.
    fn sessions<'a>(&'a self, page: &'a SessionPage) -> BoxFuture<'a, Result<Vec<SessionRow>>> {
        let (store, page) = (self.clone(), page.clone());
        Box::pin(async move {
            tokio::task::spawn_blocking(move || store.sessions(&page))
                .await
                .map_err(|e| StoreError::Reader(e.to_string()))?
        })
    }

    fn listen(&self) -> Option<mpsc::Receiver<Note>> {
        None
    }

    fn ping(&self) -> BoxFuture<'_, Result<()>> {
        ready(self.conn().query_row("SELECT 1", [], |_| Ok(())).map_err(StoreError::from))
    }

    #[cfg(test)]
    fn is_shared(&self) -> bool {
        false
    }

    #[cfg(test)]
    fn raw<'a>(&'a self, sql: &'a str) -> BoxFuture<'a, Result<u64>> {
        ready(self.conn().execute(sql, []).map(|n| n as u64).map_err(StoreError::from))
    }
}
