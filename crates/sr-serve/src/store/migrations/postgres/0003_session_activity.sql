-- Sessions listed from the store, newest first (`GET /v1/sessions`): each
-- session's last activity (its newest run's submission, or its creation),
-- kept at every submit, and the index the list reads by (`runs_by_session`
-- serves the per-session summaries since 0001).
ALTER TABLE sessions ADD COLUMN active_ms BIGINT NOT NULL DEFAULT 0;
UPDATE sessions SET active_ms = GREATEST(created_ms, COALESCE((SELECT MAX(created_ms) FROM runs WHERE runs.session = sessions.id), 0));
CREATE INDEX sessions_by_activity ON sessions(active_ms, id);
