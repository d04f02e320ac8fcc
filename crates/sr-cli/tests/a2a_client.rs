//! `.sr` agents calling remote A2A agents (`tool x = a2a "CARD_URL"`) with
//! `sr run`: a sample agent written with the official Python SDK (`a2a-sdk`
//! 1.3.0 and uvicorn, in the venv `.ci/setup` makes; skipped loudly without
//! it, failed in CI; it streams, so its updates are events), and the reverse:
//! one `sr serve` called from `sr run`, and from another `sr serve`.
//! The model is sr-llm's mock; the recording of each run replays with the
//! remote gone and no model, and holds no key.
#![allow(clippy::unwrap_used)]

mod serving;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::{Value, json};
use serving::{Serve, temp};
use sr_llm::mock::{MockReply, MockServer};

const REMOTE_KEY: &str = "remote-key-5a1b2c3d4e";

/// An agent that asks the remote agent `reviewer` at `card` for a review.
fn caller(card: &str) -> String {
    format!(
        "model main = openai/gpt-4o-mini\n\
         tool reviewer = a2a \"{card}\" with auth bearer \"${{env:REVIEWER_KEY}}\"\n\
         prompt ask: \"\"\"Have the user's change reviewed by the reviewer, then report what it said.\"\"\"\n\
         agent:\n    instruction ask\n    use reviewer\n"
    )
}

fn venv_python() -> PathBuf {
    sr_testing::a2a_venv().join("bin/python")
}

/// The sample server, killed when dropped.
struct Sample(Child);

impl Drop for Sample {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `tests/a2a/sample_server.py`; its base URL.
fn sample(python: &Path) -> (Sample, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/a2a/sample_server.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg(REMOTE_KEY)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let base = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("the sample server said {line:?}"));
    (Sample(child), base.to_string())
}

/// `sr run agent.sr --prompt PROMPT ARGS` in `dir` (off the async runtime,
/// where the mock model answers), the model the mock (when given), the key set.
async fn sr_run(dir: &Path, mock: Option<&MockServer>, prompt: &str, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sr"));
    command
        .args(["run", "agent.sr", "--events", "jsonl", "--state-dir", "run-state", "--prompt", prompt])
        .args(args)
        .current_dir(dir)
        .env("REVIEWER_KEY", REMOTE_KEY)
        .env("NO_COLOR", "1");
    if let Some(mock) = mock {
        command.env("OPENAI_BASE_URL", format!("{}/v1", mock.url())).env("OPENAI_API_KEY", "mock-key-12345");
    }
    tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
}

/// The tool results of a run's JSONL events: (result, is_error).
fn tool_results(stdout: &[u8]) -> Vec<(Value, bool)> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "tool_result")
        .map(|event| (event["result"].clone(), event["is_error"].as_bool().unwrap_or(false)))
        .collect()
}

/// The `remote_update` events among `events`: "state: text", and whether
/// they are all of one task.
fn remote_updates(events: &[Value]) -> (Vec<String>, bool) {
    let updates: Vec<&Value> = events.iter().filter(|e| e["type"] == "remote_update").collect();
    let one_task = updates.windows(2).all(|w| w[0]["task_id"] == w[1]["task_id"] && w[0]["task_id"] != "");
    let shown = updates
        .iter()
        .map(|u| {
            assert_eq!(u["tool"], "reviewer", "{u}");
            format!("{}: {}", u["state"].as_str().unwrap(), u["text"].as_str().unwrap())
        })
        .collect();
    (shown, one_task)
}

/// The run's events without what differs between a live run and its replay.
fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|mut event| {
            if let Some(object) = event.as_object_mut() {
                object
                    .retain(|key, _| !matches!(key.as_str(), "timestamp" | "session_id" | "invocation_id" | "run_id"));
            }
            event
        })
        .collect()
}

/// The venv's Python when it has the SDK and uvicorn; `None` (skipped loudly,
/// failed in CI) otherwise.
fn sdk_python() -> Option<PathBuf> {
    let python = venv_python();
    let has_sdk = Command::new(&python)
        .args(["-c", "import a2a.server.routes, uvicorn"])
        .output()
        .is_ok_and(|o| o.status.success());
    sr_testing::required(has_sdk, &format!("a2a-sdk and uvicorn in {} (run .ci/setup)", python.display()))
        .then_some(python)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_uses_a_python_sdk_agent_and_the_replay_needs_neither_it_nor_the_model() {
    let Some(python) = sdk_python() else { return };
    let (server, base) = sample(&python);
    let dir = temp("a2a-client-py", &[("agent.sr", &caller(&format!("{base}/.well-known/agent-card.json")))]);
    let mock = MockServer::start().await;
    mock.push(MockReply::tool_call("c1", "reviewer", json!({"request": "fn main() {}"})));
    mock.push(MockReply::text("The reviewer says: reviewed."));
    let live = sr_run(&dir, Some(&mock), "please review: fn main() {}", &["--record", "rec.jsonl"]).await;
    assert!(live.status.success(), "{}", String::from_utf8_lossy(&live.stderr));
    // The remote's artifacts (a text part, a data part as JSON) reached the agent, and its model.
    let answer = json!("reviewed: fn main() {}\n{\"words\":3.0}");
    assert_eq!(tool_results(&live.stdout), [(answer.clone(), false)]);
    let second = serde_json::to_string(&mock.requests()[1].body).unwrap();
    assert!(second.contains("reviewed: fn main() {}"), "{second}");
    // The sample's card says it streams: its updates were events while the call ran.
    let expected = [
        "submitted: ",
        "working: reading it",
        "working: reviewed: fn main() {}",
        "working: {\"words\":3.0}",
        "completed: ",
    ];
    assert_eq!(remote_updates(&events(&live.stdout)), (expected.map(String::from).to_vec(), true));

    // The remote and the model gone, the replay gives the same events.
    drop(server);
    let recording = std::fs::read_to_string(dir.join("rec.jsonl")).unwrap();
    assert!(!recording.contains(REMOTE_KEY), "the key is in the recording");
    assert!(!String::from_utf8_lossy(&live.stdout).contains(REMOTE_KEY), "the key is in the events");
    let replay = sr_run(&dir, None, "please review: fn main() {}", &["--replay", "rec.jsonl"]).await;
    assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stderr));
    assert_eq!(tool_results(&replay.stdout), [(answer, false)]);
    assert_eq!(events(&replay.stdout), events(&live.stdout));

    // Live again with the remote gone: a tool error the model sees, not a failed run.
    mock.push(MockReply::tool_call("c2", "reviewer", json!({"request": "again"})));
    mock.push(MockReply::text("The reviewer is away."));
    let away = sr_run(&dir, Some(&mock), "again", &[]).await;
    assert!(away.status.success(), "{}", String::from_utf8_lossy(&away.stderr));
    let results = tool_results(&away.stdout);
    assert!(results[0].1 && results[0].0.as_str().unwrap().contains("cannot reach the remote agent"), "{results:?}");
}

/// A served workload: greets whoever it is sent.
const GREETER: &str = include_str!("fixtures/greeter.sr");

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_run_by_sr_run_calls_a_workload_served_by_sr_serve() {
    let dir = temp("a2a-client-serve", &[("greeter.sr", GREETER), ("keys", REMOTE_KEY)]);
    let mock = MockServer::start().await;
    // In the order they are asked: the caller's model, the served run's, the caller's again.
    mock.push(MockReply::tool_call("c1", "reviewer", json!({"request": "Ada"})));
    mock.push(MockReply::text("Hello, Ada."));
    mock.push(MockReply::text("The greeter said hello."));
    let serve = Serve::start(&dir, &mock, &["greeter.sr", "--api-key-file", "keys"]).await;
    std::fs::write(dir.join("agent.sr"), caller(&format!("{}/.well-known/agent-card.json", serve.base()))).unwrap();
    let out = sr_run(&dir, Some(&mock), "greet Ada", &[]).await;
    assert!(out.status.success(), "{}\n--- sr serve ---\n{}", String::from_utf8_lossy(&out.stderr), serve.log());
    assert_eq!(tool_results(&out.stdout), [(json!("Hello, Ada."), false)], "{}", serve.log());
    // The served run got the request as its message.
    let served = serde_json::to_string(&mock.requests()[1].body).unwrap();
    assert!(served.contains("Greet Ada."), "{served}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_of_one_sr_serve_calls_a_workload_of_another_and_shows_its_updates() {
    let mock = MockServer::start().await;
    // In the order they are asked: B's model, A's run's, B's again.
    mock.push(MockReply::tool_call("c1", "reviewer", json!({"request": "Ada"})));
    mock.push(MockReply::text("Hello, Ada."));
    mock.push(MockReply::text("The greeter said hello."));
    let dir_a = temp("a2a-serve-a", &[("greeter.sr", GREETER), ("keys", REMOTE_KEY)]);
    let a = Serve::start(&dir_a, &mock, &["greeter.sr", "--api-key-file", "keys"]).await;
    let dir_b = temp("a2a-serve-b", &[("agent.sr", &caller(&format!("{}/.well-known/agent-card.json", a.base())))]);
    let b = Serve::start_with(&dir_b, &mock, &["agent.sr"], &[("REVIEWER_KEY", REMOTE_KEY)]).await;

    let (status, run) = b.post("/v1/runs", json!({"workload": "agent", "prompt": "greet Ada", "wait": true})).await;
    let logs = || format!("--- A ---\n{}\n--- B ---\n{}", a.log(), b.log());
    assert_eq!((status, &run["status"]), (200, &json!("done")), "{run}\n{}", logs());
    let id = run["id"].as_str().unwrap();
    let events: Vec<Value> =
        serving::events_of(&b.get_text(&format!("/v1/runs/{id}/events")).await).into_iter().map(|(_, e)| e).collect();
    // A's answer is B's tool result, and what B's model was told.
    let results: Vec<&Value> = events.iter().filter(|e| e["type"] == "tool_result").collect();
    assert_eq!((&results[0]["result"], &results[0]["is_error"]), (&json!("Hello, Ada."), &json!(false)), "{}", logs());
    let told = serde_json::to_string(&mock.requests()[2].body).unwrap();
    assert!(told.contains("Hello, Ada."), "{told}");
    // A's task streamed to B: each of its changes is an event of B's run.
    let (updates, one_task) = remote_updates(&events);
    assert!(one_task, "{updates:?}");
    assert_eq!(updates.first().map(String::as_str), Some("submitted: "), "{updates:?}");
    assert_eq!(updates[updates.len() - 2..], ["working: Hello, Ada.", "completed: "], "{updates:?}");
    // The task B followed is A's run, done with that answer.
    let task = events.iter().find(|e| e["type"] == "remote_update").unwrap()["task_id"].as_str().unwrap().to_string();
    let (status, served) = a.get_keyed(&format!("/v1/runs/{task}"), Some(REMOTE_KEY)).await;
    assert_eq!((status, &served["result"]), (200, &json!("Hello, Ada.")), "{served}");
    // B's graph for clients draws the remote agent as such, used by B's agent.
    let graph = b.get("/v1/workloads").await.1["workloads"][0]["graph"].clone();
    let remote = json!({"id": "remote_agent reviewer", "kind": "remote_agent", "label": "reviewer"});
    assert!(graph["nodes"].as_array().unwrap().contains(&remote), "{graph}");
    let used =
        graph["edges"].as_array().unwrap().iter().any(|e| e["to"] == "remote_agent reviewer" && e["kind"] == "use");
    assert!(used, "{graph}");
}

/// `sr serve` killed (`kill -9`) while a streamed call runs: after the
/// restart its stored events hold each update once (the journal had them, so
/// the replay that the dispatcher skips emits them again), and the call,
/// which is not idempotent, is in doubt: its question is an event too.
#[tokio::test(flavor = "multi_thread")]
async fn sr_serve_killed_during_a_streamed_call_keeps_each_update_once_and_asks_about_the_call() {
    let Some(python) = sdk_python() else { return };
    let (_server, base) = sample(&python);
    let mock = MockServer::start().await;
    mock.push(MockReply::tool_call("c1", "reviewer", json!({"request": "slow: fn main() {}"})));
    let dir = temp("a2a-serve-killed", &[("agent.sr", &caller(&format!("{base}/.well-known/agent-card.json")))]);
    let env = [("REVIEWER_KEY", REMOTE_KEY)];
    let mut serve = Serve::start_with(&dir, &mock, &["agent.sr"], &env).await;
    let (status, run) = serve.post("/v1/runs", json!({"workload": "agent", "prompt": "review it"})).await;
    assert_eq!(status, 202, "{run}");
    let id = run["id"].as_str().unwrap().to_string();
    let path = format!("/v1/runs/{id}/events");
    let states = |events: &[(u64, Value)]| -> Vec<String> {
        let updates = events.iter().filter(|(_, e)| e["type"] == "remote_update");
        updates.map(|(_, e)| e["state"].as_str().unwrap().to_string()).collect()
    };
    serving::wait_until(std::time::Duration::from_secs(60), || async {
        let events = serving::events_of(&serve.get_text_for(&path, std::time::Duration::from_millis(300)).await);
        states(&events).contains(&"working".to_string()).then_some(())
    })
    .await;
    serve.signal(libc::SIGKILL);
    serve.wait_exit(std::time::Duration::from_secs(10));

    let serve = Serve::start_with(&dir, &mock, &["agent.sr"], &env).await;
    let events = serving::wait_until(std::time::Duration::from_secs(60), || async {
        let events = serving::events_of(&serve.get_text_for(&path, std::time::Duration::from_millis(300)).await);
        events.iter().any(|(_, e)| e["type"] == "tool_in_doubt").then_some(events)
    })
    .await;
    let ids: Vec<u64> = events.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, (1..=events.len() as u64).collect::<Vec<_>>(), "no gap, no duplicate");
    assert_eq!(states(&events), ["submitted", "working"], "{events:?}\n{}", serve.log());
    let kinds: Vec<&str> = events.iter().map(|(_, e)| e["type"].as_str().unwrap()).collect();
    let asked = kinds.iter().position(|k| *k == "tool_in_doubt").unwrap();
    assert_eq!(kinds[asked - 3..=asked], ["tool_call", "remote_update", "remote_update", "tool_in_doubt"], "{kinds:?}");
    assert_eq!(serve.get(&format!("/v1/runs/{id}")).await.1["status"], "in_doubt");
}
