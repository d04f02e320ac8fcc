//! `sr run` end to end: replaying the shipped recording, sessions, and a run
//! paused for a human and resumed in a second process.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use sr_llm::mock::{MockReply, MockServer};

fn sr(args: &[&str], cwd: &Path, env: &[(&str, String)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sr"));
    command.args(args).current_dir(cwd).env("NO_COLOR", "1");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-run-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn replaying_the_shipped_recording_reproduces_its_events() {
    let root = sr_testing::workspace_root();
    let sessions = temp("replay").join("sessions.db");
    let sessions = sessions.to_str().unwrap();
    let args = [
        "run",
        "examples/review/review.sr",
        "--replay",
        "examples/review/review.cassette.jsonl",
        "--work-dir",
        "examples/review",
        "--events",
        "jsonl",
        "--sessions",
        sessions,
        "--prompt",
        "Review src/calc.py",
    ];
    let out = sr(&args, &root, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let expected = std::fs::read_to_string(root.join("examples/review/review.events.jsonl")).unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);

    // The session stored the same events.
    let out = sr(&["sessions", "list", "--sessions", sessions], &root, &[]);
    let listing = String::from_utf8(out.stdout).unwrap();
    assert!(listing.contains("1 run(s)"), "{listing}");
}

#[test]
fn a_replay_fails_loudly_on_a_request_that_was_not_recorded() {
    let root = sr_testing::workspace_root();
    let sessions = temp("miss").join("sessions.db");
    let args = [
        "run",
        "examples/review/review.sr",
        "--replay",
        "examples/review/review.cassette.jsonl",
        "--work-dir",
        "examples/review",
        "--sessions",
        sessions.to_str().unwrap(),
        "--prompt",
        "Review something else",
    ];
    let out = sr(&args, &root, &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no recorded answer"), "{stderr}");
    assert!(stderr.contains("Review something else"), "{stderr}");
}

const PAUSING: &str = r#"model main = openai/gpt-4o-mini
prompt draft_prompt: """Draft a reply to: ${input_prompt}"""
prompt polish_prompt: """Polish this draft using the reviewer's note (${human_input}): ${draft}"""
flow main:
    $draft = call llm draft_prompt
    escalate to human "Approve the draft?"
    $final = call llm polish_prompt
    return $final
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_run_resumes_in_a_new_process_without_repeating_steps() {
    let dir = temp("pause");
    std::fs::write(dir.join("reply.sr"), PAUSING).unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::text("Draft: thanks for writing."));
    let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", "k".to_string())];
    let sessions = dir.join("sessions.db");
    let sessions = sessions.to_str().unwrap();

    let first = sr(
        &["run", "reply.sr", "--sessions", sessions, "--prompt", "a customer mail", "--events", "jsonl"],
        &dir,
        &env,
    );
    assert_eq!(first.status.code(), Some(3), "{}", String::from_utf8_lossy(&first.stderr));
    let events: Vec<Value> =
        String::from_utf8(first.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let asked = events.iter().find(|e| e["type"] == "human_input_requested").unwrap();
    assert_eq!(asked["message"], "Approve the draft?");
    assert_eq!(events.last().unwrap()["status"], "paused");
    let session = String::from_utf8(sr(&["sessions", "list", "--sessions", sessions], &dir, &[]).stdout).unwrap();
    let session = session.split_whitespace().next().unwrap().to_string();
    assert_eq!(server.requests().len(), 1);

    server.push(MockReply::text("Thanks for writing; we will reply within a day."));
    let second = sr(
        &[
            "run",
            "reply.sr",
            "--sessions",
            sessions,
            "--resume",
            &session,
            "--input",
            "approved, be warm",
            "--events",
            "jsonl",
        ],
        &dir,
        &env,
    );
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    // Only the step after the pause reached the model; the draft came from the journal.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let body = &requests[1].body;
    let prompt = body["messages"][0]["content"].as_str().unwrap();
    assert!(prompt.contains("(approved, be warm)") && prompt.contains("Draft: thanks for writing."), "{prompt}");
    let events: Vec<Value> =
        String::from_utf8(second.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events.last().unwrap()["result"], json!("Thanks for writing; we will reply within a day."));
}

const READER: &str = r#"model main = openai/gpt-4o-mini
tool fs = builtin streetrace.fs
prompt helper: """You read files."""
agent:
    instruction helper
    tools fs
"#;

#[tokio::test(flavor = "multi_thread")]
async fn the_runtime_state_lives_outside_the_work_dir_and_file_tools_cannot_reach_it() {
    let dir = temp("state");
    std::fs::write(dir.join("reader.sr"), READER).unwrap();
    let server = MockServer::start().await;
    let env = |state: &Path| {
        vec![
            ("OPENAI_BASE_URL", format!("{}/v1", server.url())),
            ("OPENAI_API_KEY", "k".to_string()),
            ("XDG_STATE_HOME", state.display().to_string()),
            ("STREETRACE_STATE_DIR", String::new()),
        ]
    };
    // By default: under $XDG_STATE_HOME, keyed by the project, nothing in the work dir.
    let xdg = temp("state-xdg");
    server.push(MockReply::text("hello"));
    let out = sr(&["run", "reader.sr", "--prompt", "hi"], &dir, &env(&xdg));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dir.join(".streetrace").exists());
    let projects: Vec<_> = std::fs::read_dir(xdg.join("streetrace")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(projects.len(), 1);
    assert!(projects[0].join("sessions.db").is_file() && projects[0].join("journal").is_dir());
    let listing = String::from_utf8(sr(&["sessions", "list"], &dir, &env(&xdg)).stdout).unwrap();
    assert!(listing.contains("1 run(s)"), "{listing}");

    // Configured inside the work dir, the state is still out of the tools' reach:
    // not found, like a path that does not exist.
    server.push(MockReply::tool_call("c1", "read_file", json!({"path": "state/sessions.db"})));
    server.push(MockReply::text("could not"));
    let out = sr(&["run", "reader.sr", "--state-dir", "state", "--prompt", "read the db"], &dir, &env(&xdg));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.join("state/sessions.db").is_file());
    let requests = server.requests();
    let tool_reply = requests.last().unwrap().body["messages"].to_string();
    assert!(tool_reply.contains("No such file or directory") && !tool_reply.contains("SQLite"), "{tool_reply}");
}

const GREETER: &str = r#"model main = openai/gpt-4o-mini
prompt greet: """Greet the user."""
prompt review: """Review the greeting."""
agent:
    instruction greet

agent reviewer:
    instruction review

flow polish:
    $x = run agent reviewer with "hi"
    return $x
"#;

fn mock_env(server: &MockServer) -> Vec<(&'static str, String)> {
    vec![("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", "test-key-1234".to_string())]
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_show_renders_the_model_replies_and_the_result() {
    let dir = temp("show");
    std::fs::write(dir.join("greet.sr"), GREETER).unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::chunks(["Hello ", "there, ", "friend."]));
    let env = [mock_env(&server), vec![("STREETRACE_STATE_DIR", dir.join("state").display().to_string())]].concat();
    let out = sr(&["run", "greet.sr", "--session", "s1", "--prompt", "hi"], &dir, &env);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let shown = sr(&["sessions", "show", "s1"], &dir, &env);
    assert!(shown.status.success());
    let transcript = String::from_utf8(shown.stderr).unwrap();
    assert!(transcript.contains("  Hello there, friend."), "{transcript}");
    assert!(transcript.contains("= result:\n  Hello there, friend."), "{transcript}");
}

#[tokio::test(flavor = "multi_thread")]
async fn http_retries_are_warnings_in_the_events() {
    let dir = temp("retries");
    std::fs::write(dir.join("greet.sr"), GREETER).unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::rate_limited("0"));
    server.push(MockReply::text("Hello."));
    let env = [mock_env(&server), vec![("STREETRACE_STATE_DIR", dir.join("state").display().to_string())]].concat();
    let out = sr(&["run", "greet.sr", "--prompt", "hi", "--events", "jsonl"], &dir, &env);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let events: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let warnings: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "warning")
        .map(|e| e["message"].as_str().unwrap())
        .filter(|m| m.starts_with("model "))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("model openai/gpt-4o-mini: attempt 1 failed (openai: HTTP 429"), "{warnings:?}");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn bad_model_flags_load_errors_and_the_agent_list_are_reported_before_running() {
    let dir = temp("flags");
    std::fs::write(dir.join("greet.sr"), GREETER).unwrap();
    std::fs::write(dir.join("broken.sr"), "model main = openai/gpt-4o\nflow main:\n    run agent nobody\n").unwrap();
    let state = [("STREETRACE_STATE_DIR", dir.join("state").display().to_string())];

    let out = sr(&["run", "greet.sr", "--override-model", "openai/", "--prompt", "hi"], &dir, &state);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--override-model 'openai/' names no model after 'openai/'"), "{stderr}");

    let out = sr(&["run", "broken.sr", "--prompt", "hi"], &dir, &state);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("broken.sr:3:15: error["), "{stderr}");

    let out = sr(&["run", "greet.sr", "--list-agents"], &dir, &state);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "entry point: agent default\nflow polish\nagent default (instruction greet)\nagent reviewer (instruction review)\n"
    );
    assert!(!dir.join("state").exists(), "listing agents started a run");
}
