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

/// A replay's input is its recording's: without `--prompt` it replays the
/// recorded one; another prompt is refused before anything runs, naming both.
#[test]
fn a_replay_takes_its_input_from_the_recording_and_refuses_another() {
    let root = sr_testing::workspace_root();
    let sessions = temp("miss").join("sessions.db");
    let sessions = sessions.to_str().unwrap();
    let replay = |prompt: &[&str]| {
        let args = [
            &[
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
            ],
            prompt,
        ]
        .concat();
        sr(&args, &root, &[])
    };
    let out = replay(&[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let expected = std::fs::read_to_string(root.join("examples/review/review.events.jsonl")).unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);

    let out = replay(&["--prompt", "Review something else"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "the replay ran");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the run diverged from its journal"), "{stderr}");
    assert!(stderr.contains(r#"recorded "Review src/calc.py", requested "Review something else""#), "{stderr}");
    let listing = String::from_utf8(sr(&["sessions", "list", "--sessions", sessions], &root, &[]).stdout).unwrap();
    assert_eq!(listing.lines().count(), 1, "the refused replay stored a run: {listing}");
}

/// A flow that asks a human between two model calls.
const PAUSING: &str = include_str!("fixtures/pausing.sr");

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

/// A replay is given the answers the recorded run's `escalate to human`s
/// got: it finishes like the run did, asking the model nothing. A replay
/// of a run that paused pauses there too, and its resume hint works.
#[tokio::test(flavor = "multi_thread")]
async fn a_replay_serves_the_recorded_answers_and_a_paused_replay_resumes() {
    let dir = temp("answers");
    std::fs::write(dir.join("reply.sr"), PAUSING).unwrap();
    let server = MockServer::start().await;
    let env = [mock_env(&server), vec![("STREETRACE_STATE_DIR", dir.join("state").display().to_string())]].concat();
    server.push(MockReply::text("a draft"));
    let paused =
        sr(&["run", "reply.sr", "--session", "s1", "--prompt", "a mail", "--record", "paused.jsonl"], &dir, &env);
    assert_eq!(paused.status.code(), Some(3), "{}", String::from_utf8_lossy(&paused.stderr));

    // Replayed, the paused run pauses at the same question, offline.
    let replayed = sr(&["run", "reply.sr", "--replay", "paused.jsonl"], &dir, &env);
    let stderr = String::from_utf8(replayed.stderr).unwrap();
    assert_eq!(replayed.status.code(), Some(3), "{stderr}");
    assert_eq!(server.requests().len(), 1);
    // Its hint, as printed, continues it from its recording.
    let hint = stderr.lines().find_map(|l| l.strip_prefix("paused: resume with `sr ")).unwrap();
    let words: Vec<String> = hint
        .trim_end_matches('`')
        .replace('…', "fine")
        .split_whitespace()
        .map(|w| w.trim_matches('"').to_string())
        .collect();
    server.push(MockReply::text("from the replay"));
    let args: Vec<&str> = words.iter().map(String::as_str).collect();
    let resumed = sr(&args, &dir, &env);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert_eq!(String::from_utf8(resumed.stdout).unwrap().trim(), "from the replay");
    assert_eq!(server.requests().len(), 2, "the draft came from the recording");

    server.push(MockReply::text("polished"));
    let answered =
        sr(&["run", "reply.sr", "--resume", "s1", "--input", "approved", "--record", "done.jsonl"], &dir, &env);
    assert!(answered.status.success(), "{}", String::from_utf8_lossy(&answered.stderr));
    assert_eq!(server.requests().len(), 3);
    let polish = server.requests()[2].body["messages"].to_string();
    assert!(polish.contains("(approved)"), "{polish}");

    // The answered run replays to its end, its answer served: no request.
    for journal in ["done.jsonl", "state/journal/s1/2.jsonl"] {
        let replayed = sr(&["run", "reply.sr", "--replay", journal], &dir, &env);
        assert!(replayed.status.success(), "{journal}: {}", String::from_utf8_lossy(&replayed.stderr));
        assert_eq!(String::from_utf8(replayed.stdout).unwrap().trim(), "polished");
    }
    assert_eq!(server.requests().len(), 3);
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

const TWO_ENTRIES: &str = r#"model main = openai/gpt-4o-mini
prompt draft_prompt: """Draft a reply to: ${input_prompt}"""
flow main:
    log "main ran"
    return "main"
flow approve:
    $draft = call llm draft_prompt
    escalate to human "Approve the draft?"
    return "approved: " + $human_input + " for " + $draft
"#;

/// A run paused under `--entry approve` prints a resume hint without
/// `--entry` that works as printed: the resumed run continues `approve`.
#[tokio::test(flavor = "multi_thread")]
async fn a_paused_run_resumes_at_the_entry_it_started_at() {
    let dir = temp("entry");
    std::fs::write(dir.join("w.sr"), TWO_ENTRIES).unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::text("a draft"));
    let env = [mock_env(&server), vec![("STREETRACE_STATE_DIR", dir.join("state").display().to_string())]].concat();
    let first = sr(&["run", "w.sr", "--entry", "approve", "--prompt", "mail"], &dir, &env);
    assert_eq!(first.status.code(), Some(3), "{}", String::from_utf8_lossy(&first.stderr));
    let stderr = String::from_utf8(first.stderr).unwrap();
    let hint = stderr.lines().find_map(|l| l.strip_prefix("paused: resume with `")).unwrap();
    let hint = hint.strip_suffix('`').unwrap();
    assert!(!hint.contains("--entry"), "{hint}");
    let session = hint.split_whitespace().skip_while(|w| *w != "--resume").nth(1).unwrap().to_string();

    // A conflicting --entry is refused, naming the entry the run started at.
    let conflicting = sr(&["run", "w.sr", "--resume", &session, "--input", "ok", "--entry", "main"], &dir, &env);
    assert_eq!(conflicting.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&conflicting.stderr).contains("started at 'approve'"));

    // The hint, as printed (the answer in place of the ellipsis).
    let words: Vec<String> =
        hint.replace('…', "yes").split_whitespace().map(|w| w.trim_matches('"').to_string()).collect();
    assert_eq!(words[..2], ["sr", "run"]);
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let second = sr(&args, &dir, &env);
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    assert_eq!(String::from_utf8(second.stdout).unwrap().trim(), "approved: yes for a draft");
    assert_eq!(server.requests().len(), 1, "the draft came from the journal");

    // A replay starts at the recorded entry too, and refuses another.
    let journal = format!("state/journal/{session}/2.jsonl");
    let replayed = sr(&["run", "w.sr", "--replay", &journal], &dir, &env);
    assert!(replayed.status.success(), "{}", String::from_utf8_lossy(&replayed.stderr));
    assert_eq!(String::from_utf8(replayed.stdout).unwrap().trim(), "approved: yes for a draft");
    let elsewhere = sr(&["run", "w.sr", "--replay", &journal, "--entry", "main"], &dir, &env);
    assert_eq!(elsewhere.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&elsewhere.stderr).contains("started at 'approve'"));
    // The same flow named with its kind is the same entry.
    let same = sr(&["run", "w.sr", "--replay", &journal, "--entry", "flow:approve"], &dir, &env);
    assert!(same.status.success(), "{}", String::from_utf8_lossy(&same.stderr));
    assert_eq!(String::from_utf8(same.stdout).unwrap().trim(), "approved: yes for a draft");
    assert_eq!(server.requests().len(), 1);
}

/// `--resume ID --from STEP` retries a failed tool after its cause is fixed:
/// the steps before it are served, the tool runs again for real.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_goes_live_again_from_a_step_to_retry_a_tool() {
    let dir = temp("from");
    let source = "model main = openai/gpt-4o-mini\ntool fs = builtin streetrace.fs\n\
                  prompt ask: \"\"\"Say something about ${notes}.\"\"\"\n\
                  flow main:\n    $id = uuid()\n    $notes = fs.read_file(\"notes.txt\")\n    \
                  $said = call llm ask\n    return $id + \" \" + $said\n";
    std::fs::write(dir.join("w.sr"), source).unwrap();
    let server = MockServer::start().await;
    let env = [mock_env(&server), vec![("STREETRACE_STATE_DIR", dir.join("state").display().to_string())]].concat();
    let failed = sr(&["run", "w.sr", "--session", "s1"], &dir, &env);
    assert_eq!(failed.status.code(), Some(1), "notes.txt is missing");

    let steps = String::from_utf8(sr(&["sessions", "show", "s1", "--steps"], &dir, &env).stdout).unwrap();
    let read = steps.lines().find(|l| l.contains("tool read_file")).unwrap();
    assert!(read.contains("→ failure"), "{steps}");
    let step: u64 = read.split_whitespace().next().unwrap().parse().unwrap();
    let id = steps.lines().find(|l| l.contains("uuid()")).unwrap().rsplit('"').nth(1).unwrap().to_string();

    // Replaying the recorded failure changes nothing; going live from it does.
    std::fs::write(dir.join("notes.txt"), "the notes").unwrap();
    server.push(MockReply::text("nice notes"));
    let retried = sr(&["run", "w.sr", "--resume", "s1", "--from", &step.to_string()], &dir, &env);
    assert!(retried.status.success(), "{}", String::from_utf8_lossy(&retried.stderr));
    assert_eq!(String::from_utf8(retried.stdout).unwrap().trim(), format!("{id} nice notes"), "uuid() was served");
    let steps = String::from_utf8(sr(&["sessions", "show", "s1", "--steps"], &dir, &env).stdout).unwrap();
    assert!(steps.contains(&format!("── run 2 · completed · resumes run 1, live from step {step}")), "{steps}");
    assert!(steps.contains("tool read_file {\"path\":\"notes.txt\"} → ok"), "{steps}");
}

/// A fork from right after a model call the recorded run cancelled (its
/// sibling branch failed) has no reply to serve for it: the call waits while
/// the sibling can fail again. Failing again, the sibling cancels it and no
/// request is made; with its cause fixed, the sibling ends well and the call
/// is made, live. A fork once asked the cancelled call again at once.
#[tokio::test(flavor = "multi_thread")]
async fn a_fork_after_a_cancelled_call_waits_for_the_sibling_that_cancelled_it() {
    let dir = temp("fork-cancelled");
    let slow = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/durable/slow_mcp.py");
    let source = format!(
        "model main = openai/gpt-4o-mini\ntool fs = builtin streetrace.fs\n\
         tool slow = mcp \"stdio:python3 '{}' '{}' 0.5\"\nprompt ask: \"\"\"Say something.\"\"\"\n\
         flow main:\n    parallel do\n        $said = call llm ask\n        if true:\n            \
         $b = slow.bump()\n            $notes = fs.read_file(\"notes.txt\")\n    end\n    return $said\n",
        slow.display(),
        dir.join("count.txt").display()
    );
    std::fs::write(dir.join("w.sr"), source).unwrap();
    let server = MockServer::start().await;
    let env = [mock_env(&server), vec![("STREETRACE_STATE_DIR", dir.join("state").display().to_string())]].concat();
    server.push(MockReply::text("too late").delay(std::time::Duration::from_secs(30)));
    let failed = sr(&["run", "w.sr", "--session", "s1"], &dir, &env);
    assert_eq!(failed.status.code(), Some(1), "notes.txt is missing");
    let journal = std::fs::read_to_string(dir.join("state/journal/s1/1.jsonl")).unwrap();
    let cancelled = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["kind"] == "llm" && l["cancelled"] == true)
        .expect("the model call was cancelled");
    let from = (cancelled["step"].as_u64().unwrap() + 1).to_string();
    assert_eq!(server.requests().len(), 1);

    let again = sr(&["run", "w.sr", "--resume", "s1", "--from", &from], &dir, &env);
    assert_eq!(again.status.code(), Some(1), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(server.requests().len(), 1, "the sibling's failure cancelled the call before it was made");

    std::fs::write(dir.join("notes.txt"), "the notes").unwrap();
    server.push(MockReply::text("hello"));
    let fixed = sr(&["run", "w.sr", "--resume", "s1", "--from", &from], &dir, &env);
    assert!(fixed.status.success(), "{}", String::from_utf8_lossy(&fixed.stderr));
    assert_eq!(String::from_utf8_lossy(&fixed.stdout).trim(), "hello");
    assert_eq!(server.requests().len(), 2, "the call was made once the sibling ended well");
}

/// A model that streams 64 MiB of tool-call arguments gets an error it can act
/// on; `sr` holds no more than the 4 MiB limit of them.
#[tokio::test(flavor = "multi_thread")]
async fn a_huge_tool_call_argument_is_refused_in_bounded_memory() {
    let dir = temp("huge-arguments");
    let source = "model main = openai/gpt-4o-mini\ntool fs = builtin streetrace.fs\n\
                  prompt helper: \"\"\"You write files.\"\"\"\nagent:\n    instruction helper\n    tools fs\n";
    std::fs::write(dir.join("w.sr"), source).unwrap();
    let server = MockServer::start().await;
    // OpenAI's stream: the arguments come in fragments of 64 KiB.
    let fragment = "x".repeat(64 << 10);
    let delta = |arguments: &str, first: bool| {
        let call = match first {
            true => {
                json!({"index": 0, "id": "c1", "type": "function", "function": {"name": "write_file", "arguments": arguments}})
            }
            false => json!({"index": 0, "function": {"arguments": arguments}}),
        };
        format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}))
    };
    let mut body = delta(r#"{"path": "big.txt", "content": ""#, true);
    for _ in 0..1024 {
        body.push_str(&delta(&fragment, false));
    }
    body.push_str(&delta(r#""}"#, false));
    body.push_str(&format!(
        "data: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    ));
    server.push(MockReply::raw(200, "text/event-stream", body));
    server.push(MockReply::text("I will write it in parts."));
    let env = [mock_env(&server), vec![("STREETRACE_STATE_DIR", dir.join("state").display().to_string())]].concat();
    let sr_bin = env!("CARGO_BIN_EXE_sr");
    let out = Command::new("/usr/bin/time")
        .args(["-f", "peak %M KiB", sr_bin, "run", "w.sr", "--prompt", "write", "--events", "jsonl"])
        .current_dir(&dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output();
    let Ok(out) = out else {
        sr_testing::required(false, "GNU time (/usr/bin/time)");
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let events: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["is_error"], true);
    assert!(result["result"].as_str().unwrap().contains("longer than 4 MiB"), "{result}");
    assert!(!dir.join("big.txt").exists());
    let told = server.requests()[1].body["messages"].to_string();
    assert!(told.contains("longer than 4 MiB") && told.len() < 1 << 20, "{} bytes", told.len());
    let peak: u64 = stderr.lines().find_map(|l| l.strip_prefix("peak ")?.strip_suffix(" KiB")?.parse().ok()).unwrap();
    eprintln!("peak memory with 64 MiB of arguments: {} MiB", peak >> 10);
    assert!(peak < 200 << 10, "peak {} MiB", peak >> 10);
}

/// The sandboxed cli tool cannot rewrite the workload it runs in (which would
/// start whatever the model wrote at the user's next `sr run`).
#[tokio::test(flavor = "multi_thread")]
async fn a_cli_command_cannot_rewrite_the_workload() {
    if !sr_testing::required(Command::new("bwrap").arg("--version").output().is_ok(), "bubblewrap (bwrap)") {
        return;
    }
    let dir = temp("cli-workload");
    let source = "model main = openai/gpt-4o-mini\ntool cli = builtin streetrace.cli\n\
                  prompt helper: \"\"\"You run commands.\"\"\"\nagent:\n    instruction helper\n    tools cli\n";
    std::fs::write(dir.join("w.sr"), source).unwrap();
    let server = MockServer::start().await;
    let attack = "echo 'tool x = mcp \"stdio:touch pwned\"' >> w.sr; rm -f w.sr; echo x > w.sr";
    server.push(MockReply::tool_call("c1", "execute_cli_command", json!({"command": ["sh", "-c", attack]})));
    server.push(MockReply::text("done"));
    let env = [mock_env(&server), vec![("STREETRACE_STATE_DIR", dir.join("state").display().to_string())]].concat();
    let out = sr(&["run", "w.sr", "--prompt", "go", "--events", "jsonl"], &dir, &env);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(dir.join("w.sr")).unwrap(), source);
    let result = String::from_utf8(out.stdout).unwrap();
    assert!(result.contains("Read-only file system") || result.contains("Device or resource busy"), "{result}");
}

/// `sr run` refuses before anything runs where the editor shows no run lens
/// (`sr_hir::start::run_start`): no entry point, an `--entry` naming nothing,
/// a library file that uses its importer's variables.
#[test]
fn a_run_that_cannot_start_is_refused_before_it_runs() {
    let dir = temp("no-start");
    std::fs::write(dir.join("lib.sr"), "flow helper:\n    return 1\n").unwrap();
    let main = "import ./agents.sr\nmodel main = anthropic/claude\nflow main:\n    $topic = \"x\"\n    $r = run helper\n    return $r\n";
    std::fs::write(dir.join("main.sr"), main).unwrap();
    let agents = "prompt write: \"\"\"About ${topic}\"\"\"\nflow helper:\n    $r = call llm write\n    return $r\n";
    std::fs::write(dir.join("agents.sr"), agents).unwrap();
    let refused = |args: &[&str]| {
        let out = sr(args, &dir, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    assert_eq!(
        refused(&["run", "lib.sr", "--prompt", "x"]),
        "error: lib.sr: no entry point: define `flow main` or an agent, or pass --entry NAME\n"
    );
    assert_eq!(
        refused(&["run", "lib.sr", "--entry", "nope", "--prompt", "x"]),
        "error: lib.sr: --entry nope: the program has no flow or agent of that name\n"
    );
    assert!(refused(&["run", "agents.sr", "--entry", "helper", "--prompt", "x"]).contains("error[E0015]"));
}
