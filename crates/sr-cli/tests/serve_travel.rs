//! `sr serve`'s time travel and forks, black-box: a run whose model is
//! sr-llm's mock server is looked at as it was at its events
//! (`GET /v1/runs/ID/at/SEQ`) and forked (`POST /v1/runs/ID/fork`); the
//! mock's request log shows which model calls were made again (none before
//! the fork point) and which live.
#![allow(clippy::unwrap_used)]

mod serving;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use serving::{Serve, events_of, temp, wait_until};
use sr_llm::mock::{MockReply, MockServer};

/// A writer agent that writes a file, then two calls of the flow's own.
const NOTES: &str = r#"model main = openai/gpt-4o-mini
tool fs = builtin streetrace.fs
prompt write: """Write notes to notes.txt."""
prompt summarize: """Summarize: ${draft}"""
prompt title: """Title for: ${summary}"""
agent writer:
    instruction write
    tools fs

flow main:
    $draft = run agent writer with $input_prompt
    $summary = call llm summarize
    $title = call llm title
    return $title
"#;

fn script(mock: &MockServer) {
    mock.push(MockReply::tool_call("w1", "write_file", json!({"path": "notes.txt", "content": "first notes"})));
    mock.push(MockReply::text("wrote notes"));
    mock.push(MockReply::text("summary one"));
    mock.push(MockReply::text("title one"));
}

async fn finished_run(serve: &Serve) -> (String, Vec<(u64, Value)>) {
    let run = serve.post("/v1/runs", json!({"workload": "notes", "prompt": "go", "wait": true})).await;
    assert_eq!((run.0, run.1["status"].clone()), (200, json!("done")), "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    let events = events_of(&serve.get_text(&format!("/v1/runs/{id}/events")).await);
    (id, events)
}

/// The text deltas of each model call, joined, in order.
fn streamed(events: &[(u64, Value)]) -> Vec<String> {
    let mut calls = Vec::new();
    for (_, event) in events {
        match event["type"].as_str() {
            Some("model_request") => calls.push(String::new()),
            Some("text_delta") => calls.last_mut().unwrap().push_str(event["text"].as_str().unwrap()),
            _ => {}
        }
    }
    calls
}

/// The id of the `nth` (from 0) event of type `kind`.
fn seq_of(events: &[(u64, Value)], kind: &str, nth: usize) -> u64 {
    events.iter().filter(|(_, e)| e["type"] == kind).nth(nth).unwrap_or_else(|| panic!("no {kind} #{nth}")).0
}

fn main_vars(moment: &Value) -> Value {
    let scopes = moment["scopes"].as_array().unwrap();
    scopes.iter().find(|s| s["thread"] == "main").unwrap()["variables"].clone()
}

fn file_text(moment: &Value, path: &str) -> Option<String> {
    let entries = moment["files"]["entries"].as_array().unwrap();
    entries.iter().find(|e| e["path"] == path).map(|e| e["text"].as_str().unwrap().to_string())
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_finished_run_is_shown_as_it_was_at_each_event_without_a_model_call() {
    let dir = temp("travel-at", &[("notes.sr", NOTES)]);
    let mock = MockServer::start().await;
    script(&mock);
    let serve = Serve::start(&dir, &mock, &["notes.sr"]).await;
    let (id, events) = finished_run(&serve).await;
    assert_eq!(mock.requests().len(), 4);

    // Before the tool wrote it, notes.txt is not there; after, it is.
    let before = serve.get(&format!("/v1/runs/{id}/at/{}", seq_of(&events, "model_request", 0))).await;
    assert_eq!(before.0, 200, "{}", before.1);
    assert_eq!(before.1["status"], "running");
    assert_eq!(file_text(&before.1, "notes.txt"), None, "{}", before.1["files"]);
    let written = serve.get(&format!("/v1/runs/{id}/at/{}", seq_of(&events, "tool_result", 0))).await;
    assert_eq!(file_text(&written.1, "notes.txt").as_deref(), Some("first notes"), "{}", written.1);
    assert_eq!(main_vars(&written.1).get("draft"), None, "the writer has not answered yet");

    // The variables follow the run's assignments.
    let drafted = serve.get(&format!("/v1/runs/{id}/at/{}", seq_of(&events, "state_change", 0))).await;
    assert_eq!(main_vars(&drafted.1)["draft"], "wrote notes", "{}", drafted.1);
    assert_eq!(main_vars(&drafted.1).get("summary"), None);
    assert_eq!(drafted.1["point"]["thread"], "main");
    let last = events.last().unwrap().0;
    let end = serve.get(&format!("/v1/runs/{id}/at/{last}")).await;
    assert_eq!(end.1["status"], "done", "{}", end.1);
    assert_eq!(
        (main_vars(&end.1)["summary"].clone(), main_vars(&end.1)["title"].clone()),
        (json!("summary one"), json!("title one"))
    );

    // Every event can be looked at, and none made a model call.
    for (seq, _) in &events {
        let at = serve.get(&format!("/v1/runs/{id}/at/{seq}")).await;
        assert_eq!(at.0, 200, "event {seq}: {}", at.1);
        assert_eq!(at.1["at"], json!(seq));
    }
    assert_eq!(mock.requests().len(), 4, "travelling made no model call");
    assert!(
        !dir.join("state/travel").read_dir().is_ok_and(|mut d| d.next().is_some()),
        "scratch directories are removed"
    );

    // Errors name what is wrong.
    let unknown = serve.get("/v1/runs/nope/at/1").await;
    assert_eq!(unknown.0, 404, "{}", unknown.1);
    for bad in [0, last + 1, u64::MAX] {
        let beyond = serve.get(&format!("/v1/runs/{id}/at/{bad}")).await;
        assert_eq!(beyond.0, 400, "{}", beyond.1);
        let message = beyond.1["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("seq: the run's events are 1 to {last}")), "{message}");
    }
    let long = "9".repeat(5000);
    for word in ["first", "-1", "1.5", "18446744073709551616", "%00", long.as_str()] {
        let refused = serve.get(&format!("/v1/runs/{id}/at/{word}")).await;
        assert_eq!(refused.0, 400, "{word}: {}", refused.1);
        let message = refused.1["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("seq: ") && message.ends_with("is not an event id"), "{message}");
    }

    // A run still running is refused.
    mock.push(MockReply::text("slow").delay(Duration::from_secs(3)));
    let running = serve.post("/v1/runs", json!({"workload": "notes", "prompt": "go"})).await;
    let running = running.1["id"].as_str().unwrap().to_string();
    wait_until(Duration::from_secs(20), || async {
        let run = serve.get(&format!("/v1/runs/{running}")).await;
        (run.1["status"] == "running").then_some(())
    })
    .await;
    let busy = serve.get(&format!("/v1/runs/{running}/at/1")).await;
    assert_eq!((busy.0, busy.1["error"]["code"].clone()), (409, json!("run_active")), "{}", busy.1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_replays_up_to_its_event_then_goes_live_and_leaves_the_original_alone() {
    let dir = temp("travel-fork", &[("notes.sr", NOTES)]);
    let mock = MockServer::start().await;
    script(&mock);
    let serve = Serve::start(&dir, &mock, &["notes.sr"]).await;
    let (id, events) = finished_run(&serve).await;
    let original = serve.get(&format!("/v1/runs/{id}")).await.1;
    let journals = dir.join("state/journal").join(original["session"].as_str().unwrap());
    let work = dir.join("state/runs").join(&id);
    let kept = (snapshot(&journals), snapshot(&work));
    assert!(!kept.0.is_empty() && !kept.1.is_empty());

    // Fork at the summary's reply, replacing it: the writer's two calls and
    // its tool are served, the summary is injected, the title is asked live.
    let at = seq_of(&events, "model_response", 2);
    mock.push(MockReply::text("title two"));
    let fork = serve.post(&format!("/v1/runs/{id}/fork"), json!({"at": at, "reply": "injected summary"})).await;
    assert_eq!(fork.0, 202, "{}", fork.1);
    assert_ne!(fork.1["session"], original["session"], "a fork gets a session of its own");
    let fork_id = fork.1["id"].as_str().unwrap().to_string();
    let ended = done(&serve, &fork_id).await;
    assert_eq!(ended["result"], "title two", "{ended}");
    // The fork says what it was forked from, on its own and in the runs list; the original says nothing.
    let origin = json!({"run": id, "at": at, "reply": "injected summary"});
    assert_eq!(fork.1["forked_from"], origin);
    assert_eq!(ended["forked_from"], origin, "{ended}");
    let listed = serve.get("/v1/runs").await.1;
    let listed = |run: &str| listed["runs"].as_array().unwrap().iter().find(|r| r["id"] == run).unwrap().clone();
    assert_eq!(listed(&fork_id)["forked_from"], origin);
    assert_eq!((listed(&id).get("forked_from"), original.get("forked_from")), (None, None));
    let requests = mock.requests();
    assert_eq!(requests.len(), 5, "one live call, the title; nothing before the fork point was asked again");
    assert!(requests[4].body.to_string().contains("Title for: injected summary"), "{}", requests[4].body);
    let fork_events = events_of(&serve.get_text(&format!("/v1/runs/{fork_id}/events")).await);
    let replies: Vec<&Value> =
        fork_events.iter().filter(|(_, e)| e["type"] == "model_response").map(|(_, e)| &e["text"]).collect();
    assert_eq!(replies, [&json!(""), &json!("wrote notes"), &json!("injected summary"), &json!("title two")]);
    // Each call streams the text it answers with: the replaced reply is never streamed.
    assert_eq!(streamed(&events), ["", "wrote notes", "summary one", "title one"]);
    assert_eq!(streamed(&fork_events), ["", "wrote notes", "injected summary", "title two"]);
    // The fork's work directory got the served tool's file.
    let fork_notes = dir.join("state/runs").join(&fork_id).join("work/notes.txt");
    assert_eq!(std::fs::read_to_string(fork_notes).unwrap(), "first notes");

    // Fork after the summary's assignment with the variable edited.
    let assigned = seq_of(&events, "state_change", 1);
    mock.push(MockReply::text("title three"));
    let edited =
        serve.post(&format!("/v1/runs/{id}/fork"), json!({"at": assigned, "set": {"summary": "edited"}})).await;
    assert_eq!(edited.0, 202, "{}", edited.1);
    let ended = done(&serve, edited.1["id"].as_str().unwrap()).await;
    assert_eq!(ended["result"], "title three", "{ended}");
    assert_eq!(ended["forked_from"], json!({"run": id, "at": assigned, "set": {"summary": "edited"}}));
    let requests = mock.requests();
    assert_eq!(requests.len(), 6);
    assert!(requests[5].body.to_string().contains("Title for: edited"), "{}", requests[5].body);

    // Bad forks name the field at fault and queue nothing.
    let bad = [
        (json!({"at": 1, "reply": "x"}), "reply: event 1 is a run_started event"),
        (json!({"at": assigned, "set": {"nope": 1}}), "set.nope: there is no variable $nope at event"),
        (json!({"at": events.len() + 1}), "at: the run's events are 1 to"),
        (json!({"at": 1, "colour": "red"}), "unknown field `colour`"),
        (json!({"reply": "x"}), "missing field `at`"),
    ];
    for (body, expected) in bad {
        let refused = serve.post(&format!("/v1/runs/{id}/fork"), body.clone()).await;
        assert_eq!(refused.0, 400, "{body}: {}", refused.1);
        let message = refused.1["error"]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{body}: {message}");
    }
    let unknown = serve.post("/v1/runs/nope/fork", json!({"at": 1})).await;
    assert_eq!(unknown.0, 404);
    assert_eq!(mock.requests().len(), 6);

    // The original's journal and work directory are byte for byte as they were.
    assert_eq!((snapshot(&journals), snapshot(&work)), kept);
    assert_eq!(serve.get(&format!("/v1/runs/{id}")).await.1, original);
}

/// A fork with an edited variable, killed (`kill -9`) during its first live
/// call and resumed by the next server, still sends the edited value: the
/// edit is not in the fork's journal, so it is made again.
#[tokio::test(flavor = "multi_thread")]
async fn a_fork_killed_mid_run_resumes_with_its_edit() {
    let dir = temp("travel-fork-kill", &[("notes.sr", NOTES)]);
    let mock = MockServer::start().await;
    script(&mock);
    let mut serve = Serve::start(&dir, &mock, &["notes.sr"]).await;
    let (id, events) = finished_run(&serve).await;
    let assigned = seq_of(&events, "state_change", 1);
    mock.push(MockReply::text("never sent").delay(Duration::from_secs(120)));
    let edited =
        serve.post(&format!("/v1/runs/{id}/fork"), json!({"at": assigned, "set": {"summary": "edited"}})).await;
    assert_eq!(edited.0, 202, "{}", edited.1);
    let fork_id = edited.1["id"].as_str().unwrap().to_string();
    wait_until(Duration::from_secs(30), || async { (mock.requests().len() == 5).then_some(()) }).await;
    serve.signal(libc::SIGKILL);
    serve.wait_exit(Duration::from_secs(10));

    mock.push(MockReply::text("title again"));
    let serve = Serve::start(&dir, &mock, &["notes.sr"]).await;
    let ended = done(&serve, &fork_id).await;
    assert_eq!(ended["result"], "title again", "{ended}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 6, "only the interrupted call is made again");
    for request in &requests[4..] {
        assert!(request.body.to_string().contains("Title for: edited"), "{}", request.body);
    }
}

/// A flow that asks a human between two model calls.
const PAUSING: &str = include_str!("fixtures/pausing.sr");

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_run_travels_too_and_its_fork_is_given_the_answer_again() {
    let dir = temp("travel-paused", &[("approve.sr", PAUSING)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::chunks(["Dear ", "Ada."]));
    mock.push(MockReply::text("Polished."));
    let serve = Serve::start(&dir, &mock, &["approve.sr"]).await;
    let run = serve.post("/v1/runs", json!({"workload": "approve", "prompt": "Ada", "wait": true})).await;
    assert_eq!(run.1["status"], "paused", "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    let paused = events_of(&serve.get_text_for(&format!("/v1/runs/{id}/events"), Duration::from_millis(500)).await);
    let asked = seq_of(&paused, "human_input_requested", 0);
    for seq in [asked, paused.last().unwrap().0] {
        let at = serve.get(&format!("/v1/runs/{id}/at/{seq}")).await;
        assert_eq!((at.0, at.1["status"].clone()), (200, json!("paused")), "{seq}: {}", at.1);
        assert_eq!(main_vars(&at.1)["draft"], "Dear Ada.");
    }

    // Answered, it goes on; the pause in the middle of its events is still `paused`.
    assert_eq!(serve.post(&format!("/v1/runs/{id}/input"), json!({"text": "ship it"})).await.0, 202);
    let ended = done(&serve, &id).await;
    assert_eq!(ended["result"], "Polished.");
    let events = events_of(&serve.get_text(&format!("/v1/runs/{id}/events")).await);
    let middle = seq_of(&events, "run_finished", 0);
    let at_pause = serve.get(&format!("/v1/runs/{id}/at/{middle}")).await;
    assert_eq!(at_pause.1["status"], "paused", "{}", at_pause.1);
    let polished = serve.get(&format!("/v1/runs/{id}/at/{}", seq_of(&events, "model_request", 1))).await;
    assert_eq!(main_vars(&polished.1)["human_input"], "ship it", "{}", polished.1);
    for (seq, _) in &events {
        let at = serve.get(&format!("/v1/runs/{id}/at/{seq}")).await;
        assert_eq!(at.0, 200, "event {seq}: {}", at.1);
    }

    // A fork at the polish's request, its reply replaced: the draft and the answer are
    // replayed, the polish is not asked.
    let at = seq_of(&events, "model_request", 1);
    let fork = serve.post(&format!("/v1/runs/{id}/fork"), json!({"at": at, "reply": "Mine."})).await;
    assert_eq!(fork.0, 202, "{}", fork.1);
    let forked = done(&serve, fork.1["id"].as_str().unwrap()).await;
    assert_eq!(forked["result"], "Mine.", "{forked}");
    assert_eq!(mock.requests().len(), 2, "the fork made no model call");

    // A fork from the question of a run paused there waits for its own answer.
    mock.push(MockReply::text("Second draft."));
    let again = serve.post("/v1/runs", json!({"workload": "approve", "prompt": "Bo", "wait": true})).await;
    let again = again.1["id"].as_str().unwrap().to_string();
    let asked = events_of(&serve.get_text_for(&format!("/v1/runs/{again}/events"), Duration::from_millis(500)).await);
    let last = asked.last().unwrap().0;
    let fork = serve.post(&format!("/v1/runs/{again}/fork"), json!({"at": last})).await;
    assert_eq!(fork.0, 202, "{}", fork.1);
    let fork_id = fork.1["id"].as_str().unwrap().to_string();
    let waiting = wait_until(Duration::from_secs(30), || async {
        let run = serve.get(&format!("/v1/runs/{fork_id}")).await.1;
        (run["status"] == "paused").then_some(run)
    })
    .await;
    assert_eq!(waiting["status"], "paused");
    assert_eq!(mock.requests().len(), 3, "the fork replayed the draft");
}

async fn done(serve: &Serve, id: &str) -> Value {
    wait_until(Duration::from_secs(30), || async {
        let run = serve.get(&format!("/v1/runs/{id}")).await.1;
        matches!(run["status"].as_str(), Some("done" | "failed" | "cancelled")).then_some(run)
    })
    .await
}

/// Two questions: a writer agent files the approved draft between them.
const TWO_QUESTIONS: &str = r#"model main = openai/gpt-4o-mini
tool fs = builtin streetrace.fs
prompt draft_prompt: """Draft a reply to: ${input_prompt}"""
prompt file_prompt: """File the approved draft in reply.txt."""
prompt polish_prompt: """Polish this draft using the reviewer's note (${human_input}): ${draft}"""
agent filer:
    instruction file_prompt
    tools fs

flow main:
    $draft = call llm draft_prompt
    escalate to human "Approve the draft?"
    $filed = run agent filer with $human_input
    $final = call llm polish_prompt
    escalate to human "Send it?"
    return $final
"#;

/// Answers the paused run `id` with `text` and waits until it pauses again or ends.
async fn answer(serve: &Serve, id: &str, text: &str) -> Value {
    let answered = serve.post(&format!("/v1/runs/{id}/input"), json!({"text": text})).await;
    assert_eq!(answered.0, 202, "{}", answered.1);
    wait_until(Duration::from_secs(30), || async {
        let run = serve.get(&format!("/v1/runs/{id}")).await.1;
        matches!(run["status"].as_str(), Some("paused" | "done" | "failed" | "cancelled")).then_some(run)
    })
    .await
}

/// The `human_input` each `state_change` of the run's events gave it, in order.
fn answers_in(events: &[(u64, Value)]) -> Vec<Value> {
    let answers = events.iter().filter(|(_, e)| e["type"] == "state_change" && e["variable"] == "human_input");
    answers.map(|(_, e)| e["value"].clone()).collect()
}

/// A run answered twice through `/input`; a fork from after the first answer
/// is given that answer again (no pause, no model or tool call before its
/// point), asks the second question itself, and when answered, resumes past
/// the replayed question with its own answer. A fork from before the first
/// question asks it again.
#[tokio::test(flavor = "multi_thread")]
async fn forks_past_an_answered_question_replay_it_and_forks_before_it_ask_it_again() {
    let dir = temp("travel-answered", &[("approve.sr", TWO_QUESTIONS)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::text("Dear Ada."));
    mock.push(MockReply::tool_call("w1", "write_file", json!({"path": "reply.txt", "content": "Dear Ada."})));
    mock.push(MockReply::text("filed"));
    mock.push(MockReply::text("Polished."));
    let serve = Serve::start(&dir, &mock, &["approve.sr"]).await;
    let run = serve.post("/v1/runs", json!({"workload": "approve", "prompt": "Ada", "wait": true})).await;
    assert_eq!(run.1["status"], "paused", "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    assert_eq!(answer(&serve, &id, "ship it").await["status"], "paused");
    let ended = answer(&serve, &id, "send").await;
    assert_eq!((ended["status"].clone(), ended["result"].clone()), (json!("done"), json!("Polished.")), "{ended}");
    assert_eq!(mock.requests().len(), 4);
    let events = events_of(&serve.get_text(&format!("/v1/runs/{id}/events")).await);
    assert_eq!(answers_in(&events), [json!("ship it"), json!("send")]);

    // After the first answer: the answered value, the filed reply.
    let answered = serve.get(&format!("/v1/runs/{id}/at/{}", seq_of(&events, "state_change", 1))).await;
    assert_eq!(answered.0, 200, "{}", answered.1);
    assert_eq!(main_vars(&answered.1)["human_input"], "ship it", "{}", answered.1);
    assert_eq!(file_text(&answered.1, "reply.txt"), None);
    let filed = serve.get(&format!("/v1/runs/{id}/at/{}", seq_of(&events, "tool_result", 0))).await;
    assert_eq!(main_vars(&filed.1)["human_input"], "ship it", "{}", filed.1);
    assert_eq!(file_text(&filed.1, "reply.txt").as_deref(), Some("Dear Ada."), "{}", filed.1["files"]);
    let second = serve.get(&format!("/v1/runs/{id}/at/{}", seq_of(&events, "state_change", 4))).await;
    assert_eq!(main_vars(&second.1)["human_input"], "send", "{}", second.1);
    assert_eq!(mock.requests().len(), 4, "travelling made no model call");

    // A fork after the filer's tool result: the draft, the first answer and
    // the filer's call are served; the filer's last reply and the polish are
    // live; the second question is the fork's own.
    mock.push(MockReply::text("filed again"));
    mock.push(MockReply::text("Polished again."));
    let at = seq_of(&events, "tool_result", 0);
    let fork = serve.post(&format!("/v1/runs/{id}/fork"), json!({"at": at})).await;
    assert_eq!(fork.0, 202, "{}", fork.1);
    let fork_id = fork.1["id"].as_str().unwrap().to_string();
    let waiting = wait_until(Duration::from_secs(30), || async {
        let run = serve.get(&format!("/v1/runs/{fork_id}")).await.1;
        (run["status"] != "queued" && run["status"] != "running").then_some(run)
    })
    .await;
    assert_eq!(waiting["status"], "paused", "the fork asks the second question: {waiting}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 6, "two live calls, after the fork point");
    assert!(requests[5].body.to_string().contains("reviewer's note (ship it)"), "{}", requests[5].body);
    let fork_events =
        events_of(&serve.get_text_for(&format!("/v1/runs/{fork_id}/events"), Duration::from_millis(500)).await);
    assert_eq!(answers_in(&fork_events), [json!("ship it")], "the first question was answered from the journal");
    let fork_file = dir.join("state/runs").join(&fork_id).join("work/reply.txt");
    assert_eq!(std::fs::read_to_string(fork_file).unwrap(), "Dear Ada.");

    // Answered, the fork resumes from its own journal: the first question
    // keeps the original's answer, the second gets the fork's.
    let ended = answer(&serve, &fork_id, "hold it").await;
    assert_eq!(
        (ended["status"].clone(), ended["result"].clone()),
        (json!("done"), json!("Polished again.")),
        "{ended}"
    );
    assert_eq!(mock.requests().len(), 6, "the resumed fork made no model call");
    let fork_events = events_of(&serve.get_text(&format!("/v1/runs/{fork_id}/events")).await);
    assert_eq!(answers_in(&fork_events), [json!("ship it"), json!("hold it")]);
    // And the fork travels too: its first answer is the original's, its second its own.
    let end = serve.get(&format!("/v1/runs/{fork_id}/at/{}", fork_events.last().unwrap().0)).await;
    assert_eq!(end.0, 200, "{}", end.1);
    assert_eq!(main_vars(&end.1)["human_input"], "hold it", "{}", end.1);
    let first = fork_events.iter().find(|(_, e)| e["type"] == "state_change" && e["variable"] == "human_input");
    let early = serve.get(&format!("/v1/runs/{fork_id}/at/{}", first.unwrap().0)).await;
    assert_eq!(main_vars(&early.1)["human_input"], "ship it", "{}", early.1);

    // A fork from before the first question asks it again, live.
    let before = seq_of(&events, "model_response", 0);
    let fork = serve.post(&format!("/v1/runs/{id}/fork"), json!({"at": before, "reply": "Dear Bo."})).await;
    assert_eq!(fork.0, 202, "{}", fork.1);
    let fork_id = fork.1["id"].as_str().unwrap().to_string();
    let asked = wait_until(Duration::from_secs(30), || async {
        let run = serve.get(&format!("/v1/runs/{fork_id}")).await.1;
        (run["status"] != "queued" && run["status"] != "running").then_some(run)
    })
    .await;
    assert_eq!(asked["status"], "paused", "{asked}");
    assert_eq!(mock.requests().len(), 6, "the fork replaced the draft and asked before any call");
    let fork_events =
        events_of(&serve.get_text_for(&format!("/v1/runs/{fork_id}/events"), Duration::from_millis(500)).await);
    assert!(answers_in(&fork_events).is_empty(), "the original's answer is not given again");
    mock.push(MockReply::tool_call("w2", "write_file", json!({"path": "reply.txt", "content": "Dear Bo."})));
    mock.push(MockReply::text("filed Bo"));
    mock.push(MockReply::text("Polished Bo."));
    assert_eq!(answer(&serve, &fork_id, "fine").await["status"], "paused");
    let requests = mock.requests();
    assert_eq!(requests.len(), 9);
    assert!(requests[8].body.to_string().contains("reviewer's note (fine): Dear Bo."), "{}", requests[8].body);
    let ended = answer(&serve, &fork_id, "go").await;
    assert_eq!(ended["result"], "Polished Bo.", "{ended}");
    assert_eq!(mock.requests().len(), 9);
}

/// Two branches that each call the model, then a call that joins them.
const PARALLEL: &str = r#"model main = openai/gpt-4o-mini
prompt ask_a: """Topic A: ${input_prompt}"""
prompt ask_b: """Topic B: ${input_prompt}"""
prompt join: """Join: ${a} / ${b}"""
flow main:
    parallel do
        $a = call llm ask_a
        $b = call llm ask_b
    end
    $joined = call llm join
    return $joined
"#;

/// Every variable of every thread at the moment, by name.
fn all_vars(moment: &Value) -> serde_json::Map<String, Value> {
    let mut vars = serde_json::Map::new();
    for scope in moment["scopes"].as_array().unwrap() {
        for (name, value) in scope["variables"].as_object().unwrap() {
            vars.insert(name.clone(), value.clone());
        }
    }
    vars
}

/// Which call a model request is: a branch's (`A`, `B`) or the join (`J`).
fn asked(body: &Value) -> &'static str {
    let body = body.to_string();
    if body.contains("Topic A") {
        "A"
    } else if body.contains("Topic B") {
        "B"
    } else {
        "J"
    }
}

/// Looks at the run at every event: each variable (every reply is `value`) is
/// shown from its assignment's event on, and not before the reply it assigns
/// (the run goes on from a reply to its assignment with no step between, so
/// a moment at the reply may show it already). The assignments: (reply,
/// assignment, variable).
async fn assignments_shown_in_time(
    serve: &Serve,
    id: &str,
    events: &[(u64, Value)],
    value: &str,
) -> Vec<(u64, u64, String)> {
    let assigned: Vec<(u64, u64, String)> = events
        .iter()
        .filter(|(_, e)| e["type"] == "state_change")
        .map(|(seq, e)| {
            let reply =
                events.iter().rev().find(|(s, r)| s < seq && r["type"] == "model_response" && r["path"] == e["path"]);
            (reply.unwrap().0, *seq, e["variable"].as_str().unwrap().to_string())
        })
        .collect();
    for (seq, event) in events {
        let at = serve.get(&format!("/v1/runs/{id}/at/{seq}")).await;
        assert_eq!(at.0, 200, "event {seq} {event}: {}", at.1);
        let vars = all_vars(&at.1);
        let kind = &event["type"];
        for (reply, when, name) in &assigned {
            if when <= seq {
                assert_eq!(
                    vars.get(name),
                    Some(&json!(value)),
                    "event {seq} ({kind}): ${name} was assigned at {when}: {}",
                    at.1
                );
            } else if seq < reply {
                assert_eq!(vars.get(name), None, "event {seq} ({kind}): ${name} is replied at {reply}: {}", at.1);
            }
        }
    }
    assigned
}

/// A run whose `parallel` branches call the model: at every event, a
/// variable is shown once the event of its assignment is passed, and not
/// before; a fork from any model event of the branches or after the block
/// makes no call the original made before that event and ends as the
/// original did; a branch's reply replaced, the join is asked again with it.
#[tokio::test(flavor = "multi_thread")]
async fn parallel_branches_travel_and_fork() {
    let dir = temp("travel-parallel", &[("par.sr", PARALLEL)]);
    let mock = MockServer::start().await;
    // The mock answers in the order requests arrive, which the branches race
    // for: every call gets one reply, and the events tell the calls apart.
    let reply_text = "same";
    for _ in 0..3 {
        mock.push(MockReply::text(reply_text));
    }
    let serve = Serve::start(&dir, &mock, &["par.sr"]).await;
    let run = serve.post("/v1/runs", json!({"workload": "par", "prompt": "tea", "wait": true})).await;
    assert_eq!((run.1["status"].clone(), run.1["result"].clone()), (json!("done"), json!(reply_text)), "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    let events = events_of(&serve.get_text(&format!("/v1/runs/{id}/events")).await);
    assert_eq!(mock.requests().len(), 3);

    let assigned = assignments_shown_in_time(&serve, &id, &events, reply_text).await;
    let names: Vec<&str> = assigned.iter().map(|(_, _, n)| n.as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert_eq!(names[2], "joined", "{names:?}");
    assert_eq!(mock.requests().len(), 3, "travelling made no model call");

    // Which call each model event belongs to: its producer's (a branch's
    // events carry the branch in their path) is the one that assigns `a`, `b`
    // or `joined`.
    let assigns = |variable: &str| {
        events.iter().find(|(_, e)| e["type"] == "state_change" && e["variable"] == variable).unwrap().1["path"].clone()
    };
    let producers = [(assigns("a"), "A"), (assigns("b"), "B"), (assigns("joined"), "J")];
    let call_of: std::collections::HashMap<u64, &str> = events
        .iter()
        .filter(|(_, e)| matches!(e["type"].as_str(), Some("model_request" | "model_response")))
        .map(|(seq, e)| (*seq, producers.iter().find(|(path, _)| *path == e["path"]).unwrap().1))
        .collect();

    // Forks from every model event and from the join's assignment, nothing
    // replaced: live calls are only those the original asked after the event.
    let mut points: Vec<u64> = call_of.keys().copied().collect();
    points.sort();
    points.push(assigned[2].1);
    for at in points {
        let after: Vec<&str> = events
            .iter()
            .filter(|(seq, e)| *seq > at && e["type"] == "model_request")
            .map(|(seq, _)| call_of[seq])
            .collect();
        for _ in 0..3 {
            mock.push(MockReply::text(reply_text));
        }
        let before = mock.requests().len();
        let fork = serve.post(&format!("/v1/runs/{id}/fork"), json!({"at": at})).await;
        assert_eq!(fork.0, 202, "{at}: {}", fork.1);
        let ended = done(&serve, fork.1["id"].as_str().unwrap()).await;
        let made: Vec<&str> = mock.requests()[before..].iter().map(|r| asked(&r.body)).collect();
        assert_eq!(
            (ended["status"].clone(), ended["result"].clone()),
            (json!("done"), json!(reply_text)),
            "fork at {at}, live {made:?}: {ended}"
        );
        for call in &made {
            assert!(
                after.contains(call),
                "fork at {at} asked {call}, which the original asked before it (live {made:?})"
            );
        }
    }

    // A branch's reply replaced: the other branch is served, the join goes
    // live with the new value.
    let a_reply = events.iter().find(|(seq, e)| e["type"] == "model_response" && call_of.get(seq) == Some(&"A"));
    let a_reply = a_reply.unwrap().0;
    while mock.remaining() > 0 {
        serve.post("/v1/runs", json!({"workload": "par", "prompt": "drain", "wait": true})).await;
    }
    mock.push(MockReply::text("rejoined"));
    let before = mock.requests().len();
    let fork = serve.post(&format!("/v1/runs/{id}/fork"), json!({"at": a_reply, "reply": "edited"})).await;
    assert_eq!(fork.0, 202, "{}", fork.1);
    let ended = done(&serve, fork.1["id"].as_str().unwrap()).await;
    assert_eq!(ended["result"], "rejoined", "{ended}");
    let made = mock.requests()[before..].to_vec();
    assert_eq!(made.len(), 1, "only the join is asked");
    assert!(made[0].body.to_string().contains(&format!("Join: edited / {reply_text}")), "{}", made[0].body);
}

/// A fork past an answered question, killed (`kill -9`) during its first live
/// call, resumes at the next start from its own journal, which keeps the
/// answer it was given: the replayed question is not asked again.
#[tokio::test(flavor = "multi_thread")]
async fn a_fork_past_an_answer_killed_mid_run_resumes_with_the_answer() {
    let dir = temp("travel-answered-kill", &[("approve.sr", TWO_QUESTIONS)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::text("Dear Ada."));
    mock.push(MockReply::tool_call("w1", "write_file", json!({"path": "reply.txt", "content": "Dear Ada."})));
    mock.push(MockReply::text("filed"));
    mock.push(MockReply::text("Polished."));
    let mut serve = Serve::start(&dir, &mock, &["approve.sr"]).await;
    let run = serve.post("/v1/runs", json!({"workload": "approve", "prompt": "Ada", "wait": true})).await;
    let id = run.1["id"].as_str().unwrap().to_string();
    assert_eq!(answer(&serve, &id, "ship it").await["status"], "paused");
    assert_eq!(answer(&serve, &id, "send").await["status"], "done");
    let events = events_of(&serve.get_text(&format!("/v1/runs/{id}/events")).await);

    mock.push(MockReply::text("never sent").delay(Duration::from_secs(120)));
    let at = seq_of(&events, "tool_result", 0);
    let fork = serve.post(&format!("/v1/runs/{id}/fork"), json!({"at": at})).await;
    assert_eq!(fork.0, 202, "{}", fork.1);
    let fork_id = fork.1["id"].as_str().unwrap().to_string();
    wait_until(Duration::from_secs(30), || async { (mock.requests().len() == 5).then_some(()) }).await;
    serve.signal(libc::SIGKILL);
    serve.wait_exit(Duration::from_secs(10));

    mock.push(MockReply::text("filed again"));
    mock.push(MockReply::text("Polished again."));
    let serve = Serve::start(&dir, &mock, &["approve.sr"]).await;
    let waiting = wait_until(Duration::from_secs(30), || async {
        let run = serve.get(&format!("/v1/runs/{fork_id}")).await.1;
        (run["status"] != "queued" && run["status"] != "running").then_some(run)
    })
    .await;
    assert_eq!(waiting["status"], "paused", "{waiting}");
    assert_eq!(waiting["error"].as_str().map(|e| e.contains("Send it?")), Some(true), "{waiting}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 7, "the interrupted call again, then the polish");
    assert!(requests[6].body.to_string().contains("reviewer's note (ship it)"), "{}", requests[6].body);
    let ended = answer(&serve, &fork_id, "hold it").await;
    assert_eq!(ended["result"], "Polished again.", "{ended}");
}

/// Nested blocks in branches that run at once: the ids of their branches
/// depend on which block starts first.
const NESTED: &str = r#"model main = openai/gpt-4o-mini
prompt ask: """Topic: ${input_prompt}"""
flow main:
    parallel do
        parallel do
            $a = call llm ask
            $b = call llm ask
        end
        parallel do
            $c = call llm ask
            $d = call llm ask
        end
    end
    return $a
"#;

/// A run with nested `parallel` blocks is shown as it was at every event,
/// with no model call, in bounded time.
#[tokio::test(flavor = "multi_thread")]
async fn nested_parallel_blocks_travel() {
    let dir = temp("travel-nested", &[("nested.sr", NESTED)]);
    let mock = MockServer::start().await;
    for _ in 0..4 {
        mock.push(MockReply::text("same"));
    }
    let serve = Serve::start(&dir, &mock, &["nested.sr"]).await;
    let run = serve.post("/v1/runs", json!({"workload": "nested", "prompt": "tea", "wait": true})).await;
    assert_eq!(run.1["status"], "done", "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    let events = events_of(&serve.get_text(&format!("/v1/runs/{id}/events")).await);
    let started = std::time::Instant::now();
    let assigned = assignments_shown_in_time(&serve, &id, &events, "same").await;
    assert_eq!(assigned.len(), 4);
    assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
    assert_eq!(mock.requests().len(), 4, "travelling made no model call");

    // One name per thread: the threads the state view shows over the whole
    // run are those the events' paths name (`main`, `branch:N`), and a
    // branch listed at its assignment holds the variable under that name.
    let innermost = |event: &Value| {
        let path = event["path"].as_array().unwrap();
        path.iter().rev().find_map(|p| p.as_str().filter(|p| p.starts_with("branch:"))).unwrap_or("main").to_string()
    };
    let in_events: std::collections::BTreeSet<String> = events.iter().map(|(_, e)| innermost(e)).collect();
    let mut in_state = std::collections::BTreeSet::new();
    for (seq, event) in &events {
        let at = serve.get(&format!("/v1/runs/{id}/at/{seq}")).await.1;
        for scope in at["scopes"].as_array().unwrap() {
            in_state.insert(scope["thread"].as_str().unwrap().to_string());
            if event["type"] == "state_change" && scope["thread"] == innermost(event).as_str() {
                let variable = event["variable"].as_str().unwrap();
                assert_eq!(scope["variables"][variable], "same", "event {seq}: {at}");
            }
        }
    }
    let in_paths: std::collections::BTreeSet<String> = events
        .iter()
        .flat_map(|(_, e)| e["path"].as_array().unwrap().iter().filter_map(|p| p.as_str()))
        .filter(|p| p.starts_with("branch:"))
        .map(str::to_string)
        .chain(["main".to_string()])
        .collect();
    assert!(in_events.is_subset(&in_state), "{in_events:?} are not all in {in_state:?}");
    assert!(in_state.is_subset(&in_paths), "{in_state:?} names a thread no event's path names ({in_paths:?})");
    assert_eq!(in_paths.len(), 7, "main, two branches, four nested ones: {in_paths:?}");
}

/// A branch that calls the model while its sibling fails: the block cancels
/// the call, which the journal keeps as cancelled.
const CANCELLED: &str = r#"model main = openai/gpt-4o-mini
tool fs = builtin streetrace.fs
prompt ask: """Say something."""
flow main:
    fs.write_file("before.txt", "kept")
    parallel do
        $a = call llm ask
        fs.write_file("a.txt", str($a))
    end
"#;

/// At an event of a branch whose model call its sibling's failure cancelled,
/// the replay waits at the call to be cancelled again, and the moment is the
/// next step of any thread: every event is shown, with the files as they
/// were, no model call, in bounded time (it waited 10 s and failed with "a
/// branch waited 10s for its turn", issue #41).
#[tokio::test(flavor = "multi_thread")]
async fn an_event_of_a_branch_its_sibling_cancelled_is_shown() {
    let dir = temp("travel-cancelled", &[("cancelled.sr", CANCELLED)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::text("never used").delay(Duration::from_secs(30)));
    let serve = Serve::start(&dir, &mock, &["cancelled.sr"]).await;
    let run = serve.post("/v1/runs", json!({"workload": "cancelled", "prompt": "go", "wait": true})).await;
    assert_eq!(run.1["status"], "failed", "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    let events = events_of(&serve.get_text(&format!("/v1/runs/{id}/events")).await);
    let request = seq_of(&events, "model_request", 0);
    // The request may have been cancelled before it reached the mock.
    let made = mock.requests().len();

    let started = std::time::Instant::now();
    for (seq, event) in events.iter().filter(|(seq, _)| *seq >= request) {
        let at = serve.get(&format!("/v1/runs/{id}/at/{seq}")).await;
        assert_eq!(at.0, 200, "event {seq} {event}: {}", at.1);
        let files = at.1["files"]["entries"].as_array().unwrap();
        let files: Vec<(&str, &str)> =
            files.iter().map(|f| (f["path"].as_str().unwrap(), f["text"].as_str().unwrap())).collect();
        assert_eq!(files, [("before.txt", "kept")], "event {seq}: {}", at.1);
    }
    let at = serve.get(&format!("/v1/runs/{id}/at/{request}")).await.1;
    // The sibling (the block's second branch, `branch:2` in the events).
    assert_eq!(at["point"]["thread"], "branch:2", "the sibling's next step: {at}");
    assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());
    assert_eq!(mock.requests().len(), made, "travelling made no model call");
}

/// Two agents in a `parallel` block, each writing its own file; the second
/// one's model is slow, so its file is written events after the first's.
const WRITERS: &str = r#"model main = openai/gpt-4o-mini
tool fs = builtin streetrace.fs
prompt write_a: """Write a.txt."""
prompt write_b: """Write b.txt."""
agent wa:
    instruction write_a
    tools fs
agent wb:
    instruction write_b
    tools fs
flow main:
    parallel do
        $a = run agent wa with $input_prompt
        $b = run agent wb with $input_prompt
    end
    return $a
"#;

/// The files of the moment, by path and text.
fn files_of(moment: &Value) -> Vec<(String, String)> {
    let entries = moment["files"]["entries"].as_array().unwrap();
    entries.iter().map(|e| (e["path"].as_str().unwrap().to_string(), e["text"].as_str().unwrap().to_string())).collect()
}

/// At every event of a run whose `parallel` branches write files, the state
/// lists a file from the event of the tool call that wrote it on, never
/// before: not when a sibling branch writes it later. The workload's graph
/// gives the two agents' edges as branches of one block.
#[tokio::test(flavor = "multi_thread")]
async fn files_written_in_parallel_branches_are_shown_once_written() {
    let dir = temp("travel-writers", &[("writers.sr", WRITERS)]);
    let mock = MockServer::start().await;
    mock.respond_with(|request| {
        let body = request.body.to_string();
        let (file, delay) = if body.contains("Write a.txt") { ("a.txt", 0) } else { ("b.txt", 600) };
        if body.contains("\"tool\"") || body.contains("tool_call_id") {
            MockReply::text(format!("wrote {file}"))
        } else {
            let content = format!("{file} content");
            MockReply::tool_call(file, "write_file", json!({"path": file, "content": content}))
                .delay(Duration::from_millis(delay))
        }
    });
    let serve = Serve::start(&dir, &mock, &["writers.sr"]).await;
    // The graph tells the two agents apart as branches of one block.
    let workloads = serve.get("/v1/workloads").await.1;
    let edges = workloads["workloads"][0]["graph"]["edges"].as_array().unwrap().clone();
    let branch_of = |agent: &str| edges.iter().find(|e| e["to"] == agent).unwrap()["parallel"].clone();
    let (wa, wb) = (branch_of("agent wa"), branch_of("agent wb"));
    assert_eq!((wa["branch"].clone(), wb["branch"].clone()), (json!(0), json!(1)), "{edges:?}");
    assert!(wa["block"].is_u64() && wa["block"] == wb["block"], "{edges:?}");
    let run = serve.post("/v1/runs", json!({"workload": "writers", "prompt": "go", "wait": true})).await;
    assert_eq!(run.1["status"], "done", "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    let events = events_of(&serve.get_text(&format!("/v1/runs/{id}/events")).await);
    // Where each file was written: its tool call's result.
    // Each call's id is the file it writes.
    let event = |kind: &str, file: &str| {
        events
            .iter()
            .find(|(_, e)| e["type"] == kind && e["call_id"] == file)
            .unwrap_or_else(|| panic!("{kind} {file}"))
            .0
    };
    let span = |file| (event("tool_call", file), event("tool_result", file));
    let (a, b) = (span("a.txt"), span("b.txt"));
    eprintln!("a {a:?} b {b:?}");
    for (seq, event) in &events {
        let at = serve.get(&format!("/v1/runs/{id}/at/{seq}")).await;
        assert_eq!(at.0, 200, "event {seq} {event}: {}", at.1);
        let files = files_of(&at.1);
        for (file, (call, result)) in [("a.txt", a), ("b.txt", b)] {
            let shown = files.iter().any(|(path, _)| path == file);
            if *seq < call {
                assert!(!shown, "event {seq} ({}): {file} is written at {call}..{result}: {files:?}", event["type"]);
            } else if *seq >= result {
                assert!(shown, "event {seq} ({}): {file} was written at {result}: {files:?}", event["type"]);
            }
        }
    }
}
