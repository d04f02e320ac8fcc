//! A2A on replicas sharing a PostgreSQL server (started by the test,
//! `sr_testing::postgres`), each with a state directory of its own: what A2A
//! adds to a run (the messages, the files they brought, the webhooks) is in
//! the database, so a task sent to one replica is read, answered, given a
//! webhook and cancelled on another, its file parts reach the replica that
//! runs it, and its `files` artifact (from the run's journal) is the same
//! on every replica. Only one replica runs at a time, so the replica that
//! runs each step is the one the test chose.
#![allow(clippy::unwrap_used)]

mod serving;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use serving::{Serve, temp, wait_until};
use sr_llm::mock::{MockReply, MockServer};
use sr_testing::postgres::Postgres;

/// Reads a delivered file, asks a human, and on "yes" writes a file with
/// the notes and the context parts it was sent.
const GATED: &str = include_str!("fixtures/gated.sr");

/// A directory of its own per replica, each with the workload.
fn machines(name: &str) -> (PathBuf, PathBuf) {
    let (a, b) =
        (temp(&format!("{name}-a"), &[("gated.sr", GATED)]), temp(&format!("{name}-b"), &[("gated.sr", GATED)]));
    assert!(!a.starts_with(&b) && !b.starts_with(&a), "no path shared");
    (a, b)
}

/// Replica `name` in `dir`, allowed to notify webhooks on loopback.
async fn replica(dir: &Path, mock: &MockServer, db: &Postgres, name: &str) -> Serve {
    let url = db.url();
    let flags = ["gated.sr", "--database-url", &url, "--replica-id", name, "--lease-secs", "2"];
    Serve::start(dir, mock, &[&flags[..], &["--push-host", "127.0.0.1"]].concat()).await
}

/// One JSON-RPC call to the replica's agent; its result (an error fails the test).
async fn call(serve: &Serve, method: &str, params: Value) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, response) = serve.post("/a2a", request).await;
    assert_eq!(status, 200, "{response}");
    assert!(response.get("error").is_none(), "{method}: {response}\n{}", serve.log());
    response["result"].clone()
}

/// A message with the notes as a file part, sent blocking: the task once it asks.
async fn send_notes(serve: &Serve, id: &str, notes: &str) -> Value {
    let raw = base64(notes.as_bytes());
    let parts = json!([{"text": "Ship the release"}, {"raw": raw, "filename": "notes.txt", "mediaType": "text/plain"}]);
    let sent =
        call(serve, "SendMessage", json!({"message": {"messageId": id, "role": "ROLE_USER", "parts": parts}})).await;
    assert_eq!(sent["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{sent}\n{}", serve.log());
    sent["task"].clone()
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The files artifact of a task: each file's path and raw (base64) bytes.
fn files(task: &Value) -> Vec<(String, String)> {
    let artifacts = task["artifacts"].as_array().cloned().unwrap_or_default();
    let Some(files) = artifacts.iter().find(|a| a["artifactId"] == "files") else { return Vec::new() };
    let parts = files["parts"].as_array().unwrap();
    parts
        .iter()
        .map(|p| (p["filename"].as_str().unwrap().to_string(), p["raw"].as_str().unwrap().to_string()))
        .collect()
}

/// Two tasks sent to replica a, which runs them until they ask; replica b,
/// which never saw them, lists and reads them, gives one a webhook and
/// answers it (the run goes on on b, its file parts and context parts
/// from the database), cancels the other; then replica a shows the
/// finished task with the file b's run wrote and the webhook b was given.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_sent_to_one_replica_is_read_answered_notified_and_cancelled_on_another() {
    let Some(db) = sr_testing::postgres::start("a2a-replicas") else { return };
    let (dir_a, dir_b) = machines("a2a-replicas");
    let mock = MockServer::start().await;
    let hook = MockServer::start().await;
    hook.respond_with(|_| MockReply::raw(200, "application/json", "{}"));
    let a = replica(&dir_a, &mock, &db, "a").await;
    let shipped = send_notes(&a, "m-ship", "v2 notes").await;
    let held = send_notes(&a, "m-hold", "v3 notes").await;
    let (ship, hold) = (shipped["id"].as_str().unwrap().to_string(), held["id"].as_str().unwrap().to_string());
    drop(a);

    let b = replica(&dir_b, &mock, &db, "b").await;
    let listed = call(&b, "ListTasks", json!({})).await;
    let mut ids: Vec<&str> = listed["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    let mut sent = vec![ship.as_str(), hold.as_str()];
    sent.sort_unstable();
    assert_eq!(ids, sent);
    let got = call(&b, "GetTask", json!({"id": ship})).await;
    assert_eq!(got["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(got["history"][0]["messageId"], "m-ship", "the sender's id, kept on a");
    let config = json!({"taskId": ship, "url": format!("{}/hook", hook.url()), "token": "tok-b"});
    let set = call(&b, "CreateTaskPushNotificationConfig", config).await;
    let config_id = set["id"].as_str().unwrap().to_string();
    let answer = json!({"message": {"messageId": "m-yes", "taskId": ship, "parts": [
        {"text": "For context:"}, {"text": "[approver] said: Ship it? Answer yes or no."}, {"text": "yes"}]}});
    let done = call(&b, "SendMessage", answer).await;
    assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{done}\n{}", b.log());
    let summary = "Shipped: v2 notes | For context:\n[approver] said: Ship it? Answer yes or no.\n";
    assert_eq!(files(&done["task"]), [("out/summary.md".to_string(), base64(summary.as_bytes()))]);
    assert!(!dir_a.join("state/runs").join(&ship).join("work/out").exists(), "b ran the answer");
    // b follows the task it was given a webhook for: its end is pushed.
    let pushed = wait_until(Duration::from_secs(30), || async {
        hook.requests().into_iter().find(|r| r.body["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED")
    })
    .await;
    assert_eq!(pushed.header("x-a2a-notification-token"), Some("tok-b"));
    let cancelled = call(&b, "CancelTask", json!({"id": hold})).await;
    assert_eq!(cancelled["status"]["state"], "TASK_STATE_CANCELED");
    drop(b);

    let a = replica(&dir_a, &mock, &db, "a").await;
    let got = call(&a, "GetTask", json!({"id": ship})).await;
    assert_eq!(files(&got), [("out/summary.md".to_string(), base64(summary.as_bytes()))], "from the journal");
    let ids: Vec<&str> = got["history"].as_array().unwrap().iter().map(|m| m["messageId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["m-ship", "m-yes"]);
    let config = call(&a, "GetTaskPushNotificationConfig", json!({"taskId": ship, "id": config_id})).await;
    assert_eq!(config["token"], "tok-b");
    assert_eq!(call(&a, "GetTask", json!({"id": hold})).await["status"]["state"], "TASK_STATE_CANCELED");
    // The database holds the record and the file's bytes; no replica keeps a2a.json.
    let (client, connection) = tokio_postgres::connect(&db.url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let kept: i64 = client.query_one("SELECT COUNT(*) FROM a2a_files", &[]).await.unwrap().get(0);
    assert_eq!(kept, 2, "each task's notes");
    for dir in [&dir_a, &dir_b] {
        assert!(!dir.join("state/runs").join(&ship).join("a2a.json").exists());
    }
}
