-- Sessions listed from the store, newest first (`GET /v1/sessions`): each
-- session's last activity (its newest run's submission, or its creation),
-- kept at every submit, and the indexes the list and its per-session
-- summaries read by (`runs_by_session` first: the backfill reads by it).
CREATE INDEX IF NOT EXISTS runs_by_session ON runs(session, position);
ALTER TABLE sessions ADD COLUMN active_ms INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET active_ms = MAX(created_ms, COALESCE((SELECT MAX(created_ms) FROM runs WHERE runs.session = sessions.id), 0));
CREATE INDEX IF NOT EXISTS sessions_by_activity ON sessions(active_ms, id);
