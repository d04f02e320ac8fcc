//! MCP tools in runs, against real servers (the test servers of sr-mcp, whose
//! `tests/mcp/setup.sh` installs the reference `server-everything` from npm):
//! a recorded run replayed without any server, secrets redacted in every
//! output, servers started on first use, and a flow's MCP tool calls. Without
//! npm or its registry the tests against `server-everything` are skipped
//! loudly, except in CI, where they fail.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
#[path = "../../sr-mcp/tests/mcp/servers.rs"]
mod servers;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use sr_hir::{RootDatabase, ToolData};
use sr_llm::{Cassette, Provider};
use sr_runtime::event::{Emitter, Event, Payload, RunStatus};
use sr_runtime::hook::NoHook;
use sr_runtime::human::Unattended;
use sr_runtime::journal::{Journal, Meta, Mode, Recorded};
use sr_runtime::mcp::{McpHub, McpOptions};
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, instruction_contains};
use sr_runtime::tools::{Jail, Tool, ToolError};
use sr_runtime::{Env, RunOptions, Runtime};

use servers::{HeaderServer, everything};

fn stdio(entry: &Path) -> String {
    format!("stdio:node '{}' stdio", entry.display())
}

fn tool(hub: &McpHub, server: &str, name: &str) -> Arc<dyn Tool> {
    let tools = hub.tools(server);
    let names: Vec<String> = tools.iter().map(|t| t.spec().name).collect();
    tools.into_iter().find(|t| t.spec().name == name).unwrap_or_else(|| panic!("no {name} in {names:?}: {hub:?}"))
}

fn work_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-runtime-mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn compile(path: &Path, source: &str) -> Arc<sr_runtime::compile::Compiled> {
    std::fs::write(path, source).unwrap();
    match sr_runtime::compile::compile_path(&mut RootDatabase::default(), path) {
        Ok(program) => program,
        Err(e) => panic!("does not compile: {:#?}", e.diagnostics),
    }
}

async fn run(
    program: &Arc<sr_runtime::compile::Compiled>,
    provider: Arc<dyn Provider>,
    mcp: Arc<McpHub>,
    journal: Journal,
) -> Vec<Event> {
    let env = Env {
        provider,
        hook: Arc::new(NoHook),
        jail: Jail::new(work_dir("jail")).unwrap(),
        mcp,
        journal: Arc::new(journal),
        human: Arc::new(Unattended),
        options: RunOptions::default(),
    };
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let emitter = Emitter::new("mcp-test", vec![Arc::new(move |e: &Event| sink.lock().unwrap().push(e.clone()))]);
    let outcome = Runtime::new(program.clone(), env).run(emitter, "greet me".into(), Vec::new()).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    events.lock().unwrap().clone()
}

#[tokio::test]
async fn a_recorded_run_replays_without_any_server() {
    let Some(entry) = everything() else { return };
    let source = format!(
        "model main = openai/gpt-4o\n\
         tool everything = mcp \"{}\"\n\
         prompt greet: \"\"\"Greet the user through the echo tool.\"\"\"\n\
         agent default:\n    tools everything\n    instruction greet\n",
        stdio(entry)
    );
    let dir = work_dir("record");
    let program = compile(&dir.join("agent.sr"), &source);
    let cassette_path = dir.join("run.jsonl");
    let cassette = Arc::new(Cassette::create(&cassette_path).unwrap());

    let hub = Arc::new(McpHub::connect(&program.tools, &McpOptions::default()).await);
    hub.record(cassette.clone()).unwrap();
    let model = ScriptedProvider::new().on(after_tool_results(), vec![Reply::Text("Done: Echo: hello".into())]).on(
        instruction_contains("echo tool"),
        vec![Reply::Calls(vec![("everything__echo".into(), json!({"message": "hello"}))])],
    );
    let journal = Journal::recording(cassette, &Meta::new("agent.sr", "greet me"), None).unwrap();
    let live = run(&program, Arc::new(model), hub.clone(), journal).await;
    let result = live.iter().find_map(|e| match &e.payload {
        Payload::ToolResult { tool, result, is_error, .. } => Some((tool.clone(), result.clone(), *is_error)),
        _ => None,
    });
    assert_eq!(result, Some(("everything__echo".to_string(), json!("Echo: hello"), false)));

    // The replay's program names a server that does not exist: nothing is contacted.
    let text = std::fs::read_to_string(&cassette_path).unwrap();
    let gone = compile(&dir.join("agent.sr"), &source.replace(&stdio(entry), "stdio:sr-no-such-mcp-server"));
    assert!(matches!(&gone.tools["everything"], ToolData::Mcp { url, .. } if url == "stdio:sr-no-such-mcp-server"));
    let replay_hub = Arc::new(McpHub::from_recording(&text).unwrap());
    let specs = |hub: &McpHub| hub.tools("everything").iter().map(|t| t.spec()).collect::<Vec<_>>();
    assert_eq!(specs(&replay_hub), specs(&hub));
    assert!(!specs(&hub).is_empty());
    let journal = Journal::new(Mode::Replay, Recorded::parse(&text).unwrap(), None, None);
    let replayed = run(&gone, Arc::new(ScriptedProvider::new()), replay_hub.clone(), journal).await;
    // The times aside: this run has the wall clock (the journal's clock,
    // which serves recorded times, is `launch`'s).
    let untimed = |events: &[Event]| events.iter().cloned().map(|e| Event { at_ms: None, ..e }).collect::<Vec<_>>();
    assert_eq!(untimed(&replayed), untimed(&live));

    // A listed tool is never called for real.
    let listed = tool(&replay_hub, "everything", "everything__echo");
    let Err(ToolError(message)) = listed.call(json!({"message": "x"})).await else { panic!("a listed tool ran") };
    assert!(message.contains("only listed in the recording"), "{message}");
}

#[tokio::test]
async fn secrets_echoed_by_a_server_or_the_model_are_redacted_everywhere() {
    let server = HeaderServer::start().await;
    let secret = "tok-5e4d3c2b1a";
    let source = format!(
        "model main = openai/gpt-4o\n\
         tool secure = mcp \"http://{addr}/mcp\" with Authorization \"Bearer ${{env:SR_TEST_TOKEN}}\", X-Short \"${{env:SR_SHORT}}\"\n\
         prompt ask: \"\"\"Find out who you are.\"\"\"\n\
         agent default:\n    tools secure\n    instruction ask\n",
        addr = server.addr
    );
    let dir = work_dir("redact");
    let program = compile(&dir.join("agent.sr"), &source);
    let env = |name: &str| match name {
        "SR_TEST_TOKEN" => Some(secret.to_string()),
        "SR_SHORT" => Some("a".to_string()),
        _ => None,
    };
    let hub = Arc::new(McpHub::connect_with_env(&program.tools, &McpOptions::default(), &env).await);
    let redactor = Arc::new(sr_llm::Redactor::new());
    hub.add_secrets(&redactor);

    // The model calls the tool (which echoes `Bearer <token>`), then repeats the bare token.
    let model = Arc::new(
        ScriptedProvider::new()
            .on(after_tool_results(), vec![Reply::Text(format!("You are {secret}, a fine user."))])
            .on(|_| true, vec![Reply::Calls(vec![("secure__whoami".into(), json!({}))])]),
    );
    let cassette_path = dir.join("run.jsonl");
    let cassette = Arc::new(Cassette::create(&cassette_path).unwrap().redacting(redactor.clone()));
    let journal = Journal::recording(cassette, &Meta::new("agent.sr", "who am I?"), None).unwrap();
    let store = sr_runtime::session::SessionStore::in_memory().unwrap();
    store.create("s", "agent.sr").unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let emitter = Emitter::new(
        "redact-test",
        vec![store.sink("s", 1), Arc::new(move |e: &Event| sink.lock().unwrap().push(e.clone()))],
    )
    .with_redactor(redactor);
    let env = Env {
        provider: model.clone(),
        hook: Arc::new(NoHook),
        jail: Jail::new(work_dir("redact-jail")).unwrap(),
        mcp: hub.clone(),
        journal: Arc::new(journal),
        human: Arc::new(Unattended),
        options: RunOptions::default(),
    };
    let outcome = Runtime::new(program, env).run(emitter, "who am I?".into(), Vec::new()).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);

    // The server did get the token; nothing the run wrote or sent on holds it.
    assert_eq!(server.header("/mcp", "authorization").last().unwrap(), &format!("Bearer {secret}"));
    let events = serde_json::to_string(&*events.lock().unwrap()).unwrap();
    assert!(!events.contains(secret), "{events}");
    assert!(events.contains("Bearer [redacted]") && events.contains("You are [redacted], a fine user."), "{events}");
    let rows = serde_json::to_string(&store.events("s").unwrap()).unwrap();
    assert!(!rows.contains(secret) && rows.contains("[redacted]"), "{rows}");
    let recorded = std::fs::read_to_string(&cassette_path).unwrap();
    assert!(!recorded.contains(secret) && recorded.contains("[redacted]"), "{recorded}");
    let second = serde_json::to_string(&model.requests()[1].messages).unwrap();
    assert!(!second.contains(secret) && second.contains("Bearer [redacted]"), "{second}");
    // A one-character value is refused as a secret, with a warning, and mangles nothing.
    assert!(events.contains("'SR_SHORT' has a value shorter than 4 characters"), "{events}");
    assert!(events.contains("a fine user"), "{events}");
}

#[tokio::test]
async fn servers_are_contacted_only_when_first_used() {
    let server = HeaderServer::start().await;
    let source = format!(
        "model main = openai/gpt-4o\n\
         tool secure = mcp \"http://{addr}/mcp\" with auth bearer \"${{env:SR_TEST_TOKEN}}\"\n\
         tool never = mcp \"stdio:sh -c 'touch started; sleep 60'\"\n",
        addr = server.addr
    );
    let dir = work_dir("lazy");
    let program = compile(&dir.join("agent.sr"), &source);
    let env = |name: &str| (name == "SR_TEST_TOKEN").then(|| "tok-lazy-1234".to_string());
    let hub = McpHub::new(&program.tools, &McpOptions::default(), &env);
    // Defined, resolved (secrets known), and nobody contacted.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(server.header("/mcp", "authorization").is_empty());
    assert!(hub.tools("secure").is_empty());
    let (tools, warning) = hub.use_tools("secure").await;
    assert_eq!((tools.len(), warning), (1, None));
    assert_eq!(server.header("/mcp", "authorization")[0], "Bearer tok-lazy-1234");
    // The stdio server no agent used was never started.
    assert!(!Path::new("started").exists() && !dir.join("started").exists());
    hub.close().await;
    assert!(hub.tools("secure").is_empty());
}

#[tokio::test]
async fn a_flow_calls_mcp_tools_and_gets_structured_content_else_text() {
    let Some(entry) = everything() else { return };
    let source = format!(
        "tool everything = mcp \"{}\"\n\n\
         flow main:\n    \
         $echo = everything.echo(\"hi\")\n    \
         $sum = everything.get_sum(2, 40)\n    \
         $weather = everything.get_structured_content({{location: \"Chicago\"}})\n    \
         return {{echo: $echo, sum: $sum, weather: $weather}}\n",
        stdio(entry)
    );
    let dir = work_dir("flow");
    let program = compile(&dir.join("flow.sr"), &source);
    let hub = Arc::new(McpHub::connect(&program.tools, &McpOptions::default()).await);
    let events = run(&program, Arc::new(ScriptedProvider::new()), hub, Journal::unrecorded()).await;
    let result = events.iter().find_map(|e| match &e.payload {
        Payload::RunFinished { result, .. } => Some(result.clone()),
        _ => None,
    });
    assert_eq!(
        result.flatten(),
        Some(json!({
            "echo": "Echo: hi",
            "sum": "The sum of 2 and 40 is 42.",
            "weather": {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82},
        }))
    );
    let calls: Vec<(String, Value)> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolCall { tool, args, .. } => Some((tool.clone(), args.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(calls[1], ("everything__get-sum".to_string(), json!({"a": 2, "b": 40})));
}
