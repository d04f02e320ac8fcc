-- What A2A adds to a run (`a2a::record`), held by the store so that any
-- replica answers for any task: the messages its client sent, the files they
-- brought and its push notification configurations, as JSON. It is written
-- before the run is queued (the replica that runs it finds its files), so it
-- names the run without a foreign key. `follower` is the replica that sends
-- the task's push notifications while some are still to be sent (a restarted
-- replica follows its tasks again). The files' bytes are kept by hash.
CREATE TABLE a2a_records (
    run TEXT PRIMARY KEY,
    record TEXT NOT NULL,
    follower TEXT
);
CREATE INDEX a2a_records_by_follower ON a2a_records(follower) WHERE follower IS NOT NULL;
-- Whether a run has such a record: the dispatcher reads it only then.
ALTER TABLE runs ADD COLUMN a2a INTEGER NOT NULL DEFAULT 0;
CREATE TABLE a2a_files (
    run TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (run, sha256)
);
