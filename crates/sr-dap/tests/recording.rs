//! The fixture's recording, `tests/fixtures/debug.cassette.jsonl`, replayed by
//! the stdio transcript test and the DebugClient test, must be what the
//! runtime records today for the fixture under a scripted model; otherwise a
//! replay would fail on a request the runtime no longer sends.
//! `UPDATE_EXPECT=1 cargo test -p sr-dap --test recording` rewrites it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use expect_test::expect;

use serde_json::json;
use sr_hir::RootDatabase;
use sr_llm::Cassette;
use sr_runtime::event::{Emitter, Event, RunStatus};
use sr_runtime::hook::NoHook;
use sr_runtime::human::Unattended;
use sr_runtime::journal::{Journal, Meta};
use sr_runtime::mcp::McpHub;
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, instruction_contains, user_says};
use sr_runtime::tools::Jail;
use sr_runtime::trace::trace;
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
    let meta = Meta { invocation_id: INVOCATION.into(), ..Meta::new("debug.sr", PROMPT) };
    let journal = Journal::recording(cassette, &meta, None).unwrap();
    let model = ScriptedProvider::new()
        .on(after_tool_results(), vec![Reply::Text("Hello Ada, engine lover!".into())])
        .on(
            instruction_contains("You greet people"),
            vec![Reply::Calls(vec![("read_file".into(), json!({"path": "notes.txt"}))])],
        )
        .on(user_says("Say it shorter"), vec![Reply::Text("Hi Ada!".into())]);
    let env = Env {
        provider: Arc::new(model),
        hook: Arc::new(NoHook),
        jail: Jail::new(&dir).unwrap(),
        mcp: Arc::new(McpHub::default()),
        journal: Arc::new(journal),
        human: Arc::new(Unattended),
        options: RunOptions::default(),
    };
    let program = sr_runtime::compile::compile_path(&mut RootDatabase::default(), &dir.join("debug.sr")).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let emitter = Emitter::new(INVOCATION, vec![Arc::new(move |e: &Event| sink.lock().unwrap().push(e.clone()))]);
    let outcome = Runtime::new(program, env).run(emitter, PROMPT.into(), Vec::new()).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert_eq!(outcome.result, Some(json!({"greeting": "Hello Ada, engine lover!", "count": 2, "summary": "Hi Ada!"})));
    // What the debugger tests step through and travel back in: the fixture's run.
    expect![[r#"
        - run_started tests/fixtures/debug.sr entry=flow main input="Greet Ada"
        flow:main flow_started main
        flow:main state_change count = 1
        flow:main state_change profile = {"name":"Ada","tags":["math","engines"]}
        flow:main/agent:greeter agent_started greeter model=openai/gpt-4o-mini input="Greet Ada"
        flow:main/agent:greeter model_request openai/gpt-4o-mini messages=1 tools=[read_file,list_directory,find_in_files]
        flow:main/agent:greeter model_response openai/gpt-4o-mini tool_calls text="" calls=[read_file] tokens=10/5
        flow:main/agent:greeter tool_call read_file {"path":"notes.txt"}
        flow:main/agent:greeter tool_result read_file {"tool_name":"read_file","result":"success","output":"Ada likes engines.\n"}
        flow:main/agent:greeter model_request openai/gpt-4o-mini messages=3 tools=[read_file,list_directory,find_in_files]
        flow:main/agent:greeter text_delta "Hello Ada, engine lover!"
        flow:main/agent:greeter model_response openai/gpt-4o-mini stop text="Hello Ada, engine lover!" calls=[] tokens=10/7
        flow:main/agent:greeter agent_finished greeter output="Hello Ada, engine lover!" tokens=20/12
        flow:main state_change greeting = "Hello Ada, engine lover!"
        flow:main/flow:count_up flow_started count_up
        flow:main/flow:count_up state_change count = 2
        flow:main/flow:count_up flow_finished count_up result=2
        flow:main state_change count = 2
        flow:main log "count is 2"
        flow:main llm_call summary_prompt model=openai/gpt-4o-mini
        flow:main model_request openai/gpt-4o-mini messages=1 tools=[]
        flow:main text_delta "Hi Ada!"
        flow:main model_response openai/gpt-4o-mini stop text="Hi Ada!" calls=[] tokens=10/2
        flow:main llm_response summary_prompt final "Hi Ada!"
        flow:main state_change summary = "Hi Ada!"
        flow:main flow_finished main result={"greeting":"Hello Ada, engine lover!","count":2,"summary":"Hi Ada!"}
        - flow_result {"greeting":"Hello Ada, engine lover!","count":2,"summary":"Hi Ada!"}
        - run_finished completed result={"greeting":"Hello Ada, engine lover!","count":2,"summary":"Hi Ada!"} tokens=30/14
    "#]]
    .assert_eq(&trace(events.lock().unwrap().iter()));

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
