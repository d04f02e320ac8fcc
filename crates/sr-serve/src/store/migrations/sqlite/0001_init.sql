-- The embedded store's first schema: sessions, the queue of runs, their events.
CREATE TABLE IF NOT EXISTS sessions (
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
    updated_ms INTEGER NOT NULL,
    epoch INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS one_active_run_per_session
    ON runs(session) WHERE status IN ('running', 'paused', 'in_doubt');
CREATE INDEX IF NOT EXISTS runs_by_status ON runs(status, position);
CREATE TABLE IF NOT EXISTS run_events (
    run TEXT NOT NULL,
    id INTEGER NOT NULL,
    event TEXT NOT NULL,
    epoch INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run, id)
);
