//! The store of record: with `--database-url` (a PostgreSQL server started
//! by the test, `sr_testing::postgres`) replicas with state directories of
//! their own continue each other's sessions — a session's next turn sees the
//! whole conversation, a question asked on one replica is answered and
//! finished on another — because what the runtime keeps of a session is in
//! the database and each replica's state directory is a cache of it. The
//! embedded store does the same for a state directory whose runtime files
//! were deleted between two starts. Only one replica dispatches at a time
//! here, so the replica that runs each step is the one the test chose.
//!
//! A replica killed (`kill -9`) during a model call, right after a tool wrote
//! a file, or during a tool call has its run taken over by a replica that
//! never saw it: the journal, copied to the database line by line, serves
//! what was done, the work directory is rebuilt from the journal's file
//! checkpoints, and no step is journaled twice. A run is travelled in and
//! forked on a replica that never saw it, and a replica stopped past its
//! lease makes no tool call once it continues.
#![allow(clippy::unwrap_used)]

mod serving;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use serving::record::{
    CHAT, FILER, PAUSING, TWO_AGENTS, charges, machines, of_kind, payer, replica, sql, status_is, stored_journal,
};
use serving::{Serve, temp, wait_until};
use sr_llm::mock::{MockReply, MockServer};
use sr_testing::postgres::Postgres;

async fn embedded(dir: &Path, mock: &MockServer) -> Serve {
    Serve::start(dir, mock, &["chat.sr", "reply.sr"]).await
}

/// Runs `prompt` as the session's next turn, to its end.
async fn turn(serve: &Serve, session: &str, prompt: &str) -> Value {
    let run =
        serve.post("/v1/runs", json!({"workload": "chat", "prompt": prompt, "session": session, "wait": true})).await;
    assert_eq!((run.0, run.1["status"].clone()), (200, json!("done")), "{}\n{}", run.1, serve.log());
    run.1
}

/// How many messages each model request sent.
fn sent(mock: &MockServer) -> Vec<usize> {
    mock.requests().iter().map(|r| r.body["messages"].as_array().unwrap().len()).collect()
}

/// What the runtime keeps in a state directory (the server's own `serve.db` stays).
fn forget_runtime_files(dir: &Path) {
    let state = dir.join("state");
    for entry in std::fs::read_dir(&state).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("sessions.db") {
            std::fs::remove_file(&path).unwrap();
        } else if name == "journal" {
            std::fs::remove_dir_all(&path).unwrap();
        }
    }
    assert!(!state.join("sessions.db").exists() && !state.join("journal").exists());
}

/// A session's three turns on replicas a, b, a: each request carries the
/// whole conversation (system, then two messages per earlier turn, then the
/// new one), as on one replica.
#[tokio::test(flavor = "multi_thread")]
async fn a_session_alternating_replicas_sends_the_model_its_whole_history() {
    let Some(db) = sr_testing::postgres::start("rec-turns") else { return };
    let (dir_a, dir_b) = machines("rec-turns");
    let mock = MockServer::start().await;
    for reply in ["One.", "Two.", "Three."] {
        mock.push(MockReply::text(reply));
    }
    let a = replica(&dir_a, &mock, &db, "a").await;
    let session = a.post("/v1/sessions", json!({})).await.1["id"].as_str().unwrap().to_string();
    let first = turn(&a, &session, "first").await;
    drop(a);
    let b = replica(&dir_b, &mock, &db, "b").await;
    let second = turn(&b, &session, "second").await;
    drop(b);
    let a = replica(&dir_a, &mock, &db, "a").await;
    let third = turn(&a, &session, "third").await;
    assert_eq!([&first["result"], &second["result"], &third["result"]], ["One.", "Two.", "Three."]);
    assert_eq!(sent(&mock), [2, 4, 6], "every turn sees the whole conversation");
    let last = &mock.requests()[2].body["messages"];
    let texts: Vec<&str> = (1..6).map(|i| last[i]["content"].as_str().unwrap()).collect();
    assert_eq!(texts, ["first", "One.", "second", "Two.", "third"]);
    let (client, connection) = tokio_postgres::connect(&db.url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let replicas: Vec<String> = client
        .query("SELECT replica FROM runs WHERE session = $1 ORDER BY position", &[&session])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(replicas, ["a", "b", "a"]);
    // A replica that ran none of it shows the whole transcript.
    drop(a);
    let dir_c =
        temp("rec-turns-c", &[("chat.sr", CHAT), ("reply.sr", PAUSING), ("greet.sr", TWO_AGENTS), ("filer.sr", FILER)]);
    std::fs::write(dir_c.join("pay.sr"), payer(&charges("rec-turns"))).unwrap();
    let c = replica(&dir_c, &mock, &db, "c").await;
    let shown = c.get(&format!("/v1/sessions/{session}")).await.1;
    assert_eq!(shown["transcript"].as_array().map(Vec::len), Some(6), "{shown}");
    // The database holds the conversation and each attempt's journal, no line twice.
    let held: i64 =
        client.query_one("SELECT COUNT(*) FROM session_messages WHERE session = $1", &[&session]).await.unwrap().get(0);
    assert_eq!(held, 6);
    let attempts: Vec<(i64, String)> = client
        .query("SELECT attempt, status FROM session_attempts WHERE session = $1 ORDER BY attempt", &[&session])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(attempts, [(1, "completed".to_string()), (2, "completed".to_string()), (3, "completed".to_string())]);
    let llm_lines: Vec<(i64, i64)> = client
        .query(
            "SELECT attempt, COUNT(*) FROM journal_lines WHERE session = $1 AND body LIKE '{\"kind\":\"llm\"%'
             GROUP BY attempt ORDER BY attempt",
            &[&session],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(llm_lines, [(1, 1), (2, 1), (3, 1)], "one model exchange journaled per turn");
}

/// A run pauses on replica a for `escalate to human`; replica b, which never
/// saw it, takes the answer and finishes it from the journal a stored.
#[tokio::test(flavor = "multi_thread")]
async fn a_question_asked_on_one_replica_is_answered_and_finished_on_another() {
    let Some(db) = sr_testing::postgres::start("rec-ask") else { return };
    let (dir_a, dir_b) = machines("rec-ask");
    let mock = MockServer::start().await;
    mock.push(MockReply::text("Draft: thanks for writing."));
    let a = replica(&dir_a, &mock, &db, "a").await;
    let run = a.post("/v1/runs", json!({"workload": "reply", "prompt": "a customer mail", "wait": true})).await;
    assert_eq!(run.1["status"], "paused", "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    drop(a);
    let b = replica(&dir_b, &mock, &db, "b").await;
    mock.push(MockReply::text("Thanks for writing; we will reply within a day."));
    let answered = b.post(&format!("/v1/runs/{id}/input"), json!({"text": "approved, be warm"})).await;
    assert_eq!(answered.0, 202, "{}", answered.1);
    let ended = ended(&b, &id).await;
    assert_eq!(ended["result"], "Thanks for writing; we will reply within a day.");
    assert_eq!(mock.requests().len(), 2, "the draft came from the journal a stored");
    let polish = mock.requests()[1].body["messages"].to_string();
    assert!(polish.contains("approved, be warm") && polish.contains("Draft: thanks for writing."), "{polish}");
    assert!(b.log().contains("resumed=true"), "{}", b.log());
}

async fn ended(serve: &Serve, id: &str) -> Value {
    let path = format!("/v1/runs/{id}");
    wait_until(Duration::from_secs(60), || async {
        let run = serve.get(&path).await.1;
        (run["status"] == "done" || run["status"] == "failed").then_some(run)
    })
    .await
}

/// The embedded store: the runtime's files of the state directory deleted
/// between two starts, a session's next turn still sees its history and a
/// paused run still takes its answer.
#[tokio::test(flavor = "multi_thread")]
async fn the_embedded_store_rebuilds_a_deleted_cache() {
    let dir = temp("rec-embedded", &[("chat.sr", CHAT), ("reply.sr", PAUSING)]);
    let mock = MockServer::start().await;
    for reply in ["One.", "Two.", "Draft: thanks for writing."] {
        mock.push(MockReply::text(reply));
    }
    let serve = embedded(&dir, &mock).await;
    let session = serve.post("/v1/sessions", json!({})).await.1["id"].as_str().unwrap().to_string();
    turn(&serve, &session, "first").await;
    drop(serve);
    forget_runtime_files(&dir);
    let serve = embedded(&dir, &mock).await;
    turn(&serve, &session, "second").await;
    assert_eq!(sent(&mock), [2, 4]);
    let run = serve.post("/v1/runs", json!({"workload": "reply", "prompt": "a customer mail", "wait": true})).await;
    assert_eq!(run.1["status"], "paused", "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    drop(serve);
    forget_runtime_files(&dir);
    let serve = embedded(&dir, &mock).await;
    mock.push(MockReply::text("Thanks for writing; we will reply within a day."));
    let answered = serve.post(&format!("/v1/runs/{id}/input"), json!({"text": "approved"})).await;
    assert_eq!(answered.0, 202, "{}", answered.1);
    let ended = ended(&serve, &id).await;
    assert_eq!(ended["result"], "Thanks for writing; we will reply within a day.", "{}", serve.log());
    assert_eq!(mock.requests().len(), 4, "the draft came from the stored journal");
}
/// Kills replica `a` (`kill -9`) and starts `b` on its own state directory.
async fn kill_and_replace(mut a: Serve, dir_b: &Path, mock: &MockServer, db: &Postgres) -> Serve {
    a.signal(libc::SIGKILL);
    a.wait_exit(Duration::from_secs(10));
    replica(dir_b, mock, db, "b").await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_during_a_model_call_has_its_run_finished_by_a_replica_of_its_own_state() {
    let Some(db) = sr_testing::postgres::start("rec-kill-model") else { return };
    let (dir_a, dir_b) = machines("rec-kill-model");
    let mock = MockServer::start().await;
    mock.push(MockReply::text("Hello, dear reader."));
    mock.push(MockReply::text("never sent").delay(Duration::from_secs(120)));
    let a = replica(&dir_a, &mock, &db, "a").await;
    let id =
        a.post("/v1/runs", json!({"workload": "greet", "prompt": "Ada"})).await.1["id"].as_str().unwrap().to_string();
    wait_until(Duration::from_secs(30), || async { (mock.requests().len() == 2).then_some(()) }).await;
    mock.push(MockReply::text("Looks good."));
    let b = kill_and_replace(a, &dir_b, &mock, &db).await;
    let ended = status_is(&b, &id, "done").await;
    assert_eq!(ended["result"], "Looks good.");
    assert_eq!(mock.requests().len(), 3, "the writer's reply came from the journal in the database");
    let review = mock.requests()[2].body["messages"].to_string();
    assert!(review.contains("Hello, dear reader."), "{review}");
    let client = sql(&db).await;
    let journal = stored_journal(&client, &id).await;
    assert_eq!(of_kind(&journal, "llm").len(), 2, "{journal:?}");
    assert!(b.log().contains("resumed=true"), "{}", b.log());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_right_after_a_file_write_leaves_the_file_to_the_replica_that_finishes() {
    let Some(db) = sr_testing::postgres::start("rec-kill-file") else { return };
    let (dir_a, dir_b) = machines("rec-kill-file");
    let mock = MockServer::start().await;
    mock.push(MockReply::tool_call("w1", "write_file", json!({"path": "note.txt", "content": "Dear Ada."})));
    mock.push(MockReply::text("never sent").delay(Duration::from_secs(120)));
    let a = replica(&dir_a, &mock, &db, "a").await;
    let id =
        a.post("/v1/runs", json!({"workload": "filer", "prompt": "Ada"})).await.1["id"].as_str().unwrap().to_string();
    // The file is written and journaled; the next model call is under way.
    wait_until(Duration::from_secs(30), || async { (mock.requests().len() == 2).then_some(()) }).await;
    let on_a = dir_a.join("state/runs").join(&id).join("work/note.txt");
    assert_eq!(std::fs::read_to_string(&on_a).unwrap(), "Dear Ada.");
    mock.push(MockReply::text("Filed."));
    let b = kill_and_replace(a, &dir_b, &mock, &db).await;
    let ended = status_is(&b, &id, "done").await;
    assert_eq!(ended["result"], "Filed.", "{}", b.log());
    let on_b = dir_b.join("state/runs").join(&id).join("work/note.txt");
    assert_eq!(std::fs::read_to_string(&on_b).unwrap(), "Dear Ada.", "the file rebuilt from the journal");
    assert_eq!(mock.requests().len(), 3, "the tool call came from the journal: not asked for again");
    let client = sql(&db).await;
    let journal = stored_journal(&client, &id).await;
    let tools: Vec<_> = of_kind(&journal, "tool").iter().map(|l| l["name"].clone()).collect();
    assert_eq!(tools, [json!("write_file")], "the write journaled once: {journal:?}");
    assert_eq!(of_kind(&journal, "tool_start").len(), 1, "{journal:?}");
}

/// A run that ended on replica a is travelled in and forked on replica b,
/// which never saw it: the journal and the fork's plan come from the database.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_of_one_replica_is_travelled_in_and_forked_on_another() {
    let Some(db) = sr_testing::postgres::start("rec-fork") else { return };
    let (dir_a, dir_b) = machines("rec-fork");
    let mock = MockServer::start().await;
    mock.push(MockReply::text("Hello."));
    mock.push(MockReply::text("Looks good: Hello."));
    let a = replica(&dir_a, &mock, &db, "a").await;
    let run = a.post("/v1/runs", json!({"workload": "greet", "prompt": "Ada", "wait": true})).await;
    assert_eq!(run.1["status"], "done", "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    drop(a);
    let b = replica(&dir_b, &mock, &db, "b").await;
    let events = serving::events_of(&b.get_text(&format!("/v1/runs/{id}/events")).await);
    let reply = events.iter().find(|(_, e)| e["type"] == "model_response").map(|(seq, _)| *seq).unwrap();
    let last = events.last().unwrap().0;
    let moment = b.get(&format!("/v1/runs/{id}/at/{last}")).await;
    assert_eq!(moment.0, 200, "{}", moment.1);
    assert!(moment.1.to_string().contains("Looks good: Hello."), "{}", moment.1);
    mock.push(MockReply::text("Looks fine: Hi."));
    let fork = b.post(&format!("/v1/runs/{id}/fork"), json!({"at": reply, "reply": "Hi."})).await;
    assert_eq!(fork.0, 202, "{}", fork.1);
    let fork_id = fork.1["id"].as_str().unwrap().to_string();
    let forked = ended(&b, &fork_id).await;
    assert_eq!((forked["status"].clone(), forked["result"].clone()), (json!("done"), json!("Looks fine: Hi.")));
    assert_eq!(mock.requests().len(), 3, "the fork asked only the reviewer, live");
    assert!(!dir_b.join("state/forks").exists(), "the plan is in the database");
}

/// Replica a killed during a call of a tool that is not idempotent: b, on
/// its own state directory, finds the call's start in the journal in the
/// database and stops the run in doubt instead of charging again; decided
/// `skip`, the run finishes, and the card was charged once.
#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_during_a_tool_call_leaves_the_call_in_doubt_to_the_next_and_it_runs_once() {
    let Some(db) = sr_testing::postgres::start("rec-kill-tool") else { return };
    let (dir_a, dir_b) = machines("rec-kill-tool");
    let log = charges("rec-kill-tool");
    let executions = || std::fs::read_to_string(&log).unwrap_or_default().lines().count();
    let mock = MockServer::start().await;
    mock.push(MockReply::tool_call("c1", "pay__charge", json!({"cents": 500})));
    let a = replica(&dir_a, &mock, &db, "a").await;
    let id = a.post("/v1/runs", json!({"workload": "pay", "prompt": "charge 5 dollars"})).await.1["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The charge is made; the tool answers a minute later.
    wait_until(Duration::from_secs(60), || async { (executions() == 1).then_some(()) }).await;
    let b = kill_and_replace(a, &dir_b, &mock, &db).await;
    let run = status_is(&b, &id, "in_doubt").await;
    assert_eq!(run["question"]["tool"], "pay__charge", "{run}");
    assert_eq!((mock.requests().len(), executions()), (1, 1), "nothing made again before the decision");
    mock.push(MockReply::text("The charge may not have gone through."));
    let decided = b.post(&format!("/v1/runs/{id}/input"), json!({"decision": "skip"})).await;
    assert_eq!(decided.0, 202, "{}", decided.1);
    let ended = status_is(&b, &id, "done").await;
    assert_eq!(ended["result"], "The charge may not have gone through.");
    assert_eq!(executions(), 1, "the card was charged once");
    let journal = stored_journal(&sql(&db).await, &id).await;
    assert_eq!(of_kind(&journal, "tool_start").len(), 1, "{journal:?}");
}

/// Replica a stopped (SIGSTOP) during a model call past its lease: b, on its
/// own state directory, takes the run over and charges the card; a, let go
/// on, gets its model's answer (the same tool call) but makes no call: its
/// claim is gone. The card is charged once, by b.
#[tokio::test(flavor = "multi_thread")]
async fn a_replica_stopped_past_its_lease_makes_no_effect_once_it_continues() {
    let Some(db) = sr_testing::postgres::start("rec-stop") else { return };
    let (dir_a, dir_b) = machines("rec-stop");
    let log = charges("rec-stop");
    // Not the first call ever: the tool answers at once (`charge_mcp.py`).
    std::fs::write(&log, "earlier\n").unwrap();
    let executions = || std::fs::read_to_string(&log).unwrap_or_default().lines().count() - 1;
    let mock = MockServer::start().await;
    let charge = || MockReply::tool_call("c1", "pay__charge", json!({"cents": 500}));
    mock.push(charge().delay(Duration::from_secs(4)));
    let mut a = replica(&dir_a, &mock, &db, "a").await;
    let id = a.post("/v1/runs", json!({"workload": "pay", "prompt": "charge 5 dollars"})).await.1["id"]
        .as_str()
        .unwrap()
        .to_string();
    wait_until(Duration::from_secs(30), || async { (mock.requests().len() == 1).then_some(()) }).await;
    a.signal(libc::SIGSTOP);
    mock.push(charge());
    mock.push(MockReply::text("Charged."));
    let b = replica(&dir_b, &mock, &db, "b").await;
    let mut ended = Value::Null;
    for _ in 0..300 {
        ended = b.get(&format!("/v1/runs/{id}")).await.1;
        if ended["status"] == "done" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ended["result"], "Charged.", "{ended}\nb:\n{}", b.log());
    assert_eq!(executions(), 1, "b charged once");
    a.signal(libc::SIGCONT);
    wait_until(Duration::from_secs(30), || async { a.log().contains("the run stops here").then_some(()) }).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(executions(), 1, "a made no call once its claim was gone: {}", a.log());
    assert_eq!(b.get(&format!("/v1/runs/{id}")).await.1["status"], "done");
}
