-- What the runtime keeps of a session, held by the store so that a state
-- directory is a cache any replica rebuilds: the conversation, the runtime's
-- attempts (a run continued after a pause or a crash is a new attempt) with
-- their status, and each attempt's journal, line by line.
CREATE TABLE session_messages (
    session TEXT NOT NULL,
    position INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (session, position)
);
CREATE TABLE session_attempts (
    session TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    status TEXT NOT NULL,
    parent INTEGER,
    from_step INTEGER,
    PRIMARY KEY (session, attempt)
);
CREATE TABLE journal_lines (
    session TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    line INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session, attempt, line)
);
-- A fork's plan (JSON: the run and event it forks from, its edits), written
-- before the fork is queued, read by whichever replica claims it.
CREATE TABLE fork_plans (
    run TEXT PRIMARY KEY,
    plan TEXT NOT NULL
);
