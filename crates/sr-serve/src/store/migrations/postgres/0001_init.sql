-- The shared store's first schema: sessions, the queue of runs with their
-- claims (epoch, replica, lease), their events.
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    created_ms BIGINT NOT NULL
);
CREATE TABLE runs (
    position BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session TEXT NOT NULL REFERENCES sessions(id),
    workload TEXT NOT NULL,
    entry TEXT,
    message TEXT NOT NULL,
    model TEXT,
    status TEXT NOT NULL,
    result TEXT,
    error TEXT,
    attempt_run BIGINT,
    pending_input TEXT,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    epoch BIGINT NOT NULL DEFAULT 0,
    replica TEXT,
    lease_until TIMESTAMPTZ
);
CREATE UNIQUE INDEX one_active_run_per_session
    ON runs(session) WHERE status IN ('running', 'paused', 'in_doubt');
CREATE INDEX runs_by_status ON runs(status, position);
CREATE INDEX runs_by_session ON runs(session, position);
CREATE TABLE run_events (
    run TEXT NOT NULL,
    id BIGINT NOT NULL,
    event TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    PRIMARY KEY (run, id)
);
