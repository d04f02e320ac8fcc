//! What a served run costs the store of record, counted by PostgreSQL itself
//! (`pg_stat_statements` for statements, the WAL's commit records for
//! transactions that wrote): runs of the two-agent flow on one replica, one
//! after another, with everything the replica does meanwhile (the API's
//! requests, the dispatcher, heartbeats, the journal's copy, the events).
#![allow(clippy::unwrap_used)]

mod serving;

use serde_json::json;
use serving::{Serve, temp};
use sr_llm::mock::{MockReply, MockServer};
use sr_testing::postgres;

const TWO_AGENTS: &str = include_str!("fixtures/two_agents.sr");
const RUNS: u64 = 20;

/// A run of the two-agent flow commits: its submission, its claim, its
/// attempt's opening (with the journal's first lines and the run's first
/// events, at the claim check before the first model call), each model
/// reply's journal line (with the events since the last commit: one
/// transaction per step), and its end (with the journal's `end` line and the
/// events left). The claim check before the second model call is a read.
/// So 6. Its 18 statements: the submission's transaction (5, with its
/// foreign key's check), one claim, the session's record read once, the
/// fork plan and stored events a claim looks for (2), the opening, the two
/// replies' batches, the claim check and the end (one statement each), and
/// the request waiting for the run (`wait: true`): the run read before and
/// after its end, its first event and fork plan for the answer (4). Before
/// the journal's lines were batched it was 31 commits, before the events
/// were, 26 (in 65.9 statements); before the end, the opening and the
/// submission were one statement each (or two), 6.7 in 47.6 statements.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_of_the_two_agent_flow_commits_6_times_in_18_statements() {
    let Some(db) = postgres::start_with("rec-cost", postgres::COUNTING) else { return };
    let dir = temp("rec-cost", &[("greet.sr", TWO_AGENTS)]);
    let mock = MockServer::start().await;
    for _ in 0..2 * (RUNS + 1) {
        mock.push(MockReply::chunks(["Hello, ", "dear ", "reader."]));
    }
    let url = db.url();
    let serve = Serve::start(&dir, &mock, &["greet.sr", "--database-url", &url, "--replica-id", "a"]).await;
    let run = || async {
        let asked = serve.post("/v1/runs", json!({"workload": "greet", "prompt": "Ada", "wait": true}));
        let run = tokio::time::timeout(std::time::Duration::from_secs(30), asked)
            .await
            .unwrap_or_else(|_| panic!("the run did not end within 30 s\n{}", serve.log()));
        assert_eq!(run.1["status"], "done", "{}\n{}", run.1, serve.log());
    };
    // The first run prepares the statements every later one reuses.
    run().await;
    let counter = db.counter();
    for _ in 0..RUNS {
        run().await;
    }
    let work = db.counted(&counter);
    let per_run = |n: u64| n as f64 / RUNS as f64;
    eprintln!(
        "per run: {:.1} statements ({:.1} of them BEGIN/COMMIT), {:.1} commits",
        per_run(work.statements),
        per_run(work.transaction_control),
        per_run(work.commits)
    );
    // A heartbeat may fall within the runs (a commit every 2.5 s while a run
    // is claimed), and so may a model call's text deltas, committed on their
    // own 50 ms after they came when the reply's line is later than that
    // (`copies::LATE_TEXT_SHARED`), or other events after 100 ms (`copies::LATE`):
    // each a statement and a commit in 20 runs. A run that ended before the
    // waiting request first read it is read once.
    let shown = || format!("{work:?}\n{}", db.statements());
    assert!((6.0..6.5).contains(&per_run(work.commits)), "{}", shown());
    assert!((17.0..18.5).contains(&per_run(work.statements)), "{}", shown());
}
