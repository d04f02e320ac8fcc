//! The statements of a claimed run's writes that do several things at once
//! (data-modifying CTEs), each fenced by the run's row: a step's batch, an
//! attempt's opening, a run's end.

/// A batch of a claimed run (`RunStore::write_batch`) in one statement: the
/// run's row held `FOR KEY SHARE` while its epoch is checked, so a claim
/// (whose `FOR UPDATE` skips or waits for it) sees the batch whole or not
/// at all, while a heartbeat's `UPDATE` of the lease does not wait on it;
/// then the journal's lines, the events, and one notification when there
/// are events. Parameters: run, epoch, the lines' session, attempt, first
/// line number and bodies, the first event id and the events, the
/// notification's channel and payload.
pub const BATCH_SQL: &str = "WITH owner AS (SELECT id FROM runs WHERE id = $1 AND epoch = $2 AND status = 'running'
                                        FOR KEY SHARE),
     lines AS (INSERT INTO journal_lines (session, attempt, line, body)
               SELECT $3, $4, $5 + l.n - 1, l.body FROM owner, UNNEST($6::text[]) WITH ORDINALITY AS l(body, n)),
     events AS (INSERT INTO run_events (run, id, event, epoch)
                SELECT $1, $7 + e.n - 1, e.event, $2 FROM owner, UNNEST($8::text[]) WITH ORDINALITY AS e(event, n)),
     noted AS (SELECT pg_notify($9, $10) FROM owner WHERE cardinality($8::text[]) > 0)
SELECT (SELECT COUNT(*) FROM noted) FROM owner";

/// The batch that opens an attempt (`RunStore::write_batch` with
/// `JournalLines::opening`), in one statement: the run's row updated (so
/// held `FOR UPDATE`) to name the attempt while its epoch is checked, the
/// attempt recorded as running, its journal's lines written over any a
/// previous claim left of an attempt with its number (those past them
/// deleted), the events and their notification. Parameters: those of
/// [`BATCH_SQL`], then the time, the attempt's parent and first step.
pub const OPENING_SQL: &str = "WITH owner AS (UPDATE runs SET attempt_run = $4, pending_input = NULL, updated_ms = $11
                    WHERE id = $1 AND epoch = $2 AND status = 'running' RETURNING id),
     attempt AS (INSERT INTO session_attempts (session, attempt, status, parent, from_step)
                 SELECT $3::text, $4::bigint, 'running', $12::bigint, $13::bigint FROM owner
                 ON CONFLICT (session, attempt) DO UPDATE
                 SET status = excluded.status, parent = excluded.parent, from_step = excluded.from_step),
     stale AS (DELETE FROM journal_lines WHERE session = $3 AND attempt = $4
               AND line >= $5::bigint + cardinality($6::text[]) AND EXISTS (SELECT 1 FROM owner)),
     lines AS (INSERT INTO journal_lines (session, attempt, line, body)
               SELECT $3, $4, $5::bigint + l.n - 1, l.body FROM owner, UNNEST($6::text[]) WITH ORDINALITY AS l(body, n)
               ON CONFLICT (session, attempt, line) DO UPDATE SET body = excluded.body),
     events AS (INSERT INTO run_events (run, id, event, epoch)
                SELECT $1, $7 + e.n - 1, e.event, $2 FROM owner, UNNEST($8::text[]) WITH ORDINALITY AS e(event, n)),
     noted AS (SELECT pg_notify($9, $10) FROM owner WHERE cardinality($8::text[]) > 0)
SELECT (SELECT COUNT(*) FROM noted) FROM owner";

/// A claimed run's end (`RunStore::end`) when it opens no attempt, in one
/// statement: the status written while the epoch is checked (the `UPDATE`
/// holds the run's row), the journal's last lines, the last events, the
/// session's record when there is one (`$13`: its conversation and
/// attempts written over the stored ones, those past them deleted), the
/// run's notification, and a wake for the dispatchers when a run of the
/// session waits in the queue. Answers whether one does (no row: fenced).
pub const END_SQL: &str = "WITH owner AS (UPDATE runs SET status = $3, result = $4, error = $5, updated_ms = $6, lease_until = NULL
                    WHERE id = $1 AND epoch = $2 AND status = 'running' RETURNING id, session),
     lines AS (INSERT INTO journal_lines (session, attempt, line, body)
               SELECT $7::text, $8::bigint, $9::bigint + l.n - 1, l.body FROM owner, UNNEST($10::text[]) WITH ORDINALITY AS l(body, n)),
     events AS (INSERT INTO run_events (run, id, event, epoch)
                SELECT $1, $11::bigint + e.n - 1, e.event, $2 FROM owner, UNNEST($12::text[]) WITH ORDINALITY AS e(event, n)),
     messages AS (INSERT INTO session_messages (session, position, message)
                  SELECT owner.session, m.n - 1, m.message
                  FROM owner, UNNEST($14::text[]) WITH ORDINALITY AS m(message, n) WHERE $13
                  ON CONFLICT (session, position) DO UPDATE SET message = excluded.message),
     fewer AS (DELETE FROM session_messages AS m USING owner
               WHERE $13 AND m.session = owner.session AND m.position >= cardinality($14::text[])),
     attempts AS (INSERT INTO session_attempts (session, attempt, status, parent, from_step)
                  SELECT owner.session, a.attempt, a.status, a.parent, a.from_step
                  FROM owner, UNNEST($15::bigint[], $16::text[], $17::bigint[], $18::bigint[])
                       AS a(attempt, status, parent, from_step) WHERE $13
                  ON CONFLICT (session, attempt) DO UPDATE
                  SET status = excluded.status, parent = excluded.parent, from_step = excluded.from_step),
     gone AS (DELETE FROM session_attempts AS a USING owner
              WHERE $13 AND a.session = owner.session AND NOT (a.attempt = ANY($15::bigint[]))),
     noted AS (SELECT pg_notify($19, $20) FROM owner),
     woke AS (SELECT pg_notify($21, $22) FROM owner
              WHERE EXISTS (SELECT 1 FROM runs AS q WHERE q.session = owner.session AND q.status = 'queued'))
SELECT (SELECT COUNT(*) FROM noted), (SELECT COUNT(*) FROM woke) FROM owner";
