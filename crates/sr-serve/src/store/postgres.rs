//! The shared store: PostgreSQL, a small pool of connections (deadpool) and
//! one more that `LISTEN`s. Replicas coordinate only through it: claims
//! lock the queue's head with `FOR UPDATE SKIP LOCKED`, leases use the
//! database's clock, every write of a claimed run checks its epoch while
//! holding the run's row (a batch `FOR KEY SHARE`, so a claim's `FOR
//! UPDATE` skips or waits for it and it sees a claim that committed first,
//! while a heartbeat's `UPDATE` of the lease does not wait on it; an end
//! or an attempt's opening by its `UPDATE`), and each change is announced
//! with `NOTIFY` in the transaction that makes it.

use std::collections::HashMap;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_postgres::error::SqlState;
use tokio_postgres::{AsyncMessage, Config, NoTls, Row};

use futures::future::BoxFuture;
use sr_runtime::session::RunLineage;

use super::{
    A2aChange, Ending, Followed, JournalLines, LAST_RUN_SQL, LastRun, NewRun, Note, RecentRun, Record, Refusal, Result,
    RunRow, RunStatus, RunStore, SessionPage, SessionRow, StoreError, WORKLOADS_SQL, migrate, now_ms, sessions_sql,
    stored_id, stored_message,
};

#[derive(Clone)]
pub struct Postgres {
    pool: Pool,
    config: Config,
    replica: String,
    /// A lease's length, in milliseconds (the database's `interval`).
    lease_ms: i64,
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(e: tokio_postgres::Error) -> StoreError {
        // The server's own message (the `Display` of a database error is only "db error").
        StoreError::Postgres(e.as_db_error().map_or_else(|| e.to_string(), |db| db.to_string()))
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(e: deadpool_postgres::PoolError) -> StoreError {
        StoreError::Postgres(e.to_string())
    }
}

/// The advisory lock migrations hold (any fixed number; this one spells "srserve").
const MIGRATION_LOCK: i64 = 0x0073_7273_6572_7665;

const RUN_COLUMNS: &str = "id, session, workload, entry, status, result, error, message, model, attempt_run, pending_input, epoch, a2a, trace_id";

/// How many columns [`RUN_COLUMNS`] names: a query's own columns follow them.
const RUN_COLUMN_COUNT: usize = {
    let bytes = RUN_COLUMNS.as_bytes();
    let (mut commas, mut i) = (0, 0);
    while i < bytes.len() {
        if bytes[i] == b',' {
            commas += 1;
        }
        i += 1;
    }
    commas + 1
};

/// The claim (made once: it runs for every run): the run's columns, then
/// whether a second run was claimable with it (both locked while the
/// statement runs, the second left as it was).
static CLAIM_SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "WITH next AS (
                         SELECT q.id, q.position FROM runs AS q
                         WHERE (q.status = 'queued' AND NOT EXISTS
                                (SELECT 1 FROM runs AS a WHERE a.session = q.session
                                 AND (a.status IN ('running', 'paused', 'in_doubt')
                                      OR (a.status = 'queued' AND a.position < q.position))))
                            OR (q.status = 'running' AND q.lease_until < now())
                         ORDER BY q.position LIMIT 2
                         FOR UPDATE SKIP LOCKED),
                          first AS (SELECT id FROM next ORDER BY position LIMIT 1)
                     UPDATE runs SET status = 'running', epoch = runs.epoch + 1, replica = $1,
                         lease_until = now() + make_interval(secs => $2::float8 / 1000), updated_ms = $3
                     FROM first WHERE runs.id = first.id
                     RETURNING {}, (SELECT COUNT(*) FROM next) > 1",
        RUN_COLUMNS.split(", ").map(|c| format!("runs.{c}")).collect::<Vec<_>>().join(", ")
    )
});

const WAKE: &str = "sr_serve_wake";
const RUN: &str = "sr_serve_run";
/// A run's status changed (it ended, or was answered): its waiters read it again.
const STATUS: &str = "sr_serve_status";
const CANCEL: &str = "sr_serve_cancel";

mod sql;

use sql::{BATCH_SQL, END_SQL, OPENING_SQL};

/// SQLite's `?N` placeholders as PostgreSQL's `$N`.
fn dollars(sql: &str) -> String {
    sql.replace('?', "$")
}

/// Column `i` of a row as a status.
fn status(r: &Row, i: usize) -> Result<RunStatus> {
    r.get::<_, &str>(i).parse().map_err(StoreError::Status)
}

fn run_row(r: &Row) -> Result<RunRow> {
    let result: Option<String> = r.get(5);
    Ok(RunRow {
        id: r.get(0),
        session: r.get(1),
        workload: r.get(2),
        entry: r.get(3),
        status: status(r, 4)?,
        result: result.and_then(|text| serde_json::from_str(&text).ok()),
        error: r.get(6),
        message: r.get(7),
        model: r.get(8),
        attempt_run: r.get(9),
        pending_input: r.get(10),
        epoch: r.get(11),
        a2a: r.get(12),
        trace_id: r.get(13),
        question: None,
    }
    .questioned())
}

fn fenced(id: &str, epoch: i64) -> StoreError {
    StoreError::Fenced { run: id.to_string(), epoch }
}

impl Postgres {
    pub async fn connect(url: &str, replica: &str, lease: Duration) -> Result<Postgres> {
        let mut config: Config =
            url.parse().map_err(|e| StoreError::Postgres(format!("--database-url is not a connection string: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        config.application_name("sr serve");
        let manager =
            Manager::from_config(config.clone(), NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(16)
            .build()
            .map_err(|e| StoreError::Postgres(format!("cannot make a connection pool: {e}")))?;
        let store = Postgres { pool, config, replica: replica.to_string(), lease_ms: lease.as_millis() as i64 };
        store.migrate().await?;
        Ok(store)
    }

    /// Brings the schema to the last version (`migrate`) under an advisory
    /// lock: replicas starting at once migrate one after another.
    async fn migrate(&self) -> Result<()> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await?;
        tx.batch_execute(migrate::CREATE_TABLE).await?;
        let applied: i32 = tx.query_one(migrate::APPLIED, &[]).await?.get(0);
        for migration in migrate::pending(migrate::POSTGRES, applied) {
            tx.batch_execute(migration.sql).await?;
            tx.execute(migrate::RECORD, &[&migration.version]).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn create_session(&self, id: &str) -> Result<()> {
        let client = self.pool.get().await?;
        client
            .execute(
                "INSERT INTO sessions (id, created_ms, active_ms) VALUES ($1, $2, $2) ON CONFLICT DO NOTHING",
                &[&id, &now_ms()],
            )
            .await?;
        Ok(())
    }

    async fn session_exists(&self, id: &str) -> Result<bool> {
        let client = self.pool.get().await?;
        Ok(client.query_one("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1)", &[&id]).await?.get(0))
    }

    async fn submit(&self, run: &NewRun<'_>, reject: bool) -> Result<(), Refusal> {
        let mut client = self.pool.get().await.map_err(StoreError::from)?;
        let tx = client.transaction().await.map_err(StoreError::from)?;
        let sql = |e: tokio_postgres::Error| Refusal::Sql(e.into());
        let now = now_ms();
        // Submissions to one session queue one after another: their order
        // is the order they took this row's lock in (a new session's
        // insert takes it too).
        tx.execute(
            "INSERT INTO sessions (id, created_ms, active_ms) VALUES ($1, $2, $2)
             ON CONFLICT (id) DO UPDATE SET active_ms = sessions.active_ms",
            &[&run.session, &now],
        )
        .await
        .map_err(sql)?;
        // A statement of its own, so it sees every run committed before the lock was taken.
        let busy: Option<String> = tx
            .query_one(
                "WITH busy AS (SELECT id FROM runs WHERE $8 AND session = $2
                               AND status IN ('queued', 'running', 'paused', 'in_doubt') LIMIT 1),
                      added AS (INSERT INTO runs (id, session, workload, entry, message, model, status,
                                                  created_ms, updated_ms, a2a)
                                SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, 'queued',
                                       $7::bigint, $7::bigint, $11::boolean
                                WHERE NOT EXISTS (SELECT 1 FROM busy) RETURNING id),
                      active AS (UPDATE sessions SET active_ms = GREATEST(active_ms, $7)
                                 WHERE id = $2 AND EXISTS (SELECT 1 FROM added)),
                      woke AS (SELECT pg_notify($9, $10) FROM added)
                 SELECT (SELECT id FROM busy), (SELECT COUNT(*) FROM woke)",
                &[
                    &run.id,
                    &run.session,
                    &run.workload,
                    &run.entry,
                    &run.message,
                    &run.model,
                    &now,
                    &reject,
                    &WAKE,
                    &self.replica,
                    &run.a2a,
                ],
            )
            .await
            .map_err(sql)?
            .get(0);
        if let Some(busy) = busy {
            return Err(Refusal::SessionBusy(busy));
        }
        tx.commit().await.map_err(sql)?;
        Ok(())
    }

    async fn claim_next(&self) -> Result<(Option<RunRow>, bool)> {
        // Two replicas may each pick a head of one session's queue at once
        // (a run answered while the next was queued): the unique index
        // refuses the second, which tries again.
        for _ in 0..3 {
            match self.try_claim().await {
                Err(StoreError::Postgres(message)) if message.contains("one_active_run_per_session") => continue,
                other => return other,
            }
        }
        Ok((None, true))
    }

    /// The claim, and whether a second run was claimable with it (both
    /// locked while the statement runs, the second left as it was).
    async fn try_claim(&self) -> Result<(Option<RunRow>, bool)> {
        let client = self.pool.get().await?;
        let claimed = client
            .query_opt(CLAIM_SQL.as_str(), &[&self.replica, &(self.lease_ms as f64), &now_ms()])
            .await
            .map_err(|e| {
                if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
                    StoreError::Postgres("one_active_run_per_session".to_string())
                } else {
                    e.into()
                }
            })?;
        match claimed {
            // Whether another run was claimable follows the run's columns.
            Some(row) => Ok((Some(run_row(&row)?), row.get(RUN_COLUMN_COUNT))),
            None => Ok((None, false)),
        }
    }

    async fn run(&self, id: &str) -> Result<Option<RunRow>> {
        let client = self.pool.get().await?;
        let row = client.query_opt(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1"), &[&id]).await?;
        row.as_ref().map(run_row).transpose()
    }

    async fn session_runs(&self, session: &str) -> Result<Vec<RunRow>> {
        let client = self.pool.get().await?;
        let rows = client
            .query(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE session = $1 ORDER BY position"), &[&session])
            .await?;
        rows.iter().map(run_row).collect()
    }

    async fn finish(&self, id: &str, from: RunStatus, ending: &Ending) -> Result<bool> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let changed = tx
            .query_opt(
                "UPDATE runs SET status = $3, result = $4, error = $5, updated_ms = $6
                 WHERE id = $1 AND status = $2 RETURNING epoch",
                &[
                    &id,
                    &from.as_str(),
                    &ending.status.as_str(),
                    &ending.result.as_ref().map(Value::to_string),
                    &ending.error,
                    &now_ms(),
                ],
            )
            .await?;
        let Some(changed) = changed else { return Ok(false) };
        append_ending(&tx, (id, changed.get(0)), ending, (&self.note(id), &self.replica)).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn end(&self, id: &str, epoch: i64, ending: &Ending) -> Result<bool> {
        if !ending.journal.as_ref().is_some_and(|lines| lines.opening) {
            return self.end_at_once(id, epoch, ending).await;
        }
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        // Before the status changes: an opening is fenced by the run still running.
        if let Some(lines) = &ending.journal {
            store_lines(&tx, id, epoch, lines).await?;
        }
        let changed = tx
            .execute(
                "UPDATE runs SET status = $3, result = $4, error = $5, updated_ms = $6, lease_until = NULL
                 WHERE id = $1 AND epoch = $2 AND status = 'running'",
                &[
                    &id,
                    &epoch,
                    &ending.status.as_str(),
                    &ending.result.as_ref().map(Value::to_string),
                    &ending.error,
                    &now_ms(),
                ],
            )
            .await?;
        if changed == 0 {
            return Err(fenced(id, epoch));
        }
        append_ending(&tx, (id, epoch), ending, (&self.note(id), &self.replica)).await?;
        if let Some(record) = &ending.record {
            save_record(&tx, record).await?;
        }
        let queued = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM runs WHERE status = 'queued'
                                AND session = (SELECT session FROM runs WHERE id = $1))",
                &[&id],
            )
            .await?
            .get(0);
        tx.commit().await?;
        Ok(queued)
    }

    /// [`END_SQL`]: the end of a run whose attempt is open in the store
    /// (or that never opened one).
    async fn end_at_once(&self, id: &str, epoch: i64, ending: &Ending) -> Result<bool> {
        let client = self.pool.get().await?;
        let last: i64 = match ending.numbered() {
            true => 0,
            false => {
                client.query_one("SELECT COALESCE(MAX(id), 0) FROM run_events WHERE run = $1", &[&id]).await?.get(0)
            }
        };
        let events = ending.stored_events(last as u64 + 1);
        let (first_event, texts) = event_columns(&events);
        let (session, attempt, first, bodies) = match &ending.journal {
            Some(l) => (l.session.as_str(), l.attempt, l.first, l.lines.as_slice()),
            None => ("", 0, 0, [].as_slice()),
        };
        let record = ending.record.as_ref();
        let messages: Vec<String> = record.map_or(Vec::new(), |r| r.messages.iter().map(Value::to_string).collect());
        let attempts = record.map_or(&[][..], |r| r.attempts.as_slice());
        let numbers: Vec<i64> = attempts.iter().map(|a| a.run).collect();
        let statuses: Vec<&str> = attempts.iter().map(|a| a.status.as_str()).collect();
        let parents: Vec<Option<i64>> = attempts.iter().map(|a| a.parent).collect();
        let froms: Vec<Option<i64>> = attempts.iter().map(|a| a.from_step.map(|s| s as i64)).collect();
        let statement = client.prepare_cached(END_SQL).await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 22] = [
            &id,
            &epoch,
            &ending.status.as_str(),
            &ending.result.as_ref().map(Value::to_string),
            &ending.error,
            &now_ms(),
            &session,
            &attempt,
            &first,
            &bodies,
            &first_event,
            &texts,
            &record.is_some(),
            &messages,
            &numbers,
            &statuses,
            &parents,
            &froms,
            &STATUS,
            &self.note(id),
            &WAKE,
            &self.replica,
        ];
        match client.query_opt(&statement, &params).await? {
            Some(row) => Ok(row.get::<_, i64>(1) > 0),
            None => Err(fenced(id, epoch)),
        }
    }

    /// A notification's payload about run `run`: the run and this replica,
    /// which ignores its own (it heard of the change as it made it).
    fn note(&self, run: &str) -> String {
        format!("{run}\t{}", self.replica)
    }

    async fn write_batch(
        &self,
        run: &str,
        epoch: i64,
        lines: Option<&JournalLines>,
        events: &[(u64, String)],
    ) -> Result<()> {
        let client = self.pool.get().await?;
        let held = match lines {
            Some(lines) if lines.opening => {
                let statement = client.prepare_cached(OPENING_SQL).await?;
                let (first_event, texts) = event_columns(events);
                let (parent, from) = lines.origin.map_or((None, None), |(p, f)| (Some(p), f.map(|s| s as i64)));
                let params: [&(dyn tokio_postgres::types::ToSql + Sync); 13] = [
                    &run,
                    &epoch,
                    &lines.session,
                    &lines.attempt,
                    &lines.first,
                    &lines.lines,
                    &first_event,
                    &texts,
                    &RUN,
                    &self.note(run),
                    &now_ms(),
                    &parent,
                    &from,
                ];
                client.query_opt(&statement, &params).await?.is_some()
            }
            None if events.is_empty() => {
                let statement = client
                    .prepare_cached("SELECT 1 FROM runs WHERE id = $1 AND epoch = $2 AND status = 'running'")
                    .await?;
                client.query_opt(&statement, &[&run, &epoch]).await?.is_some()
            }
            // Lines that continue the attempt, events, or both: one statement.
            lines => {
                let statement = client.prepare_cached(BATCH_SQL).await?;
                let (session, attempt, first, bodies) = match lines {
                    Some(l) => (l.session.as_str(), l.attempt, l.first, l.lines.as_slice()),
                    None => ("", 0, 0, [].as_slice()),
                };
                let (first_event, texts) = event_columns(events);
                let params: [&(dyn tokio_postgres::types::ToSql + Sync); 10] =
                    [&run, &epoch, &session, &attempt, &first, &bodies, &first_event, &texts, &RUN, &self.note(run)];
                client.query_opt(&statement, &params).await?.is_some()
            }
        };
        if held { Ok(()) } else { Err(fenced(run, epoch)) }
    }

    async fn trace(&self, run: &str, trace_id: &str) -> Result<Option<String>> {
        let client = self.pool.get().await?;
        let sql = "UPDATE runs SET trace_id = COALESCE(trace_id, $2) WHERE id = $1 RETURNING trace_id";
        Ok(client.query_opt(sql, &[&run, &trace_id]).await?.map(|r| r.get(0)))
    }

    async fn save_plan(&self, run: &str, plan: &str) -> Result<()> {
        let client = self.pool.get().await?;
        client.execute("INSERT INTO fork_plans (run, plan) VALUES ($1, $2)", &[&run, &plan]).await?;
        Ok(())
    }

    async fn discard_plan(&self, run: &str) -> Result<()> {
        let client = self.pool.get().await?;
        client.execute("DELETE FROM fork_plans WHERE run = $1", &[&run]).await?;
        Ok(())
    }

    async fn plan(&self, run: &str) -> Result<Option<String>> {
        let client = self.pool.get().await?;
        Ok(client.query_opt("SELECT plan FROM fork_plans WHERE run = $1", &[&run]).await?.map(|r| r.get(0)))
    }

    async fn a2a_record(&self, run: &str) -> Result<Option<String>> {
        let client = self.pool.get().await?;
        let row = client.query_opt("SELECT record FROM a2a_records WHERE run = $1", &[&run]).await?;
        Ok(row.map(|r| r.get::<_, String>(0)).filter(|r| !r.is_empty()))
    }

    async fn change_a2a(&self, run: &str, files: &[(String, Vec<u8>)], change: &A2aChange<'_>) -> Result<bool> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        for (sha256, bytes) in files {
            tx.execute(
                "INSERT INTO a2a_files (run, sha256, bytes) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[&run, sha256, bytes],
            )
            .await?;
        }
        tx.execute("UPDATE runs SET a2a = true WHERE id = $1 AND NOT a2a", &[&run]).await?;
        // An empty record is a row to lock before any replica wrote one.
        tx.execute("INSERT INTO a2a_records (run, record) VALUES ($1, '') ON CONFLICT DO NOTHING", &[&run]).await?;
        let stored: String =
            tx.query_one("SELECT record FROM a2a_records WHERE run = $1 FOR UPDATE", &[&run]).await?.get(0);
        let changed = change(Some(stored.as_str()).filter(|r| !r.is_empty()))?;
        if let Some(changed) = &changed {
            tx.execute("UPDATE a2a_records SET record = $2 WHERE run = $1", &[&run, changed]).await?;
        }
        tx.commit().await?;
        Ok(changed.is_some())
    }

    async fn a2a_files(&self, run: &str) -> Result<HashMap<String, Vec<u8>>> {
        let client = self.pool.get().await?;
        let rows = client.query("SELECT sha256, bytes FROM a2a_files WHERE run = $1", &[&run]).await?;
        Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    async fn follow_a2a(&self, run: &str, follower: Option<&str>) -> Result<()> {
        let client = self.pool.get().await?;
        client.execute("UPDATE a2a_records SET follower = $2 WHERE run = $1", &[&run, &follower]).await?;
        Ok(())
    }

    async fn a2a_followed(&self, follower: &str) -> Result<Vec<String>> {
        let client = self.pool.get().await?;
        let rows = client.query("SELECT run FROM a2a_records WHERE follower = $1 ORDER BY run", &[&follower]).await?;
        Ok(rows.into_iter().map(|r| r.get(0)).collect())
    }

    async fn forget_a2a(&self, run: &str) -> Result<()> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        tx.execute("DELETE FROM a2a_records WHERE run = $1", &[&run]).await?;
        tx.execute("DELETE FROM a2a_files WHERE run = $1", &[&run]).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn plans(&self, runs: &[String]) -> Result<HashMap<String, String>> {
        let client = self.pool.get().await?;
        let rows = client.query("SELECT run, plan FROM fork_plans WHERE run = ANY($1)", &[&runs]).await?;
        Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    async fn journal(&self, session: &str, attempt: i64) -> Result<Vec<String>> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                "SELECT body FROM journal_lines WHERE session = $1 AND attempt = $2 ORDER BY line",
                &[&session, &attempt],
            )
            .await?;
        Ok(rows.into_iter().map(|r| r.get(0)).collect())
    }

    async fn record(&self, session: &str) -> Result<Record> {
        let client = self.pool.get().await?;
        let mut record = Record { session: session.to_string(), ..Record::default() };
        // One read of the three tables: (which, number, text, parent, number within).
        let statement = client
            .prepare_cached(
                "SELECT 0, position, message, NULL::bigint, NULL::bigint FROM session_messages WHERE session = $1
                 UNION ALL
                 SELECT 1, attempt, status, parent, from_step FROM session_attempts WHERE session = $1
                 UNION ALL
                 SELECT 2, attempt, body, NULL, line FROM journal_lines WHERE session = $1
                 ORDER BY 1, 2, 5",
            )
            .await?;
        for row in client.query(&statement, &[&session]).await? {
            let (which, number, text): (i32, i64, String) = (row.get(0), row.get(1), row.get(2));
            match which {
                0 => record.messages.push(stored_message(session, number, &text)?),
                1 => record.attempts.push(RunLineage {
                    run: number,
                    status: text,
                    parent: row.get(3),
                    from_step: row.get::<_, Option<i64>>(4).map(|s| s as u64),
                }),
                _ => match record.journals.last_mut() {
                    Some((last, lines)) if *last == number => lines.push(text),
                    _ => record.journals.push((number, vec![text])),
                },
            }
        }
        Ok(record)
    }

    async fn answer(&self, id: &str, input: &str) -> Result<bool> {
        let client = self.pool.get().await?;
        let changed = client
            .query_opt(
                "WITH changed AS (
                     UPDATE runs SET status = 'queued', pending_input = $2, updated_ms = $3
                     WHERE id = $1 AND status = 'paused' RETURNING id)
                 SELECT pg_notify($4, $6), pg_notify($5, $7) FROM changed",
                &[&id, &input, &now_ms(), &STATUS, &WAKE, &self.note(id), &self.replica],
            )
            .await?;
        Ok(changed.is_some())
    }

    async fn decide(&self, id: &str, decision: &str) -> Result<bool> {
        let client = self.pool.get().await?;
        let changed = client
            .query_opt(
                "WITH changed AS (
                     UPDATE runs SET status = 'queued', pending_input = $2, updated_ms = $3
                     WHERE id = $1 AND status = 'in_doubt' RETURNING id)
                 SELECT pg_notify($4, $6), pg_notify($5, $7) FROM changed",
                &[&id, &decision, &now_ms(), &STATUS, &WAKE, &self.note(id), &self.replica],
            )
            .await?;
        Ok(changed.is_some())
    }

    async fn last_event(&self, run: &str) -> Result<u64> {
        let client = self.pool.get().await?;
        let row = client.query_one("SELECT COALESCE(MAX(id), 0) FROM run_events WHERE run = $1", &[&run]).await?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    async fn events_after(&self, run: &str, after: i64, limit: i64) -> Result<Vec<(u64, String)>> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached("SELECT id, event FROM run_events WHERE run = $1 AND id > $2 ORDER BY id LIMIT $3")
            .await?;
        let rows = client.query(&statement, &[&run, &after, &limit]).await?;
        Ok(rows.iter().map(|r| (r.get::<_, i64>(0) as u64, r.get(1))).collect())
    }

    async fn follow(&self, run: &str, after: i64, limit: i64) -> Result<Option<Followed>> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached(
                "SELECT r.status, e.id, e.event FROM runs AS r
                 LEFT JOIN LATERAL (SELECT id, event FROM run_events
                                    WHERE run = r.id AND id > $2 ORDER BY id LIMIT $3) AS e ON true
                 WHERE r.id = $1 ORDER BY e.id",
            )
            .await?;
        let rows = client.query(&statement, &[&run, &after, &limit]).await?;
        let Some(first) = rows.first() else { return Ok(None) };
        let events = rows.iter().filter_map(|r| Some((r.get::<_, Option<i64>>(1)? as u64, r.get(2)))).collect();
        Ok(Some((status(first, 0)?, events)))
    }

    async fn counts(&self) -> Result<Vec<(RunStatus, i64)>> {
        let client = self.pool.get().await?;
        let rows = client.query("SELECT status, COUNT(*) FROM runs GROUP BY status", &[]).await?;
        Ok(RunStatus::ALL
            .iter()
            .map(|status| {
                let n = rows.iter().find(|r| r.get::<_, &str>(0) == status.as_str()).map_or(0, |r| r.get(1));
                (*status, n)
            })
            .collect())
    }

    async fn heartbeat(&self, claims: &[(String, i64)]) -> Result<Vec<String>> {
        if claims.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.pool.get().await?;
        let ids: Vec<&str> = claims.iter().map(|(id, _)| id.as_str()).collect();
        let epochs: Vec<i64> = claims.iter().map(|(_, epoch)| *epoch).collect();
        let kept = client
            .query(
                "UPDATE runs SET lease_until = now() + make_interval(secs => $3::float8 / 1000)
                 FROM unnest($1::text[], $2::bigint[]) AS held(id, epoch)
                 WHERE runs.id = held.id AND runs.epoch = held.epoch AND runs.status = 'running'
                 RETURNING runs.id",
                &[&ids, &epochs, &(self.lease_ms as f64)],
            )
            .await?;
        let kept: Vec<String> = kept.iter().map(|r| r.get(0)).collect();
        Ok(claims.iter().filter(|(id, _)| !kept.contains(id)).map(|(id, _)| id.clone()).collect())
    }

    async fn release(&self, id: &str, epoch: i64) -> Result<()> {
        let client = self.pool.get().await?;
        client
            .execute(
                "WITH released AS (UPDATE runs SET lease_until = now() - interval '1 millisecond'
                                   WHERE id = $1 AND epoch = $2 AND status = 'running' RETURNING id)
                 SELECT pg_notify($3, $4) FROM released",
                &[&id, &epoch, &WAKE, &self.replica],
            )
            .await?;
        Ok(())
    }

    async fn request_cancel(&self, id: &str) -> Result<()> {
        let client = self.pool.get().await?;
        client.execute("SELECT pg_notify($1, $2)", &[&CANCEL, &id]).await?;
        Ok(())
    }

    async fn sessions(&self, page: &SessionPage) -> Result<Vec<SessionRow>> {
        let client = self.pool.get().await?;
        let (before_ms, before_id) = page.before.clone().unzip();
        let sql = dollars(&sessions_sql("strpos"))
            .replace("$1 IS NULL", "$1::text IS NULL")
            .replace("$2 IS NULL", "$2::bigint IS NULL");
        let rows = client.query(&sql, &[&page.q, &before_ms, &before_id, &i64::from(page.limit)]).await?;
        let (last, workloads) = (dollars(LAST_RUN_SQL), dollars(WORKLOADS_SQL));
        let mut sessions = Vec::with_capacity(rows.len());
        for r in rows {
            let id: String = r.get(0);
            let last = match client.query_opt(&last, &[&id]).await? {
                Some(run) => Some(LastRun { id: run.get(0), created_ms: run.get(1), status: status(&run, 2)? }),
                None => None,
            };
            let workloads = client.query(&workloads, &[&id]).await?.iter().map(|w| w.get(0)).collect();
            sessions.push(SessionRow {
                id,
                created_ms: r.get(1),
                active_ms: r.get(2),
                runs: r.get(3),
                last,
                workloads,
            });
        }
        Ok(sessions)
    }

    async fn recent_runs(&self, wanted: Option<RunStatus>, limit: u32) -> Result<Vec<RecentRun>> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                "SELECT id, session, workload, entry, status, error, created_ms, updated_ms,
                        (SELECT event FROM run_events AS e WHERE e.run = runs.id ORDER BY e.id DESC LIMIT 1)
                 FROM runs WHERE $1::text IS NULL OR status = $1 ORDER BY position DESC LIMIT $2",
                &[&wanted.map(RunStatus::as_str), &i64::from(limit)],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok(RecentRun {
                    id: r.get(0),
                    session: r.get(1),
                    workload: r.get(2),
                    entry: r.get(3),
                    status: status(r, 4)?,
                    error: r.get(5),
                    created_ms: r.get(6),
                    updated_ms: r.get(7),
                    last_event: r.get(8),
                })
            })
            .collect()
    }

    /// A connection of its own that `LISTEN`s, connected again (after a
    /// second) whenever it is lost; the notes go to the receiver, and stop
    /// when it is dropped. A full receiver drops notes: every listener
    /// also polls.
    fn notes(&self) -> mpsc::Receiver<Note> {
        let (tx, rx) = mpsc::channel(1024);
        let (config, replica) = (self.config.clone(), self.replica.clone());
        tokio::spawn(async move {
            while !tx.is_closed() {
                if let Err(error) = listen_once(&config, &replica, &tx).await {
                    tracing::warn!(%error, "the PostgreSQL notifications connection failed; connecting again");
                }
                // Whatever was announced meanwhile is found by polling; wake
                // the dispatcher now rather than at its next tick.
                let _ = tx.try_send(Note::Wake);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
        rx
    }
}

/// Stores an attempt's journal `lines` in `tx`; an opening is fenced by the
/// claim's epoch (its UPDATE holds the run's row), other lines by the caller.
async fn store_lines(tx: &tokio_postgres::Transaction<'_>, run: &str, epoch: i64, lines: &JournalLines) -> Result<()> {
    let (session, attempt) = (&lines.session, &lines.attempt);
    if lines.opening {
        let changed = tx
            .execute(
                "UPDATE runs SET attempt_run = $3, pending_input = NULL, updated_ms = $4
                 WHERE id = $1 AND epoch = $2 AND status = 'running'",
                &[&run, &epoch, attempt, &now_ms()],
            )
            .await?;
        if changed == 0 {
            return Err(fenced(run, epoch));
        }
        let (parent, from) = lines.origin.map_or((None, None), |(p, f)| (Some(p), f.map(|s| s as i64)));
        tx.execute(
            "INSERT INTO session_attempts (session, attempt, status, parent, from_step) VALUES ($1, $2, 'running', $3, $4)
             ON CONFLICT (session, attempt) DO UPDATE
             SET status = excluded.status, parent = excluded.parent, from_step = excluded.from_step",
            &[session, attempt, &parent, &from],
        )
        .await?;
        tx.execute("DELETE FROM journal_lines WHERE session = $1 AND attempt = $2", &[session, attempt]).await?;
    }
    tx.execute(
        "INSERT INTO journal_lines (session, attempt, line, body)
         SELECT $1, $2, $3 + l.n - 1, l.body FROM UNNEST($4::text[]) WITH ORDINALITY AS l(body, n)",
        &[session, attempt, &lines.first, &lines.lines],
    )
    .await?;
    Ok(())
}

/// Appends a run's last events after its others and announces the run's
/// change, in the transaction that ends it (whose UPDATE holds the run's row).
async fn append_ending(
    tx: &tokio_postgres::Transaction<'_>,
    (run, epoch): (&str, i64),
    ending: &Ending,
    (note, replica): (&str, &str),
) -> Result<()> {
    let last: i64 = match ending.numbered() {
        true => 0,
        false => tx.query_one("SELECT COALESCE(MAX(id), 0) FROM run_events WHERE run = $1", &[&run]).await?.get(0),
    };
    let events = ending.stored_events(last as u64 + 1);
    let (first, texts) = event_columns(&events);
    tx.execute(
        "WITH added AS (INSERT INTO run_events (run, id, event, epoch)
                        SELECT $1, $2 + e.n - 1, e.event, $3 FROM UNNEST($4::text[]) WITH ORDINALITY AS e(event, n))
         SELECT pg_notify($5, $7), pg_notify($6, $8)",
        &[&run, &first, &epoch, &texts, &STATUS, &WAKE, &note, &replica],
    )
    .await?;
    Ok(())
}

/// Events with consecutive ids as the statements take them: the first id and the texts.
fn event_columns(events: &[(u64, String)]) -> (i64, Vec<&str>) {
    debug_assert!(events.windows(2).all(|w| w[1].0 == w[0].0 + 1), "a batch's event ids follow each other");
    (events.first().map_or(0, |(id, _)| *id as i64), events.iter().map(|(_, text)| text.as_str()).collect())
}

/// Replaces the session's conversation and attempts with `record`'s (two
/// statements per table, whatever their sizes).
async fn save_record(tx: &tokio_postgres::Transaction<'_>, record: &Record) -> Result<()> {
    let session = &record.session;
    let messages: Vec<String> = record.messages.iter().map(Value::to_string).collect();
    tx.execute("DELETE FROM session_messages WHERE session = $1", &[session]).await?;
    tx.execute(
        "INSERT INTO session_messages (session, position, message)
         SELECT $1, m.n - 1, m.message FROM UNNEST($2::text[]) WITH ORDINALITY AS m(message, n)",
        &[session, &messages],
    )
    .await?;
    let numbers: Vec<i64> = record.attempts.iter().map(|a| a.run).collect();
    let statuses: Vec<&str> = record.attempts.iter().map(|a| a.status.as_str()).collect();
    let parents: Vec<Option<i64>> = record.attempts.iter().map(|a| a.parent).collect();
    let froms: Vec<Option<i64>> = record.attempts.iter().map(|a| a.from_step.map(|s| s as i64)).collect();
    tx.execute("DELETE FROM session_attempts WHERE session = $1", &[session]).await?;
    tx.execute(
        "INSERT INTO session_attempts (session, attempt, status, parent, from_step)
         SELECT $1, * FROM UNNEST($2::bigint[], $3::text[], $4::bigint[], $5::bigint[])",
        &[session, &numbers, &statuses, &parents, &froms],
    )
    .await?;
    Ok(())
}

impl RunStore for Postgres {
    fn create_session<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(Postgres::create_session(self, id))
    }

    fn session_exists<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool>> {
        Box::pin(Postgres::session_exists(self, id))
    }

    fn submit<'a>(&'a self, run: &'a NewRun<'a>, reject: bool) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(Postgres::submit(self, run, reject))
    }

    fn claim(&self) -> BoxFuture<'_, Result<Option<RunRow>>> {
        Box::pin(async move { Ok(Postgres::claim_next(self).await?.0) })
    }

    fn claim_next(&self) -> BoxFuture<'_, Result<(Option<RunRow>, bool)>> {
        Box::pin(Postgres::claim_next(self))
    }

    fn run<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<RunRow>>> {
        Box::pin(Postgres::run(self, id))
    }

    fn session_runs<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Vec<RunRow>>> {
        Box::pin(Postgres::session_runs(self, session))
    }

    fn requeue_running(&self) -> Result<usize> {
        Ok(0)
    }

    fn finish<'a>(&'a self, id: &'a str, from: RunStatus, ending: &'a Ending) -> BoxFuture<'a, Result<bool>> {
        Box::pin(Postgres::finish(self, id, from, ending))
    }

    fn end<'a>(&'a self, id: &'a str, epoch: i64, ending: &'a Ending) -> BoxFuture<'a, Result<bool>> {
        Box::pin(Postgres::end(self, id, epoch, ending))
    }

    fn record<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Record>> {
        Box::pin(Postgres::record(self, session))
    }

    fn journal<'a>(&'a self, session: &'a str, attempt: i64) -> BoxFuture<'a, Result<Vec<String>>> {
        Box::pin(Postgres::journal(self, session, attempt))
    }

    fn trace<'a>(&'a self, run: &'a str, trace_id: &'a str) -> BoxFuture<'a, Result<Option<String>>> {
        Box::pin(Postgres::trace(self, run, trace_id))
    }

    fn save_plan<'a>(&'a self, run: &'a str, plan: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(Postgres::save_plan(self, run, plan))
    }

    fn discard_plan<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(Postgres::discard_plan(self, run))
    }

    fn plan<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Option<String>>> {
        Box::pin(Postgres::plan(self, run))
    }

    fn plans<'a>(&'a self, runs: &'a [String]) -> BoxFuture<'a, Result<HashMap<String, String>>> {
        Box::pin(Postgres::plans(self, runs))
    }

    fn a2a_record<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Option<String>>> {
        Box::pin(Postgres::a2a_record(self, run))
    }

    fn change_a2a<'a>(
        &'a self,
        run: &'a str,
        files: &'a [(String, Vec<u8>)],
        change: &'a A2aChange<'a>,
    ) -> BoxFuture<'a, Result<bool>> {
        Box::pin(Postgres::change_a2a(self, run, files, change))
    }

    fn a2a_files<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<HashMap<String, Vec<u8>>>> {
        Box::pin(Postgres::a2a_files(self, run))
    }

    fn forget_a2a<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(Postgres::forget_a2a(self, run))
    }

    fn follow_a2a<'a>(&'a self, run: &'a str, follower: Option<&'a str>) -> BoxFuture<'a, Result<()>> {
        Box::pin(Postgres::follow_a2a(self, run, follower))
    }

    fn a2a_followed<'a>(&'a self, follower: &'a str) -> BoxFuture<'a, Result<Vec<String>>> {
        Box::pin(Postgres::a2a_followed(self, follower))
    }

    fn write_batch<'a>(
        &'a self,
        run: &'a str,
        epoch: i64,
        lines: Option<&'a JournalLines>,
        events: &'a [(u64, String)],
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(Postgres::write_batch(self, run, epoch, lines, events))
    }

    fn answer<'a>(&'a self, id: &'a str, input: &'a str) -> BoxFuture<'a, Result<bool>> {
        Box::pin(Postgres::answer(self, id, input))
    }

    fn decide<'a>(&'a self, id: &'a str, decision: &'a str) -> BoxFuture<'a, Result<bool>> {
        Box::pin(Postgres::decide(self, id, decision))
    }

    fn last_event<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<u64>> {
        Box::pin(Postgres::last_event(self, run))
    }

    fn events_after<'a>(&'a self, run: &'a str, after: u64, limit: usize) -> BoxFuture<'a, Result<Vec<(u64, String)>>> {
        Box::pin(Postgres::events_after(self, run, stored_id(after), limit as i64))
    }

    fn follow<'a>(&'a self, run: &'a str, after: u64, limit: usize) -> BoxFuture<'a, Result<Option<Followed>>> {
        Box::pin(Postgres::follow(self, run, stored_id(after), limit as i64))
    }

    fn counts(&self) -> BoxFuture<'_, Result<Vec<(RunStatus, i64)>>> {
        Box::pin(Postgres::counts(self))
    }

    fn heartbeat<'a>(&'a self, claims: &'a [(String, i64)]) -> BoxFuture<'a, Result<Vec<String>>> {
        Box::pin(Postgres::heartbeat(self, claims))
    }

    fn release<'a>(&'a self, id: &'a str, epoch: i64) -> BoxFuture<'a, Result<()>> {
        Box::pin(Postgres::release(self, id, epoch))
    }

    fn request_cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(Postgres::request_cancel(self, id))
    }

    fn recent_runs(&self, status: Option<RunStatus>, limit: u32) -> BoxFuture<'_, Result<Vec<RecentRun>>> {
        Box::pin(Postgres::recent_runs(self, status, limit))
    }

    fn sessions<'a>(&'a self, page: &'a SessionPage) -> BoxFuture<'a, Result<Vec<SessionRow>>> {
        Box::pin(Postgres::sessions(self, page))
    }

    fn listen(&self) -> Option<mpsc::Receiver<Note>> {
        Some(self.notes())
    }

    fn ping(&self) -> BoxFuture<'_, Result<()>> {
        Box::pin(async move {
            self.pool.get().await?.simple_query("SELECT 1").await?;
            Ok(())
        })
    }

    #[cfg(test)]
    fn is_shared(&self) -> bool {
        true
    }

    #[cfg(test)]
    fn raw<'a>(&'a self, sql: &'a str) -> BoxFuture<'a, Result<u64>> {
        Box::pin(async move { Ok(self.pool.get().await?.execute(sql, &[]).await?) })
    }
}

/// What a notification tells this replica (`replica`), or nothing when it
/// announces a change this replica made: it woke its dispatcher and told
/// the run's streams as it made it.
fn heard(channel: &str, payload: &str, replica: &str) -> Option<Note> {
    // A wake's payload is the replica that sent it; a run's, the run and the replica.
    let (run, by) = match channel {
        WAKE => ("", payload),
        _ => payload.split_once('\t').unwrap_or((payload, "")),
    };
    if !by.is_empty() && by == replica {
        return None;
    }
    Some(match channel {
        RUN => Note::Run(run.to_string()),
        STATUS => Note::Status(run.to_string()),
        CANCEL => Note::Cancel(run.to_string()),
        _ => Note::Wake,
    })
}

async fn listen_once(config: &Config, replica: &str, tx: &mpsc::Sender<Note>) -> Result<()> {
    let (client, mut connection) = config.connect(NoTls).await?;
    let notes = tx.clone();
    let replica = replica.to_string();
    // The connection's messages are read by a task of their own while the
    // client asks to LISTEN; it ends when the connection does.
    let driver = tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            if let AsyncMessage::Notification(note) = message?
                && let Some(note) = heard(note.channel(), note.payload(), &replica)
            {
                let _ = notes.try_send(note);
            }
            if notes.is_closed() {
                return Ok(());
            }
        }
        Err(StoreError::Postgres("the notifications connection closed".to_string()))
    });
    if let Err(e) =
        client.batch_execute(&format!("LISTEN {WAKE}; LISTEN {RUN}; LISTEN {STATUS}; LISTEN {CANCEL}")).await
    {
        driver.abort();
        return Err(e.into());
    }
    let outcome = driver.await.map_err(|e| StoreError::Postgres(format!("the notifications task failed: {e}")))?;
    drop(client);
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replica_hears_the_others_changes_not_its_own() {
        let heard_by_a = |channel, payload| heard(channel, payload, "a");
        assert_eq!(heard_by_a(RUN, "r1\ta"), None);
        assert_eq!(heard_by_a(STATUS, "r1\ta"), None);
        assert_eq!(heard_by_a(WAKE, "a"), None);
        assert_eq!(heard_by_a(RUN, "r1\tb"), Some(Note::Run("r1".to_string())));
        assert_eq!(heard_by_a(STATUS, "r1\tb"), Some(Note::Status("r1".to_string())));
        assert_eq!(heard_by_a(WAKE, "b"), Some(Note::Wake));
        // A cancel is for whichever replica runs the run, this one too.
        assert_eq!(heard_by_a(CANCEL, "r1"), Some(Note::Cancel("r1".to_string())));
    }
}
