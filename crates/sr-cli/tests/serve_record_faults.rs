//! The store of record under faults, with replicas on state directories of
//! their own (`serving::record::machines`): PostgreSQL stopped for 20 s
//! while runs are in flight, and a drain (SIGTERM) of the replica running
//! them: every run finishes, on whichever replica claims it next, and the
//! journal in the database shows no step twice. And the claim check alone
//! (`sr-serve`'s `fence`): a replica whose claim was taken while nothing
//! of its run was written makes no model or tool call.
#![allow(clippy::unwrap_used)]

mod serving;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use serving::record::{
    charges, machines, of_kind, payer_starting_in, replica, replica_with, sql, status_is, stored_journal,
};
use serving::{Serve, events_of, wait_until};
use sr_llm::mock::{MockReply, MockServer};

/// Submits `count` runs of the two-agent flow, alternating between `replicas`.
async fn submit(replicas: &[&Serve], count: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for n in 0..count {
        let run = replicas[n % replicas.len()].post("/v1/runs", json!({"workload": "greet", "prompt": "Ada"})).await;
        assert_eq!(run.0, 202, "{}", run.1);
        ids.push(run.1["id"].as_str().unwrap().to_string());
    }
    ids
}

/// Waits until the model was asked `count` times, or fails showing `serve`'s log.
async fn model_calls(mock: &MockServer, count: usize, serve: &Serve) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while mock.requests().len() < count {
        assert!(Instant::now() < deadline, "{} model calls:\n{}", mock.requests().len(), serve.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Run `id` once `serve` shows it done, or a failure showing it and both replicas' logs.
async fn done(serve: &Serve, other: &Serve, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let run = serve.get(&format!("/v1/runs/{id}")).await.1;
        if run["status"] == "done" {
            return run;
        }
        assert!(Instant::now() < deadline, "{run}\n{}\n----\n{}", serve.log(), other.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The model replies a journal holds (not the calls a stop cancelled, which it notes too).
fn replies(journal: &[Value]) -> usize {
    of_kind(journal, "llm").iter().filter(|l| l["cancelled"] != true).count()
}

async fn readyz(serve: &Serve) -> (u16, Value) {
    serve.get("/readyz").await
}

/// Six runs in flight on two replicas when PostgreSQL stops for 20 s:
/// both replicas answer `/readyz` 503 `store_unreachable` meanwhile; each
/// run's replica stops it once the database has not answered for a lease
/// (2 s here), and once the database is back the runs are claimed again
/// and all finish, each with both model replies in its journal once. An
/// event stream open on replica b all along goes on after the outage with
/// no gap and no duplicate, to the run's end.
#[tokio::test(flavor = "multi_thread")]
async fn runs_in_flight_while_postgres_is_stopped_for_20_s_all_finish_once_it_is_back() {
    // Every commit on disk before it returns, as in production: a stop loses none.
    let Some(db) = sr_testing::postgres::start_with("rec-outage", sr_testing::postgres::DURABLE) else { return };
    let (dir_a, dir_b) = machines("rec-outage");
    let mock = MockServer::start().await;
    // More replies than calls: a call cut off by the outage is made again.
    for _ in 0..40 {
        mock.push(MockReply::text("Hello, dear reader.").delay(Duration::from_millis(1500)));
    }
    let a = replica(&dir_a, &mock, &db, "a").await;
    let b = replica(&dir_b, &mock, &db, "b").await;
    let ids = submit(&[&a, &b], 6).await;
    model_calls(&mock, 6, &a).await;
    let followed = format!("/v1/runs/{}/events", ids[0]);
    let (streamed, ()) = tokio::join!(b.get_text_for(&followed, Duration::from_secs(150)), async {
        // The stream is open before the outage.
        tokio::time::sleep(Duration::from_millis(500)).await;
        outage(&db, &a, &b, &ids).await;
    });
    let streamed = events_of(&streamed);
    let stored = a.get_events_after_header(&ids[0], 0).await;
    assert_eq!(streamed, stored, "the stream across the outage");
    assert_eq!(streamed.iter().map(|(id, _)| *id).collect::<Vec<_>>(), (1..=stored.len() as u64).collect::<Vec<_>>());
    assert_eq!(streamed.last().unwrap().1["type"], "run_finished");
    assert!(b.log().contains("cannot read a run's events"), "the stream met the outage: {}", b.log());
}

/// PostgreSQL stopped for 20 s under `a` and `b`, then started again: both
/// say they are not ready meanwhile, ready again after, and runs `ids` all
/// finish, each with both model replies in its journal once.
async fn outage(db: &sr_testing::postgres::Postgres, a: &Serve, b: &Serve, ids: &[String]) {
    let stopped = Instant::now();
    db.pause();
    for serve in [a, b] {
        let refused = wait_until(Duration::from_secs(10), || async {
            let ready = readyz(serve).await;
            (ready.0 == 503).then_some(ready.1)
        })
        .await;
        assert_eq!(refused["error"]["code"], "store_unreachable", "{refused}");
    }
    while stopped.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        for serve in [a, b] {
            assert_eq!(readyz(serve).await.0, 503, "ready with the database stopped");
        }
    }
    db.resume();
    for serve in [a, b] {
        wait_until(Duration::from_secs(30), || async { (readyz(serve).await.0 == 200).then_some(()) }).await;
    }
    let client = sql(db).await;
    for id in ids {
        let run = done(a, b, id).await;
        assert_eq!(run["result"], "Hello, dear reader.", "{run}");
        let journal = stored_journal(&client, id).await;
        assert_eq!(replies(&journal), 2, "{journal:?}");
    }
    assert!(a.log().contains("cannot") || b.log().contains("cannot"), "the outage was noticed");
}

/// Replica a drained (SIGTERM, `--drain-timeout 1`) while its runs wait
/// on their model calls: it exits 0, having released their claims, and
/// replica b, on a state directory of its own, finishes each of them from
/// its journal (what a completed is served, not asked again; the call the
/// drain cut off is noted cancelled and asked again), storing no stray
/// `agent_finished` for the stopped attempt.
#[tokio::test(flavor = "multi_thread")]
async fn a_drained_replicas_runs_are_finished_by_another() {
    let Some(db) = sr_testing::postgres::start("rec-drain") else { return };
    let (dir_a, dir_b) = machines("rec-drain");
    let mock = MockServer::start().await;
    let mut a = replica_with(&dir_a, &mock, &db, "a", &["--lease-secs", "2", "--drain-timeout", "1"]).await;
    // One run at a time, until each waits on its reviewer: the writer
    // answers at once, the reviewer asked on a never in time.
    let mut ids = Vec::new();
    for n in 1..=3 {
        mock.push(MockReply::text("Hello."));
        mock.push(MockReply::text("too late").delay(Duration::from_secs(120)));
        ids.extend(submit(&[&a], 1).await);
        model_calls(&mock, 2 * n, &a).await;
    }
    for _ in 0..3 {
        mock.push(MockReply::text("Looks good."));
    }
    a.signal(libc::SIGTERM);
    assert_eq!(a.wait_exit(Duration::from_secs(20)), Some(0), "{}", a.log());
    assert!(a.log().contains("runs still running at the drain's end were stopped"), "{}", a.log());
    let b = replica(&dir_b, &mock, &db, "b").await;
    let client = sql(&db).await;
    for id in &ids {
        let run = status_is(&b, id, "done").await;
        assert_eq!(run["result"], "Looks good.", "{run}\n{}", b.log());
        let replica: String = client.query_one("SELECT replica FROM runs WHERE id = $1", &[id]).await.unwrap().get(0);
        assert_eq!(replica, "b");
        let journal = stored_journal(&client, id).await;
        assert_eq!(replies(&journal), 2, "{journal:?}");
        let events = serving::events_of(&b.get_text(&format!("/v1/runs/{id}/events")).await);
        let stray: Vec<&Value> = events
            .iter()
            .map(|(_, e)| e)
            .filter(|e| e["type"] == "agent_finished" && e.to_string().contains("cancelled"))
            .collect();
        assert!(stray.is_empty(), "{stray:?}");
    }
    assert_eq!(mock.requests().len(), 9, "each writer asked once, on a: its reply came from the journal");
}

/// The claim check before each effect, alone. Replica a is killed during
/// its run's first model call; replica b (a state directory of its own, a
/// lease of 60 s so that its heartbeat does not look first) takes the run
/// over and replays its journal, which stores nothing (the events a
/// stored are not stored again), and waits for the run's MCP server (slow
/// to start: 4 s). Meanwhile the run's claim is taken (the test raises its
/// epoch, as another replica's claim does). When the server is up, the
/// check before the model call finds the claim gone: b asks the model
/// nothing and charges nothing (the host's counters: the mock's requests,
/// the tool's log) and stores no end. With the check turned off
/// (`Fenced::on_step` not asking) this test fails: b asks the model.
#[tokio::test(flavor = "multi_thread")]
async fn a_replica_whose_claim_was_taken_makes_no_further_call() {
    let Some(db) = sr_testing::postgres::start("rec-fence") else { return };
    let (dir_a, dir_b) = machines("rec-fence");
    let log = charges("rec-fence");
    for dir in [&dir_a, &dir_b] {
        std::fs::write(dir.join("pay.sr"), payer_starting_in(&log, 4)).unwrap();
    }
    let started = log.with_extension("log.started");
    let mock = MockServer::start().await;
    mock.push(MockReply::text("never sent").delay(Duration::from_secs(120)));
    mock.push(MockReply::tool_call("c1", "pay__charge", json!({"cents": 500})));
    mock.push(MockReply::text("Charged."));
    let mut a = replica(&dir_a, &mock, &db, "a").await;
    let run = a.post("/v1/runs", json!({"workload": "pay", "prompt": "charge 5 dollars"})).await;
    let id = run.1["id"].as_str().unwrap().to_string();
    model_calls(&mock, 1, &a).await;
    std::fs::remove_file(&started).unwrap();
    a.signal(libc::SIGKILL);
    a.wait_exit(Duration::from_secs(10));
    let b = replica_with(&dir_b, &mock, &db, "b", &["--lease-secs", "60"]).await;
    wait_until(Duration::from_secs(30), || async { started.exists().then_some(()) }).await;
    let client = sql(&db).await;
    let taken = client
        .execute("UPDATE runs SET epoch = epoch + 1, replica = 'elsewhere' WHERE id = $1 AND replica = 'b'", &[&id])
        .await
        .unwrap();
    assert_eq!(taken, 1, "b had claimed the run:\n{}", b.log());
    wait_until(Duration::from_secs(30), || async { b.log().contains("the run stops here").then_some(()) }).await;
    // Time for a call b would make once its server is up.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let charged = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!((mock.requests().len(), charged.as_str()), (1, ""), "b made a call:\n{}", b.log());
    let row = client.query_one("SELECT status, replica FROM runs WHERE id = $1", &[&id]).await.unwrap();
    assert_eq!((row.get::<_, String>(0), row.get::<_, String>(1)), ("running".into(), "elsewhere".into()));
}
