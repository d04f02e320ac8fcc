//! The MCP client against real servers: the reference `server-everything`
//! from npm over stdio, streamable HTTP and SSE (installed by
//! `tests/mcp/setup.sh`), a local server that shows the headers it got, and
//! recorded listings. Without npm or its registry the tests against
//! `server-everything` are skipped loudly, except in CI, where they fail.
#![allow(clippy::unwrap_used)]

#[path = "mcp/servers.rs"]
mod servers;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sr_llm::Cassette;
use sr_mcp::{Auth, AuthKind, Definition, Hub, McpTool, Options};

use servers::{HeaderServer, HttpServer, everything, silent_server};

fn mcp(url: &str) -> Definition {
    Definition { url: url.to_string(), auth: None, options: Vec::new() }
}

fn definitions(servers: Vec<(&str, Definition)>) -> Vec<(String, Definition)> {
    servers.into_iter().map(|(name, definition)| (name.to_string(), definition)).collect()
}

fn options(options: &[(&str, &str)]) -> Vec<(String, String)> {
    options.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
}

fn stdio(entry: &Path) -> String {
    format!("stdio:node '{}' stdio", entry.display())
}

fn tool(hub: &Hub, server: &str, name: &str) -> Arc<McpTool> {
    let tools = hub.tools(server);
    let names: Vec<String> = tools.iter().map(|t| t.spec().name.clone()).collect();
    tools.into_iter().find(|t| t.spec().name == name).unwrap_or_else(|| panic!("no {name} in {names:?}: {hub:?}"))
}

/// The listing and the calls every transport must serve the same way.
async fn lists_and_calls(hub: &Hub) {
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
    let Err(message) = echo.call(json!({"wrong": 1})).await else { panic!("echo accepted no message") };
    assert!(message.to_string().contains("message"), "{message}");
    let Err(message) = echo.call(json!("text")).await else { panic!("echo accepted a string") };
    assert_eq!(message.to_string(), "the arguments must be a JSON object, got \"text\"");
}

#[tokio::test]
async fn stdio_server_lists_its_tools_and_answers_calls() {
    let Some(entry) = everything() else { return };
    let hub = Hub::connect(definitions(vec![("everything", mcp(&stdio(entry)))]), &Options::default()).await;
    lists_and_calls(&hub).await;
}

#[tokio::test]
async fn streamable_http_server_lists_its_tools_and_answers_calls() {
    let Some(entry) = everything() else { return };
    let server = HttpServer::start(entry, "streamableHttp");
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let hub = Hub::connect(definitions(vec![("everything", mcp(&url))]), &Options::default()).await;
    lists_and_calls(&hub).await;
}

#[tokio::test]
async fn sse_server_lists_its_tools_and_answers_calls() {
    let Some(entry) = everything() else { return };
    let server = HttpServer::start(entry, "sse");
    // Upstream's rule: `/sse` anywhere in the URL, in any case, means SSE.
    let url = format!("http://127.0.0.1:{}/SSE", server.port);
    let hub = Hub::connect(definitions(vec![("everything", mcp(&url))]), &Options::default()).await;
    lists_and_calls(&hub).await;
}

#[tokio::test]
async fn two_servers_tools_keep_apart_under_their_definition_names() {
    let Some(entry) = everything() else { return };
    let tools = definitions(vec![("one", mcp(&stdio(entry))), ("two", mcp(&stdio(entry)))]);
    let hub = Hub::connect(tools, &Options::default()).await;
    let one: Vec<String> = hub.tools("one").iter().map(|t| t.spec().name.clone()).collect();
    let two: Vec<String> = hub.tools("two").iter().map(|t| t.spec().name.clone()).collect();
    assert!(one.contains(&"one__echo".to_string()), "{one:?}");
    assert_eq!(one.len(), two.len());
    assert!(one.iter().all(|name| !two.contains(name)));
    assert_eq!(tool(&hub, "two", "two__echo").call(json!({"message": "2"})).await, Ok(json!("Echo: 2")));
    assert!(hub.tools("three").is_empty());
}

#[tokio::test]
async fn stdio_servers_get_their_options_as_environment_and_nothing_else_of_ours() {
    let Some(entry) = everything() else { return };
    let everything =
        Definition { url: stdio(entry), auth: None, options: options(&[("GREETING", "hi ${env:SR_TEST_NAME}")]) };
    let env = |name: &str| (name == "SR_TEST_NAME").then(|| "Ada".to_string());
    let hub = Hub::connect_with_env(definitions(vec![("everything", everything)]), &Options::default(), &env).await;
    let Ok(Value::String(text)) = tool(&hub, "everything", "everything__get-env").call(json!({})).await else {
        panic!("get-env failed: {hub:?}")
    };
    let seen: std::collections::BTreeMap<String, String> = serde_json::from_str(&text).unwrap();
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
    let auth = |kind, value: &str| Some(Auth { kind, value: value.to_string() });
    let servers = definitions(vec![
        (
            "secure",
            Definition {
                url: format!("http://{}/mcp", server.addr),
                auth: auth(AuthKind::Bearer, "${env:SR_TEST_TOKEN}"),
                options: options(&[("team", "core-${SR_TEST_TOKEN}")]),
            },
        ),
        (
            "legacy",
            Definition {
                url: format!("http://{}/sse", server.addr),
                auth: auth(AuthKind::Basic, "me:${SR_TEST_TOKEN}"),
                options: Vec::new(),
            },
        ),
        (
            "chatty",
            Definition {
                url: "stdio:sh -c 'echo my key is $KEY >&2; exit 1'".into(),
                auth: None,
                options: options(&[("KEY", "${SR_TEST_TOKEN}")]),
            },
        ),
    ]);
    let dir = work_dir("auth");
    let env = |name: &str| (name == "SR_TEST_TOKEN").then(|| secret.to_string());
    let hub = Hub::connect_with_env(servers, &Options::default(), &env).await;

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
    let data = Definition {
        url: "http://127.0.0.1:9/mcp".into(),
        auth: Some(Auth { kind: AuthKind::Bearer, value: format!("${{env:{var}}}") }),
        options: Vec::new(),
    };
    let hub = Hub::connect(definitions(vec![("gh", data)]), &Options::default()).await;
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
    let options = Options { call_timeout: Duration::from_secs(1), ..Options::default() };
    let hub = Hub::connect(definitions(vec![("everything", mcp(&stdio(entry)))]), &options).await;
    let slow = tool(&hub, "everything", "everything__trigger-long-running-operation");
    let started = Instant::now();
    let outcome = slow.call(json!({"duration": 20, "steps": 2})).await;
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(
        outcome.map_err(|e| e.to_string()),
        Err("MCP tool 'trigger-long-running-operation' of server 'everything' did not answer within 1s".to_string())
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
    let options = Options { connect_timeout: Duration::from_secs(3), ..Options::default() };
    let started = Instant::now();
    let hub = Hub::connect(tools, &options).await;
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

/// A stdio server that takes `delay` seconds to answer `initialize`, and
/// lists one tool, `bump`.
const SLOW_STARTER: &str = r#"
import json, sys, time
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        time.sleep(float(sys.argv[1]))
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "slow", "version": "1"}}
    elif message["method"] == "tools/list":
        result = {"tools": [{"name": "bump", "inputSchema": {"type": "object"}}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

/// Found by `cargo xtask simulate` (seed 20261863): a caller dropped while
/// its server started (a `parallel` branch cancelled by its sibling's
/// failure) left the server closed, so every later call of its tools in the
/// run failed with "tool 'counter' gives no functions". Now the next caller
/// connects it.
#[tokio::test]
async fn a_use_dropped_while_the_server_starts_leaves_it_to_the_next() {
    let dir = work_dir("dropped-start");
    let script = dir.join("slow.py");
    std::fs::write(&script, SLOW_STARTER).unwrap();
    let url = format!("stdio:python3 '{}' 0.5", script.display());
    let hub = Hub::new(definitions(vec![("slow", mcp(&url))]), &Options::default(), &|_| None);
    let dropped = tokio::time::timeout(Duration::from_millis(100), hub.use_tools("slow")).await;
    assert!(dropped.is_err(), "the server answered within 100 ms");
    let (tools, warning) = hub.use_tools("slow").await;
    let names: Vec<String> = tools.iter().map(|t| t.spec().name.clone()).collect();
    assert_eq!(names, ["slow__bump"], "{warning:?}");
}

fn work_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
    let hub = Hub::from_recording(&text).unwrap();
    assert_eq!(hub.warnings(), vec!["MCP server 'down' (stdio:x) is unavailable".to_string()]);
    let up = hub.tools("up");
    assert_eq!(up.len(), 1, "the first listing of a server is the run's");
    assert_eq!(up[0].spec().parameters, json!({"type": "object"}));

    let malformed = json!({"kind": "mcp_tools", "server": "s", "tools": [{"description": "no name"}]}).to_string();
    assert_eq!(
        Hub::from_recording(&malformed).err().unwrap().to_string(),
        "line 1: the MCP listing has a tool without a name"
    );
    assert!(Hub::from_recording("{\"kind\":\"mcp_tools\"}").is_err());
    assert!(Hub::from_recording("not json").is_err());
    assert_eq!(format!("{:?}", Hub::from_recording("").unwrap()), "{}");
}
