//! `sr serve` killed (`kill -9`) during a tool call: after a restart, a call
//! of a tool that is not idempotent puts the run `in_doubt` with its question
//! (tool, arguments, idempotency key) until `/input` decides; a call of a tool
//! declared idempotent is made again at once. The tool is an MCP server
//! (`serving/charge_mcp.py`) that notes the idempotency key of each call in a
//! file outside the work directory. The same on the embedded store and on
//! PostgreSQL (`sr_testing::postgres`).
#![allow(clippy::unwrap_used)]

mod serving;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use serving::{Serve, events_of, temp, wait_until};
use sr_llm::mock::{MockReply, MockServer};
use sr_testing::postgres::Postgres;

/// An agent with one tool, `pay__charge`; `option` is the MCP tool's `with` clause.
fn workload(log: &Path, option: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/serving/charge_mcp.py");
    format!(
        "model main = openai/gpt-4o-mini\n\
         tool pay = mcp \"stdio:python3 '{}' '{}'\"{option}\n\
         prompt helper: \"\"\"You charge cards.\"\"\"\n\
         agent:\n    instruction helper\n    tools pay\n",
        script.display(),
        log.display()
    )
}

/// Where the runs live: the embedded store, or a PostgreSQL server.
enum Store {
    Embedded,
    Postgres(Postgres),
}

impl Store {
    async fn serve(&self, dir: &Path, mock: &MockServer, replica: &str) -> Serve {
        match self {
            Store::Embedded => Serve::start(dir, mock, &["w.sr"]).await,
            Store::Postgres(db) => {
                let url = db.url();
                Serve::start(dir, mock, &["w.sr", "--database-url", &url, "--replica-id", replica, "--lease-secs", "2"])
                    .await
            }
        }
    }
}

/// The keys the tool was called with, one per execution.
fn executions(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log).unwrap_or_default().lines().map(str::to_string).collect()
}

/// Starts a run whose model calls `pay__charge`, kills the server once the
/// tool has taken effect (it answers a minute later), and starts it again:
/// (the new server, the run's id, the state directory's journals of its session).
async fn killed_mid_call(store: &Store, name: &str, option: &str) -> (Serve, String, PathBuf, MockServer, PathBuf) {
    let dir = temp(name, &[]);
    // Outside the work directory (state/runs/ID/work) and the state.
    let log = dir.join("charges.log");
    std::fs::write(dir.join("w.sr"), workload(&log, option)).unwrap();
    let mock = MockServer::start().await;
    mock.push(MockReply::tool_call("c1", "pay__charge", json!({"cents": 500})));
    let mut serve = store.serve(&dir, &mock, "a").await;
    let run = serve.post("/v1/runs", json!({"workload": "w", "prompt": "charge 5 dollars"})).await;
    assert_eq!(run.0, 202, "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    wait_until(Duration::from_secs(60), || async { (executions(&log).len() == 1).then_some(()) }).await;
    serve.signal(libc::SIGKILL);
    serve.wait_exit(Duration::from_secs(10));
    let serve = store.serve(&dir, &mock, "b").await;
    (serve, id, log, mock, dir)
}

async fn status_of(serve: &Serve, id: &str, status: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let run = serve.get(&format!("/v1/runs/{id}")).await.1;
        if run["status"] == status {
            return run;
        }
        assert!(std::time::Instant::now() < deadline, "not {status} but {run}: {}", serve.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// No step of the run's journals completed twice: each (thread, effect)
/// has at most one `tool` and one `llm` line in the last attempt's journal,
/// which holds what every attempt did.
fn assert_no_step_completed_twice(dir: &Path, session: &str) {
    let journals = dir.join("state/journal").join(session);
    let last = std::fs::read_dir(&journals)
        .unwrap()
        .map(|e| e.unwrap().path())
        .max_by_key(|p| p.file_stem().unwrap().to_str().unwrap().parse::<u32>().unwrap())
        .unwrap();
    let mut completed = std::collections::HashMap::new();
    for line in std::fs::read_to_string(&last).unwrap().lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        let kind = line["kind"].as_str().unwrap_or_default();
        if kind == "tool" || kind == "llm" {
            *completed.entry((kind.to_string(), line["at"].to_string(), line["n"].as_u64())).or_insert(0) += 1;
        }
    }
    assert!(!completed.is_empty());
    assert!(completed.values().all(|&n| n == 1), "a step completed twice: {completed:?}");
}

/// The whole story for `decision`: in doubt after the restart, the question
/// in the run and its events, the decision, and what it did.
async fn decided(store: Store, name: &str, decision: &str) {
    let (serve, id, log, mock, dir) = killed_mid_call(&store, name, "").await;
    let run = status_of(&serve, &id, "in_doubt").await;
    let key = executions(&log)[0].clone();
    assert!(key.contains(":main") && key.len() > 36, "the key names the run and the call: {key}");
    let question = json!({"tool": "pay__charge", "args": {"cents": 500}, "idempotency_key": key});
    assert_eq!(run["question"], question, "{run}");
    assert!(run["error"].as_str().unwrap().contains("decide retry, skip or fail"), "{run}");
    let events = events_of(&serve.get_text_for(&format!("/v1/runs/{id}/events"), Duration::from_millis(500)).await);
    let asked: Vec<&Value> = events.iter().map(|(_, e)| e).filter(|e| e["type"] == "tool_in_doubt").collect();
    assert_eq!(asked.len(), 1, "{events:?}");
    assert_eq!((&asked[0]["tool"], &asked[0]["idempotency_key"]), (&question["tool"], &question["idempotency_key"]));
    assert_eq!(mock.requests().len(), 1, "the model's tool call came from the journal");
    assert_eq!(executions(&log).len(), 1, "the tool ran again before anyone decided");

    // Bad decisions name the field; the run stays in doubt.
    for (body, field) in [
        (json!({"decision": "again"}), "decision: \"again\" is no decision"),
        (json!({"decision": 1}), "decision"),
        (json!({"text": "perhaps"}), "text: \"perhaps\" is no decision"),
        (json!({"decision": "retry", "text": "retry"}), "text, decision"),
        (json!({}), "text"),
    ] {
        let (status, error) = serve.post(&format!("/v1/runs/{id}/input"), body.clone()).await;
        assert_eq!(status, 400, "{body}: {error}");
        assert!(error["error"]["message"].as_str().unwrap().starts_with(field), "{body}: {error}");
    }
    assert_eq!(serve.get(&format!("/v1/runs/{id}")).await.1["status"], "in_doubt");

    mock.push(MockReply::text("The card was charged."));
    let answered = serve.post(&format!("/v1/runs/{id}/input"), json!({"decision": decision})).await;
    assert_eq!(answered.0, 202, "{}", answered.1);
    let ended = status_of(&serve, &id, if decision == "fail" { "failed" } else { "done" }).await;
    let calls = executions(&log);
    match decision {
        "retry" => {
            assert_eq!(calls, [key.clone(), key.clone()], "executed twice in all, with the same key");
            assert_eq!(ended["result"], "The card was charged.");
        }
        "skip" => {
            assert_eq!(calls, std::slice::from_ref(&key));
            let told = mock.requests()[1].body["messages"].to_string();
            assert!(told.contains("cut off when the run was interrupted"), "{told}");
        }
        _ => {
            assert_eq!(calls, std::slice::from_ref(&key));
            assert_eq!(mock.requests().len(), 1, "a failed run asked the model again");
            assert!(ended["error"].as_str().unwrap().contains("the decision was to fail the run"), "{ended}");
        }
    }
    let again = serve.post(&format!("/v1/runs/{id}/input"), json!({"decision": "retry"})).await;
    assert_eq!((again.0, again.1["error"]["code"].clone()), (409, json!("not_in_doubt")), "{}", again.1);
    let events = events_of(&serve.get_text(&format!("/v1/runs/{id}/events")).await);
    let ids: Vec<u64> = events.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, (1..=events.len() as u64).collect::<Vec<_>>(), "no gap, no duplicate");
    assert_eq!(events.iter().filter(|(_, e)| e["type"] == "tool_in_doubt").count(), 1, "asked once");
    // What the run did once decided reaches its stream: the call's result
    // (a retry's or a skip's), then the model's next request.
    let kinds: Vec<&str> = events.iter().map(|(_, e)| e["type"].as_str().unwrap()).collect();
    let stopped = kinds.iter().position(|k| *k == "run_finished").unwrap();
    let went_on = &kinds[stopped + 1..];
    if decision != "fail" {
        let result = went_on.iter().position(|k| *k == "tool_result");
        let request = went_on.iter().rposition(|k| *k == "model_request");
        assert!(result.is_some() && result < request, "{kinds:?}");
    }
    let (_, last) = events.last().unwrap();
    let said = if decision == "fail" { "failed" } else { "completed" };
    assert_eq!((&last["type"], &last["status"]), (&json!("run_finished"), &json!(said)), "{kinds:?}");
    assert_no_step_completed_twice(&dir, ended["session"].as_str().unwrap());
}

/// A tool declared idempotent is called again at once, with the same key.
async fn retried_at_once(store: Store, name: &str) {
    let (serve, id, log, mock, dir) = killed_mid_call(&store, name, " with idempotent \"true\"").await;
    mock.push(MockReply::text("The card was charged."));
    let ended = status_of(&serve, &id, "done").await;
    let calls = executions(&log);
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0], calls[1], "the same idempotency key");
    let events = events_of(&serve.get_text(&format!("/v1/runs/{id}/events")).await);
    assert!(events.iter().all(|(_, e)| e["type"] != "tool_in_doubt"), "{events:?}");
    assert_no_step_completed_twice(&dir, ended["session"].as_str().unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_mid_call_a_run_is_in_doubt_and_retry_executes_the_tool_once_more_with_its_key() {
    decided(Store::Embedded, "doubt-retry", "retry").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_mid_call_a_run_is_in_doubt_and_skip_tells_the_model() {
    decided(Store::Embedded, "doubt-skip", "skip").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_mid_call_a_run_is_in_doubt_and_fail_fails_it() {
    decided(Store::Embedded, "doubt-fail", "fail").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_mid_call_of_a_tool_declared_idempotent_a_run_calls_it_again_and_finishes() {
    retried_at_once(Store::Embedded, "doubt-idempotent").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_postgres_a_run_killed_mid_call_is_in_doubt_until_decided() {
    let Some(db) = sr_testing::postgres::start("in-doubt") else { return };
    decided(Store::Postgres(db), "pg-doubt-retry", "retry").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_postgres_a_tool_declared_idempotent_is_called_again_by_the_next_replica() {
    let Some(db) = sr_testing::postgres::start("idempotent") else { return };
    retried_at_once(Store::Postgres(db), "pg-doubt-idempotent").await;
}

/// An A2A client's view of the same story, in JSON-RPC as any client sends
/// it: the run in doubt is a task `input-required` whose status message is
/// the question; a message that is no decision is refused; `retry` sent in
/// the same task decides, and the task completes with the run's answer.
#[tokio::test(flavor = "multi_thread")]
async fn over_a2a_a_run_in_doubt_is_input_required_and_a_retry_in_the_task_completes_it() {
    let (serve, id, log, mock, dir) = killed_mid_call(&Store::Embedded, "doubt-a2a", "").await;
    status_of(&serve, &id, "in_doubt").await;
    let rpc = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let answer = |text: &str| json!({"message": {"messageId": format!("m-{text}"), "role": "ROLE_USER", "taskId": id, "parts": [{"text": text}]}});

    let (status, got) = serve.post("/a2a", rpc("GetTask", json!({"id": id}))).await;
    assert_eq!(status, 200, "{got}");
    let task = &got["result"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{got}");
    let question = task["status"]["message"]["parts"][0]["text"].as_str().unwrap();
    assert!(question.contains("pay__charge") && question.contains("decide retry, skip or fail"), "{question}");
    // 0.3's names and shapes say the same.
    let (_, old) = serve.post("/a2a", rpc("tasks/get", json!({"id": id}))).await;
    assert_eq!(old["result"]["status"]["state"], "input-required", "{old}");

    let (_, refused) = serve.post("/a2a", rpc("SendMessage", answer("perhaps"))).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(serve.get(&format!("/v1/runs/{id}")).await.1["status"], "in_doubt");
    assert_eq!(executions(&log).len(), 1, "a refused answer ran the tool");

    mock.push(MockReply::text("The card was charged."));
    let (status, sent) = serve.post("/a2a", rpc("SendMessage", answer("retry"))).await;
    assert_eq!(status, 200, "{sent}");
    let task = &sent["result"]["task"];
    assert_eq!((&task["id"], &task["status"]["state"]), (&json!(id), &json!("TASK_STATE_COMPLETED")), "{sent}");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "The card was charged.", "{sent}");
    let calls = executions(&log);
    assert_eq!(calls, [calls[0].clone(), calls[0].clone()], "retried once, with the same key");
    let ended = status_of(&serve, &id, "done").await;
    assert_no_step_completed_twice(&dir, ended["session"].as_str().unwrap());
}
