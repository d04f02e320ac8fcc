//! `sr serve --database-url`: replicas on one PostgreSQL server (started by
//! the test, `sr_testing::postgres`) and one state directory, their model
//! sr-llm's mock server. A run is followed from another replica than the one
//! running it; a replica killed mid model call has its run finished by the
//! other, no step done twice; a replica stopped past its lease has its late
//! writes refused; a run is cancelled through another replica than the one
//! running it; a run is forked through another replica than the one that
//! ran it, and both are listed as A2A tasks by either.
#![allow(clippy::unwrap_used)]

mod serving;

use std::time::Duration;

use serde_json::{Value, json};
use serving::{Serve, events_of, temp, wait_until};
use sr_llm::mock::{MockReply, MockServer};
use sr_testing::postgres::Postgres;

/// A scripted two-agent flow: a writer, then a reviewer of its draft.
const TWO_AGENTS: &str = include_str!("fixtures/two_agents.sr");

/// `sr serve` as replica `name` of `db` (leases of 2 s).
async fn replica(dir: &std::path::Path, mock: &MockServer, db: &Postgres, name: &str) -> Serve {
    let url = db.url();
    Serve::start(dir, mock, &["greet.sr", "--database-url", &url, "--replica-id", name, "--lease-secs", "2"]).await
}

/// A client of the test's own on the servers' database.
async fn sql(db: &Postgres) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&db.url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

async fn epoch(client: &tokio_postgres::Client, id: &str) -> i64 {
    client.query_one("SELECT epoch FROM runs WHERE id = $1", &[&id]).await.unwrap().get(0)
}

fn kinds(events: &[(u64, Value)]) -> Vec<String> {
    events.iter().map(|(_, e)| e["type"].as_str().unwrap().to_string()).filter(|t| t != "text_delta").collect()
}

/// No gap, no duplicate; each model call answered once; one start.
fn assert_one_clean_sequence(all: &[(u64, Value)]) {
    let ids: Vec<u64> = all.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, (1..=all.len() as u64).collect::<Vec<_>>(), "no gap, no duplicate id");
    let kinds = kinds(all);
    assert_eq!(kinds.iter().filter(|t| *t == "model_response").count(), 2, "each model call answered once: {kinds:?}");
    assert_eq!(kinds.iter().filter(|t| *t == "run_started").count(), 1, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|t| *t == "run_finished").count(), 1, "{kinds:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_on_one_replica_streams_whole_from_another() {
    let Some(db) = sr_testing::postgres::start("follow") else { return };
    let dir = temp("pg-follow", &[("greet.sr", TWO_AGENTS)]);
    let mock = MockServer::start().await;
    let slow = Duration::from_millis(150);
    mock.push(MockReply::chunks(["Hello", ", ", "dear", " reader", "."]).chunk_delay(slow));
    mock.push(MockReply::chunks(["Looks ", "good", ": ", "Hello", "."]).chunk_delay(slow));
    let a = replica(&dir, &mock, &db, "a").await;
    let run = a.post("/v1/runs", json!({"workload": "greet", "prompt": "Ada"})).await;
    assert_eq!(run.0, 202, "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    // Running on a (the only replica) before b starts.
    wait_until(Duration::from_secs(30), || async { (!mock.requests().is_empty()).then_some(()) }).await;
    let b = replica(&dir, &mock, &db, "b").await;
    let followed = events_of(&b.get_text(&format!("/v1/runs/{id}/events")).await);
    let on_a = events_of(&a.get_text(&format!("/v1/runs/{id}/events")).await);
    assert_eq!(followed, on_a);
    assert_one_clean_sequence(&followed);
    assert!(kinds(&followed).last().is_some_and(|k| k == "run_finished"));
    let row = sql(&db).await.query_one("SELECT replica, status FROM runs WHERE id = $1", &[&id]).await.unwrap();
    assert_eq!((row.get::<_, &str>(0), row.get::<_, &str>(1)), ("a", "done"));
    assert_eq!(b.get(&format!("/v1/runs/{id}")).await.1["result"], "Looks good: Hello.");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_on_one_replica_is_cancelled_through_another() {
    let Some(db) = sr_testing::postgres::start("cancel") else { return };
    let dir = temp("pg-cancel", &[("greet.sr", TWO_AGENTS)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::text("never sent").delay(Duration::from_secs(120)));
    let a = replica(&dir, &mock, &db, "a").await;
    let id =
        a.post("/v1/runs", json!({"workload": "greet", "prompt": "Ada"})).await.1["id"].as_str().unwrap().to_string();
    // Running on a (the only replica), in its first model call, when b starts.
    wait_until(Duration::from_secs(30), || async { (mock.requests().len() == 1).then_some(()) }).await;
    let b = replica(&dir, &mock, &db, "b").await;
    let asked = std::time::Instant::now();
    let cancelled = b.post(&format!("/v1/runs/{id}/cancel"), json!({})).await;
    assert_eq!(cancelled.0, 200, "{}", cancelled.1);
    let run = ended(&a, &id).await;
    eprintln!("cancel through b → cancelled on a in {:?}", asked.elapsed());
    assert!(asked.elapsed() < Duration::from_secs(10), "cancelled in {:?}", asked.elapsed());
    assert_eq!((run["status"].clone(), run["error"].clone()), (json!("cancelled"), json!("cancelled by request")));
    // Both replicas' streams end, with the same events; nothing ran after it.
    let on_a = events_of(&a.get_text(&format!("/v1/runs/{id}/events")).await);
    assert_eq!(events_of(&b.get_text(&format!("/v1/runs/{id}/events")).await), on_a);
    assert_eq!(kinds(&on_a).first().map(String::as_str), Some("run_started"));
    assert_eq!(mock.requests().len(), 1, "the reviewer never ran");
    let row = sql(&db).await.query_one("SELECT replica, status FROM runs WHERE id = $1", &[&id]).await.unwrap();
    assert_eq!((row.get::<_, &str>(0), row.get::<_, &str>(1)), ("a", "cancelled"));
    let again = a.post(&format!("/v1/runs/{id}/cancel"), json!({})).await;
    assert_eq!((again.0, again.1["error"]["code"].clone()), (409, json!("run_ended")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_mid_model_call_has_its_run_finished_by_another() {
    let Some(db) = sr_testing::postgres::start("kill") else { return };
    let dir = temp("pg-kill", &[("greet.sr", TWO_AGENTS)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::chunks(["Hello, ", "dear reader."]));
    mock.push(MockReply::text("never sent").delay(Duration::from_secs(120)));
    let mut a = replica(&dir, &mock, &db, "a").await;
    let id =
        a.post("/v1/runs", json!({"workload": "greet", "prompt": "Ada"})).await.1["id"].as_str().unwrap().to_string();
    // Killed during the second model call.
    wait_until(Duration::from_secs(30), || async { (mock.requests().len() == 2).then_some(()) }).await;
    let b = replica(&dir, &mock, &db, "b").await;
    let before = events_of(&b.get_text_for(&format!("/v1/runs/{id}/events"), Duration::from_millis(500)).await);
    mock.push(MockReply::chunks(["Looks ", "good."]));
    a.signal(libc::SIGKILL);
    a.wait_exit(Duration::from_secs(10));
    let killed = std::time::Instant::now();
    let ended = wait_until(Duration::from_secs(60), || async {
        let run = b.get(&format!("/v1/runs/{id}")).await.1;
        (run["status"] == "done").then_some(run)
    })
    .await;
    eprintln!("killed → done on the other replica in {:?}", killed.elapsed());
    // A lease of 2 s, a claim poll of 1 s, and the run's own time.
    assert!(killed.elapsed() < Duration::from_secs(20), "taken over in {:?}", killed.elapsed());
    assert_eq!(ended["result"], "Looks good.");
    // The writer's reply came from the journal: one more model request only.
    assert_eq!(mock.requests().len(), 3);
    let all = events_of(&b.get_text(&format!("/v1/runs/{id}/events")).await);
    assert_eq!(all[..before.len()], before[..]);
    assert_one_clean_sequence(&all);
    let row = sql(&db).await.query_one("SELECT replica, epoch FROM runs WHERE id = $1", &[&id]).await.unwrap();
    assert_eq!((row.get::<_, &str>(0), row.get::<_, i64>(1)), ("b", 2));
    assert!(b.log().contains("resumed=true"), "{}", b.log());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_stopped_past_its_lease_has_its_late_writes_refused() {
    let Some(db) = sr_testing::postgres::start("stop") else { return };
    let dir = temp("pg-stop", &[("greet.sr", TWO_AGENTS)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::chunks(["Hello, ", "dear reader."]));
    // Answered while a is stopped: a reads it when it continues.
    mock.push(MockReply::chunks(["Late ", "review."]).delay(Duration::from_secs(1)));
    mock.push(MockReply::chunks(["Looks ", "good."]));
    let mut a = replica(&dir, &mock, &db, "a").await;
    let id =
        a.post("/v1/runs", json!({"workload": "greet", "prompt": "Ada"})).await.1["id"].as_str().unwrap().to_string();
    wait_until(Duration::from_secs(30), || async { (mock.requests().len() == 2).then_some(()) }).await;
    a.signal(libc::SIGSTOP);
    let b = replica(&dir, &mock, &db, "b").await;
    let client = sql(&db).await;
    wait_until(Duration::from_secs(30), || async { (epoch(&client, &id).await == 2).then_some(()) }).await;
    // b holds the claim but not the run: a still holds the runtime's lock of it.
    for _ in 0..200 {
        if b.log().contains("waiting for the run's previous attempt to stop") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(b.log().contains("waiting for the run's previous attempt to stop"), "{}", b.log());
    let count = "SELECT COUNT(*) FROM run_events WHERE run = $1 AND epoch = 1";
    let stale_at_takeover: i64 = client.query_one(count, &[&id]).await.unwrap().get(0);
    a.signal(libc::SIGCONT);
    let mut ended = Value::Null;
    for _ in 0..600 {
        ended = b.get(&format!("/v1/runs/{id}")).await.1;
        if ended["status"] == "done" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ended["status"], "done", "{ended}\na:\n{}\nb:\n{}", a.log(), b.log());
    let stale_after: i64 = client.query_one(count, &[&id]).await.unwrap().get(0);
    assert_eq!(stale_after, stale_at_takeover, "no event of the old claim after the takeover");
    let newer: i64 = client
        .query_one(
            "SELECT COUNT(*) FROM run_events AS o, run_events AS n
             WHERE o.run = $1 AND n.run = $1 AND o.epoch = 1 AND n.epoch > 1 AND o.id > n.id",
            &[&id],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(newer, 0, "every event of the old claim precedes the new claim's");
    wait_until(Duration::from_secs(20), || async { a.log().contains("the run stops here").then_some(()) }).await;
    // The reviewer's reply a received late is in the journal (a held the
    // run's runtime lease until it stopped) or asked again by b: either way
    // one answer is in the run.
    assert!(["Late review.", "Looks good."].contains(&ended["result"].as_str().unwrap()), "{ended}");
    eprintln!(
        "the stalled replica's late answer {} the journal",
        if ended["result"] == "Late review." { "was in" } else { "was not in" }
    );
    let all = events_of(&b.get_text(&format!("/v1/runs/{id}/events")).await);
    assert_one_clean_sequence(&all);
    assert!(epoch(&client, &id).await >= 2);
}

/// The run `id` once it has ended, as `serve` shows it.
async fn ended(serve: &Serve, id: &str) -> Value {
    wait_until(Duration::from_secs(30), || async {
        let run = serve.get(&format!("/v1/runs/{id}")).await.1;
        matches!(run["status"].as_str(), Some("done" | "failed" | "cancelled")).then_some(run)
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_of_one_replica_is_forked_and_listed_as_a_task_from_another() {
    let Some(db) = sr_testing::postgres::start("fork") else { return };
    let dir = temp("pg-fork", &[("greet.sr", TWO_AGENTS)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::text("Hello."));
    mock.push(MockReply::text("Looks good: Hello."));
    let a = replica(&dir, &mock, &db, "a").await;
    let id =
        a.post("/v1/runs", json!({"workload": "greet", "prompt": "Ada"})).await.1["id"].as_str().unwrap().to_string();
    assert_eq!(ended(&a, &id).await["status"], "done");
    let b = replica(&dir, &mock, &db, "b").await;
    // The writer's reply, replaced in a fork asked of the replica that did not run it.
    let events = events_of(&b.get_text(&format!("/v1/runs/{id}/events")).await);
    let at = events.iter().find(|(_, e)| e["type"] == "model_response").map(|(seq, _)| *seq).unwrap();
    mock.push(MockReply::text("Looks fine: Hi."));
    let fork = b.post(&format!("/v1/runs/{id}/fork"), json!({"at": at, "reply": "Hi."})).await;
    assert_eq!(fork.0, 202, "{}", fork.1);
    let fork_id = fork.1["id"].as_str().unwrap().to_string();
    let forked = ended(&a, &fork_id).await;
    assert_eq!(forked["status"], "done", "{forked}");
    assert_eq!(forked["result"], "Looks fine: Hi.");
    assert_eq!(mock.requests().len(), 3, "the fork asked only the reviewer, live");
    // Both runs are tasks of the workload's agent on either replica (the
    // list comes from the shared database: no replica has a serve.db).
    assert!(!dir.join("state/serve.db").exists());
    for serve in [&a, &b] {
        let listed = serve.post("/a2a", json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks"})).await;
        assert_eq!(listed.0, 200, "{}", listed.1);
        let mut ids: Vec<&str> =
            listed.1["result"]["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
        ids.sort_unstable();
        let mut wanted = vec![id.as_str(), fork_id.as_str()];
        wanted.sort_unstable();
        assert_eq!(ids, wanted, "{}", listed.1);
    }
}

/// `/readyz` follows the database: 503 `store_unreachable` while PostgreSQL
/// is down, 200 again once it is back.
#[tokio::test(flavor = "multi_thread")]
async fn readyz_says_503_while_the_database_is_down_and_200_once_it_is_back() {
    let Some(db) = sr_testing::postgres::start("readyz") else { return };
    let dir = temp("pg-readyz", &[("greet.sr", TWO_AGENTS)]);
    let mock = MockServer::start().await;
    let serve = replica(&dir, &mock, &db, "a").await;
    assert_eq!(serve.get("/readyz").await.0, 200);
    db.pause();
    let (status, answer) = serve.get("/readyz").await;
    assert_eq!((status, &answer["error"]["code"]), (503, &json!("store_unreachable")), "{answer}");
    db.resume();
    wait_until(Duration::from_secs(30), || async { (serve.get("/readyz").await.0 == 200).then_some(()) }).await;
}
