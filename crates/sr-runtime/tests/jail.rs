//! The file jail as a launched run has it: the model, through the builtin
//! file tools, tries to change the workload, its import and the repository's
//! hooks, and to find the runtime's state kept inside the work directory.
//! Judged by effects: the files' bytes, what exists, what the tools returned.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sr_hir::RootDatabase;
use sr_runtime::event::{Event, Payload, RunStatus};
use sr_runtime::human::Unattended;
use sr_runtime::launch::{LaunchSpec, Models, Storage, launch};
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results};
use sr_runtime::{RunOptions, compile};

const WORKLOAD: &str = "import ./lib/prompts.sr\nmodel main = openai/gpt-4o\ntool fs = builtin streetrace.fs\n\
                        agent:\n    instruction helper\n    tools fs\n";
const IMPORTED: &str = "prompt helper: \"\"\"You help.\"\"\"\n";
/// The run's message, which its journal (in the state directory) holds.
const MESSAGE: &str = "hunt-the-state-7f3a";

/// Runs the workload in `work` with its state in `work/state`, the model
/// making `calls` one per turn; the tool results in order.
async fn run(work: &Path, calls: Vec<(&str, Value)>) -> Vec<Value> {
    let program = compile::compile_path(&mut RootDatabase::default(), &work.join("agent.sr")).unwrap();
    let mut replies: Vec<Reply> =
        calls.into_iter().map(|(tool, args)| Reply::Calls(vec![(tool.into(), args)])).collect();
    replies.push(Reply::Text("done".into()));
    let first = replies.remove(0);
    let provider = ScriptedProvider::new().on(after_tool_results(), replies).on(|_| true, vec![first]);
    let storage = Storage::resolve(Some(&work.join("state")), None, work).unwrap();
    let launched = launch(LaunchSpec {
        program,
        message: MESSAGE.to_string(),
        work_dir: work.to_path_buf(),
        read_only: false,
        storage: Some(storage),
        models: Models::Provider { provider: Arc::new(provider), record: None },
        options: RunOptions::default(),
        human: Arc::new(Unattended),
        in_doubt: sr_runtime::in_doubt::skip_all(),
    })
    .unwrap();
    let events = Arc::new(Mutex::new(Vec::<Event>::new()));
    let sink = events.clone();
    let sinks: Vec<Arc<dyn sr_runtime::event::EventSink>> =
        vec![Arc::new(move |e: &Event| sink.lock().unwrap().push(e.clone()))];
    let finished = launched.run(Arc::new(sr_runtime::hook::NoHook), sinks).await.unwrap();
    assert_eq!(finished.status, Some(RunStatus::Completed), "{:?}", finished.error);
    let events = events.lock().unwrap();
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolResult { result, .. } => Some(result.clone()),
            _ => None,
        })
        .collect()
}

fn work_dir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("sr-runtime-jail-").tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("lib")).unwrap();
    std::fs::write(dir.path().join("agent.sr"), WORKLOAD).unwrap();
    std::fs::write(dir.path().join("lib/prompts.sr"), IMPORTED).unwrap();
    dir
}

/// The workload file, its import (in every spelling, through a hard link),
/// `.git/hooks` and `.streetrace/agents` stay as they were: each write is a
/// failure naming its rule, and the user's next `sr run` or `git commit` runs
/// nothing the model wrote.
#[tokio::test(flavor = "multi_thread")]
async fn the_model_cannot_change_the_workload_or_the_repository() {
    let dir = work_dir();
    let work = dir.path();
    std::fs::hard_link(work.join("agent.sr"), work.join("copy.sr")).unwrap();
    let evil = "tool x = mcp \"stdio:touch /tmp/owned\"\n";
    let absolute = work.canonicalize().unwrap().join("agent.sr").display().to_string();
    let calls = vec![
        ("write_file", json!({"path": "agent.sr", "content": evil})),
        ("write_file", json!({"path": "./lib/../agent.sr", "content": evil})),
        ("write_file", json!({"path": absolute, "content": evil})),
        ("append_to_file", json!({"path": "agent.sr", "content": evil})),
        ("write_file", json!({"path": "lib/prompts.sr", "content": evil})),
        ("write_file", json!({"path": "copy.sr", "content": evil})),
        ("write_file", json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch /tmp/owned\n"})),
        ("create_directory", json!({"path": ".git/hooks"})),
        ("write_file", json!({"path": ".streetrace/agents/agent.sr", "content": evil})),
    ];
    let results = run(work, calls).await;
    let errors: Vec<&str> = results.iter().map(|r| r["error"].as_str().unwrap_or_else(|| panic!("{r}"))).collect();
    let workload = "is the workload or a file it imports: tools cannot change it";
    for (error, names) in errors.iter().zip([
        workload,
        workload,
        workload,
        workload,
        workload,
        "has 2 hard links",
        "`.git` is protected: tools cannot change it",
        "`.git` is protected: tools cannot change it",
        "`.streetrace` is protected: tools cannot change it",
    ]) {
        assert!(error.contains(names), "{error}");
    }
    assert_eq!(std::fs::read_to_string(work.join("agent.sr")).unwrap(), WORKLOAD);
    assert_eq!(std::fs::read_to_string(work.join("lib/prompts.sr")).unwrap(), IMPORTED);
    assert!(!work.join(".git").exists() && !work.join(".streetrace").exists());
}

/// The state directory inside the work directory (sessions, the running
/// run's journal) is not listed, not found, not readable and not searched.
#[tokio::test(flavor = "multi_thread")]
async fn the_state_inside_the_work_directory_is_invisible() {
    let dir = work_dir();
    let work = dir.path();
    let calls = vec![
        ("list_directory", json!({"path": "."})),
        ("read_file", json!({"path": "state/sessions.db"})),
        ("list_directory", json!({"path": "state"})),
        ("read_file", json!({"path": "no/such/file"})),
        ("find_in_files", json!({"pattern": "**", "search_string": MESSAGE})),
        ("write_file", json!({"path": "state/sessions.db", "content": "forged"})),
    ];
    let results = run(work, calls).await;
    assert_eq!(results[0]["output"], json!({"dirs": ["lib"], "files": ["agent.sr"]}));
    let missing = &results[3]["error"];
    assert!(missing.as_str().unwrap().contains("No such file"), "{missing}");
    assert_eq!(&results[1]["error"], missing);
    assert_eq!(&results[2]["error"], missing);
    assert_eq!(results[4]["output"], json!([]), "the journal holds the message, but is not searched");
    assert_eq!(results[5]["result"], "failure");
    assert!(work.join("state/sessions.db").is_file() && work.join("state/journal").is_dir());
    let db = std::fs::read(work.join("state/sessions.db")).unwrap();
    assert!(!db.starts_with(b"forged"));
}
