//! MCP tools against real servers: the reference `server-everything` from npm
//! over stdio, streamable HTTP and SSE (installed by `tests/mcp/setup.sh`), a
//! local server that shows the headers it got, and a recorded run replayed
//! without any server. Without npm or its registry the tests against
//! `server-everything` are skipped loudly, except in CI, where they fail.
#![allow(clippy::unwrap_used)]

#[path = "mcp/servers.rs"]
mod servers;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use serde_json::{Value, json};
use sr_hir::{AuthKind, Name, RootDatabase, ToolAuth, ToolData};
use sr_llm::{Cassette, Provider, Recorder, Replayer};
use sr_runtime::event::{Emitter, Event, Payload, RunStatus};
use sr_runtime::hook::NoHook;
use sr_runtime::human::Unattended;
use sr_runtime::mcp::{McpHub, McpOptions};
use sr_runtime::record::{LiveTools, ReplayedTools, ToolGate};
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, instruction_contains};
use sr_runtime::tools::{Jail, Tool, ToolError};
use sr_runtime::{Env, RunOptions, Runtime};

use servers::{HeaderServer, HttpServer, everything, silent_server};

fn mcp(url: &str) -> ToolData {
    ToolData::Mcp { url: url.to_string(), auth: None, options: Vec::new() }
}

fn definitions(tools: Vec<(&str, ToolData)>) -> IndexMap<Name, ToolData> {
    tools.into_iter().map(|(name, data)| (Name::from(name), data)).collect()
}

fn stdio(entry: &Path) -> String {
    format!("stdio:node '{}' stdio", entry.display())
}

fn tool(hub: &McpHub, server: &str, name: &str) -> Arc<dyn Tool> {
    let tools = hub.tools(server);
    let names: Vec<String> = tools.iter().map(|t| t.spec().name).collect();
    tools.into_iter().find(|t| t.spec().name == name).unwrap_or_else(|| panic!("no {name} in {names:?}: {hub:?}"))
}

/// The listing and the calls every transport must serve the same way.
async fn lists_and_calls(hub: &McpHub) {
    assert_eq!(hub.warnings(), Vec::<String>::new());
    let echo = tool(hub, "everything", "everything__echo");
    let spec = echo.spec();
    assert_eq!(spec.description, "Echoes back the input string");
    assert_eq!(spec.parameters["properties"]["message"]["type"], "string");
    assert_eq!(echo.call(json!({"message": "hi there"})).await, Ok(json!("Echo: hi there")));

    let sum = tool(hub, "everything", "everything__get-sum");
    assert_eq!(sum.call(json!({"a": 2, "b": 40})).await, Ok(json!("The sum of 2 and 40 is 42.")));

    // Structured content wins over its text rendering.
    let weather = tool(hub, "everything", "everything__get-structured-content");
    assert_eq!(
        weather.call(json!({"location": "Chicago"})).await,
        Ok(json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}))
    );

    // Bad arguments are the model's problem: a tool error, not a crash.
    let Err(ToolError(message)) = echo.call(json!({"wrong": 1})).await else { panic!("echo accepted no message") };
    assert!(message.contains("message"), "{message}");
    let Err(ToolError(message)) = echo.call(json!("text")).await else { panic!("echo accepted a string") };
    assert_eq!(message, "the arguments must be a JSON object, got \"text\"");
}

#[tokio::test]
async fn stdio_server_lists_its_tools_and_answers_calls() {
    let Some(entry) = everything() else { return };
    let hub = McpHub::connect(&definitions(vec![("everything", mcp(&stdio(entry)))]), &McpOptions::default()).await;
    lists_and_calls(&hub).await;
}

#[tokio::test]
async fn streamable_http_server_lists_its_tools_and_answers_calls() {
    let Some(entry) = everything() else { return };
    let server = HttpServer::start(entry, "streamableHttp");
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let hub = McpHub::connect(&definitions(vec![("everything", mcp(&url))]), &McpOptions::default()).await;
    lists_and_calls(&hub).await;
}

#[tokio::test]
async fn sse_server_lists_its_tools_and_answers_calls() {
    let Some(entry) = everything() else { return };
    let server = HttpServer::start(entry, "sse");
    // Upstream's rule: `/sse` anywhere in the URL, in any case, means SSE.
    let url = format!("http://127.0.0.1:{}/SSE", server.port);
    let hub = McpHub::connect(&definitions(vec![("everything", mcp(&url))]), &McpOptions::default()).await;
    lists_and_calls(&hub).await;
}

#[tokio::test]
async fn two_servers_tools_keep_apart_under_their_definition_names() {
    let Some(entry) = everything() else { return };
    let tools = definitions(vec![("one", mcp(&stdio(entry))), ("two", mcp(&stdio(entry)))]);
    let hub = McpHub::connect(&tools, &McpOptions::default()).await;
    let one: Vec<String> = hub.tools("one").iter().map(|t| t.spec().name).collect();
    let two: Vec<String> = hub.tools("two").iter().map(|t| t.spec().name).collect();
    assert!(one.contains(&"one__echo".to_string()), "{one:?}");
    assert_eq!(one.len(), two.len());
    assert!(one.iter().all(|name| !two.contains(name)));
    assert_eq!(tool(&hub, "two", "two__echo").call(json!({"message": "2"})).await, Ok(json!("Echo: 2")));
    assert!(hub.tools("three").is_empty());
}

#[tokio::test]
async fn stdio_servers_get_their_options_as_environment_and_nothing_else_of_ours() {
    let Some(entry) = everything() else { return };
    let source = format!(
        "model main = openai/gpt-4o\ntool everything = mcp \"{}\" with GREETING \"hi ${{env:SR_TEST_NAME}}\"\n",
        stdio(entry)
    );
    let program = compile(&work_dir("env").join("agent.sr"), &source);
    let env = |name: &str| (name == "SR_TEST_NAME").then(|| "Ada".to_string());
    let hub = McpHub::connect_with_env(&program.tools, &McpOptions::default(), &env).await;
    let Ok(Value::String(text)) = tool(&hub, "everything", "everything__get-env").call(json!({})).await else {
        panic!("get-env failed: {hub:?}")
    };
    let seen: IndexMap<String, String> = serde_json::from_str(&text).unwrap();
    assert_eq!(seen["GREETING"], "hi Ada");
    assert_eq!(seen.get("PATH"), std::env::var("PATH").ok().as_ref());
    // API keys and the like stay with the runtime: only the basics are inherited.
    let inherited = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "GREETING"];
    let extra: Vec<&String> = seen.keys().filter(|k| !inherited.contains(&k.as_str())).collect();
    assert!(extra.is_empty(), "{extra:?}");
}

#[tokio::test]
async fn auth_and_options_are_sent_as_headers_and_never_shown() {
    let server = HeaderServer::start().await;
    let secret = "tok-9f8e7d6c5b4a";
    // From source, so that the language's `with auth …, NAME "…"` is what is read.
    let source = format!(
        "model main = openai/gpt-4o\n\
         tool secure = mcp \"http://{addr}/mcp\" with auth bearer \"${{env:SR_TEST_TOKEN}}\", team \"core-${{SR_TEST_TOKEN}}\"\n\
         tool legacy = mcp \"http://{addr}/sse\" with auth basic \"me:${{SR_TEST_TOKEN}}\"\n\
         tool chatty = mcp \"stdio:sh -c 'echo my key is $KEY >&2; exit 1'\" with KEY \"${{SR_TEST_TOKEN}}\"\n",
        addr = server.addr
    );
    let dir = work_dir("auth");
    let program = compile(&dir.join("agent.sr"), &source);
    let env = |name: &str| (name == "SR_TEST_TOKEN").then(|| secret.to_string());
    let hub = McpHub::connect_with_env(&program.tools, &McpOptions::default(), &env).await;

    // Streamable HTTP: on every request, including the call.
    let whoami = tool(&hub, "secure", "secure__whoami");
    assert_eq!(whoami.call(json!({})).await, Ok(json!(format!("Bearer {secret}"))));
    let auth = server.header("/mcp", "authorization");
    assert!(auth.len() >= 3 && auth.iter().all(|v| *v == format!("Bearer {secret}")), "{auth:?}");
    assert!(server.header("/mcp", "team").iter().all(|v| *v == format!("core-{secret}")));

    // SSE: sent as written, no base64 (upstream's behaviour); the refusal is a warning without the secret.
    assert_eq!(server.header("/sse", "authorization"), vec![format!("Basic me:{secret}")]);
    let warnings = hub.warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].starts_with("MCP server 'legacy' ("), "{}", warnings[0]);
    assert!(warnings[0].contains("401"), "{}", warnings[0]);
    assert!(hub.tools("legacy").is_empty());
    // What a server says about its secrets is scrubbed too.
    assert!(warnings[1].ends_with("the server said: my key is [redacted]"), "{}", warnings[1]);

    let shown = format!("{warnings:?} {hub:?} {:?}", whoami.spec());
    assert!(!shown.contains(secret), "{shown}");
    let cassette = dir.join("run.jsonl");
    hub.record(Arc::new(Cassette::create(&cassette).unwrap())).unwrap();
    assert!(!std::fs::read_to_string(&cassette).unwrap().contains(secret));
}

#[tokio::test]
async fn a_missing_environment_variable_is_a_warning_naming_it() {
    let var = "SR_MCP_TEST_SURELY_UNSET_7C1";
    assert!(std::env::var(var).is_err());
    let data = ToolData::Mcp {
        url: "http://127.0.0.1:9/mcp".into(),
        auth: Some(ToolAuth { kind: AuthKind::Bearer, value: format!("${{env:{var}}}") }),
        options: Vec::new(),
    };
    let hub = McpHub::connect(&definitions(vec![("gh", data)]), &McpOptions::default()).await;
    assert_eq!(
        hub.warnings(),
        vec![format!(
            "MCP server 'gh' (http://127.0.0.1:9/mcp) is unavailable, so are its tools: \
             environment variable '{var}' (needed by its auth) is not set"
        )]
    );
    assert!(hub.tools("gh").is_empty());
}

#[tokio::test]
async fn a_slow_call_times_out_and_the_server_stays_usable() {
    let Some(entry) = everything() else { return };
    let options = McpOptions { call_timeout: Duration::from_secs(1), ..McpOptions::default() };
    let hub = McpHub::connect(&definitions(vec![("everything", mcp(&stdio(entry)))]), &options).await;
    let slow = tool(&hub, "everything", "everything__trigger-long-running-operation");
    let started = Instant::now();
    let outcome = slow.call(json!({"duration": 20, "steps": 2})).await;
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(
        outcome,
        Err(ToolError(
            "MCP tool 'trigger-long-running-operation' of server 'everything' did not answer within 1s".into()
        ))
    );
    let echo = tool(&hub, "everything", "everything__echo");
    assert_eq!(echo.call(json!({"message": "still here"})).await, Ok(json!("Echo: still here")));
}

#[tokio::test]
async fn unreachable_servers_are_warnings_and_are_waited_for_together() {
    let (silent, _task) = silent_server().await;
    let tools = definitions(vec![
        ("missing", mcp("stdio:sr-no-such-mcp-server --flag")),
        ("crashing", mcp("stdio:sh -c 'echo config file not found >&2; exit 3'")),
        ("silent1", mcp(&format!("http://{silent}/mcp"))),
        ("silent2", mcp(&format!("http://{silent}/sse"))),
        ("ftp", mcp("ftp://example.invalid/")),
    ]);
    let options = McpOptions { connect_timeout: Duration::from_secs(3), ..McpOptions::default() };
    let started = Instant::now();
    let hub = McpHub::connect(&tools, &options).await;
    // Both silent servers waited out their 3s at the same time.
    assert!(started.elapsed() < Duration::from_millis(5500), "{:?}", started.elapsed());
    let warnings = hub.warnings();
    assert_eq!(warnings.len(), 5, "{warnings:#?}");
    assert!(warnings[0].contains("cannot start 'sr-no-such-mcp-server'"), "{}", warnings[0]);
    assert!(warnings[1].contains("the server said: config file not found"), "{}", warnings[1]);
    assert!(warnings[2].ends_with("no answer within 3s"), "{}", warnings[2]);
    assert!(warnings[3].ends_with("no answer within 3s"), "{}", warnings[3]);
    assert!(warnings[4].ends_with("the URL must start with http://, https:// or stdio:"), "{}", warnings[4]);
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
    tools: Arc<dyn ToolGate>,
) -> Vec<Event> {
    let env = Env {
        provider,
        hook: Arc::new(NoHook),
        jail: Jail::new(work_dir("jail")).unwrap(),
        tools,
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
    let recorder: Arc<dyn Provider> = Arc::new(Recorder::new(Arc::new(model), cassette.clone()));
    let live = run(&program, recorder, Arc::new(LiveTools { cassette: Some(cassette), mcp: hub.clone() })).await;
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
    let provider = Arc::new(Replayer::parse(&text).unwrap());
    let tools = Arc::new(ReplayedTools::from_cassette(&text, replay_hub.clone()).unwrap());
    let replayed = run(&gone, provider, tools).await;
    assert_eq!(replayed, live);

    // A listed tool is never called for real.
    let listed = tool(&replay_hub, "everything", "everything__echo");
    let Err(ToolError(message)) = listed.call(json!({"message": "x"})).await else { panic!("a listed tool ran") };
    assert!(message.contains("only listed in the recording"), "{message}");
}

#[test]
fn recordings_keep_warnings_and_reject_malformed_listings() {
    let text = [
        json!({"kind": "meta", "invocation_id": "x"}),
        json!({"kind": "mcp_tools", "server": "down", "warning": "MCP server 'down' (stdio:x) is unavailable"}),
        json!({"kind": "mcp_tools", "server": "up", "tools": [{"name": "up__t", "description": "d", "parameters": {"type": "object"}}]}),
        json!({"kind": "mcp_tools", "server": "up", "tools": []}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let hub = McpHub::from_recording(&text).unwrap();
    assert_eq!(hub.warnings(), vec!["MCP server 'down' (stdio:x) is unavailable".to_string()]);
    let up = hub.tools("up");
    assert_eq!(up.len(), 1, "the first listing of a server is the run's");
    assert_eq!(up[0].spec().parameters, json!({"type": "object"}));

    let malformed = json!({"kind": "mcp_tools", "server": "s", "tools": [{"description": "no name"}]}).to_string();
    assert_eq!(McpHub::from_recording(&malformed).err().unwrap(), "line 1: the MCP listing has a tool without a name");
    assert!(McpHub::from_recording("{\"kind\":\"mcp_tools\"}").is_err());
    assert!(McpHub::from_recording("not json").is_err());
    assert_eq!(format!("{:?}", McpHub::from_recording("").unwrap()), "{}");
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
    let recorder: Arc<dyn Provider> = Arc::new(Recorder::new(model.clone(), cassette.clone()));
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
        provider: recorder,
        hook: Arc::new(NoHook),
        jail: Jail::new(work_dir("redact-jail")).unwrap(),
        tools: Arc::new(LiveTools { cassette: Some(cassette), mcp: hub.clone() }),
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
    let events =
        run(&program, Arc::new(ScriptedProvider::new()), Arc::new(LiveTools { cassette: None, mcp: hub })).await;
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
