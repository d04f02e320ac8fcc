//! The fixture's recording, `tests/fixtures/debug.cassette.jsonl`, replayed by
//! the stdio transcript test and the DebugClient test, must be what the
//! runtime records today for the fixture under a scripted model; otherwise a
//! replay would fail on a request the runtime no longer sends.
//! `UPDATE_EXPECT=1 cargo test -p sr-dap --test recording` rewrites it.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use sr_hir::RootDatabase;
use sr_llm::{Cassette, Recorder};
use sr_runtime::event::{Emitter, RunStatus};
use sr_runtime::hook::NoHook;
use sr_runtime::human::Unattended;
use sr_runtime::mcp::McpHub;
use sr_runtime::record::{LiveTools, meta_entry};
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, instruction_contains, user_says};
use sr_runtime::tools::Jail;
use sr_runtime::{Env, RunOptions, Runtime};

const INVOCATION: &str = "dap-fixture";
const PROMPT: &str = "Greet Ada";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

#[tokio::test]
async fn the_fixture_recording_is_current() {
    let dir = fixtures();
    let recorded = std::env::temp_dir().join(format!("sr-dap-recording-{}.jsonl", std::process::id()));
    let cassette = Arc::new(Cassette::create(&recorded).unwrap());
    cassette.append(&meta_entry(INVOCATION, "debug.sr", PROMPT)).unwrap();
    let model = ScriptedProvider::new()
        .on(after_tool_results(), vec![Reply::Text("Hello Ada, engine lover!".into())])
        .on(
            instruction_contains("You greet people"),
            vec![Reply::Calls(vec![("read_file".into(), json!({"path": "notes.txt"}))])],
        )
        .on(user_says("Say it shorter"), vec![Reply::Text("Hi Ada!".into())]);
    let env = Env {
        provider: Arc::new(Recorder::new(Arc::new(model), cassette.clone())),
        hook: Arc::new(NoHook),
        jail: Jail::new(&dir).unwrap(),
        tools: Arc::new(LiveTools { cassette: Some(cassette), mcp: Arc::new(McpHub::default()) }),
        human: Arc::new(Unattended),
        options: RunOptions::default(),
    };
    let program = sr_runtime::compile::compile_path(&mut RootDatabase::default(), &dir.join("debug.sr")).unwrap();
    let outcome = Runtime::new(program, env).run(Emitter::new(INVOCATION, vec![]), PROMPT.into(), Vec::new()).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert_eq!(outcome.result, Some(json!({"greeting": "Hello Ada, engine lover!", "count": 2, "summary": "Hi Ada!"})));

    let text = std::fs::read_to_string(&recorded).unwrap();
    let _ = std::fs::remove_file(&recorded);
    let committed = dir.join("debug.cassette.jsonl");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&committed, &text).unwrap();
    }
    let expected = std::fs::read_to_string(&committed).unwrap_or_default();
    assert!(
        text == expected,
        "{} is stale; run `UPDATE_EXPECT=1 cargo test -p sr-dap --test recording`\n--- recorded now:\n{text}",
        committed.display()
    );
}
