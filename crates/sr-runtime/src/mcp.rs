//! MCP servers' tools (`tool x = mcp "URL" [with auth …]`).
//!
//! - `mcp "stdio:COMMAND ARGS..."` starts `COMMAND` with `ARGS` (split like a
//!   POSIX shell word list, quotes allowed; no shell runs) in the current
//!   directory and speaks MCP over its stdin and stdout. It inherits only
//!   `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM` and `USER` (as with the MCP
//!   reference SDKs, so that API keys stay with the runtime); custom options
//!   become its environment variables: `with GITHUB_TOKEN "${env:GH_TOKEN}"`.
//! - `mcp "http(s)://…"` is a legacy SSE server when the URL contains `/sse`
//!   (any case), as upstream decides, and a streamable HTTP server otherwise.
//!   `with auth bearer "V"` sends `Authorization: Bearer V`, `auth basic "V"`
//!   sends `Authorization: Basic V` with `V` as written (no base64, like
//!   upstream), and custom options are headers.
//! - `${env:VAR}` and `${VAR}` in auth and option values are resolved from the
//!   environment when connecting; their values never appear in warnings,
//!   errors, recordings or `Debug` output.
//!
//! A server is connected when an agent that uses it first runs, within a
//! connect timeout: a server no agent of the run uses (say, in an imported
//! file) is never started or contacted. A server that cannot be reached gives
//! a warning (at that first use) and no tools; the run goes on. At the end of
//! a run [`McpHub::close`] closes every session gracefully (a stdio server
//! sees its input end and may exit on its own).
//!
//! Models see a tool `t` of the server defined as `tool s = mcp …` as `s__t`:
//! two servers' tools never collide, nor with builtin tools, and a tool keeps
//! its name when the program adds a server.
//!
//! A recording holds the listing, one `mcp_tools` line per server used, so
//! that a replay shows the model the same tools without contacting any server:
//! `{"kind":"mcp_tools","server":"s","tools":[{"name","description","parameters"}]}`,
//! with `"warning"` instead of tools for a server that could not be reached;
//! and one `{"kind":"mcp_notice","message"}` line per warning a run shows at
//! its start.

mod connect;
mod secret;
mod server;
mod sse;
mod tool;

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use indexmap::IndexMap;
use serde_json::{Value, json};
use sr_hir::{Name, ToolData};
use sr_llm::{Cassette, LlmError};

use crate::tools::{Tool, ToolSpec};
use server::{Definition, Server};
use tool::{ListedTool, McpTool};

/// The `kind` of the cassette lines that record the servers' tools.
pub const MCP_TOOLS_KIND: &str = "mcp_tools";

/// Whether a `tool` definition is an MCP server's, so that its tools come
/// from the hub: `mcp "URL"`, or the long form with `type: mcp` and a `url`.
pub fn is_mcp(data: &ToolData) -> bool {
    Definition::of(data).is_some()
}

#[derive(Debug, Clone)]
pub struct McpOptions {
    /// For starting a server, the handshake and the listing of its tools.
    pub connect_timeout: Duration,
    /// For one tool call; the MCP reference SDK's default.
    pub call_timeout: Duration,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions { connect_timeout: Duration::from_secs(30), call_timeout: Duration::from_secs(60) }
    }
}

/// The kind of the cassette lines that hold warnings shown at a run's start.
pub const MCP_NOTICE_KIND: &str = "mcp_notice";

/// The MCP servers a program defines, connected on first use.
#[derive(Default)]
pub struct McpHub {
    servers: IndexMap<String, Entry>,
    options: McpOptions,
    /// The values of the `${env:…}` variables the servers use.
    secrets: Vec<String>,
    /// Warnings for the start of a run (variables too short to be secret).
    notices: Vec<String>,
    /// Where listings are recorded as servers are connected.
    recording: std::sync::Mutex<Option<Arc<Cassette>>>,
}

/// One server: not used yet, or its tools, or closed.
struct Entry {
    state: tokio::sync::Mutex<State>,
    /// Whether a run was shown the server's warning (at its first use).
    announced: std::sync::atomic::AtomicBool,
}

impl Entry {
    fn new(state: State) -> Entry {
        Entry { state: tokio::sync::Mutex::new(state), announced: Default::default() }
    }
}

enum State {
    /// The server as resolved (or why it cannot be).
    Unused(Result<Server, (String, String)>),
    /// Connected, or failed to.
    Ready(Listing),
    Closed,
}

/// One server's tools, or why it has none.
struct Listing {
    tools: Vec<Arc<dyn Tool>>,
    warning: Option<String>,
    client: Option<Arc<connect::Client>>,
}

impl McpHub {
    /// The MCP servers among `tools` (a program's tool definitions), with
    /// `${env:VAR}` read from `env`; nothing is connected yet.
    pub fn new(
        tools: &IndexMap<Name, ToolData>,
        options: &McpOptions,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> McpHub {
        let mut hub = McpHub { options: options.clone(), ..McpHub::default() };
        for (name, data) in tools {
            let Some(definition) = Definition::of(data) else { continue };
            let name = name.to_string();
            let resolved = Server::resolve(&name, definition, env);
            if let Ok(server) = &resolved {
                hub.secrets.extend(server.secrets.values().iter().cloned());
                hub.notices.extend(server.secrets.too_short.iter().map(|var| too_short(var)));
            }
            let resolved = resolved.map_err(|e| (definition.url.to_string(), e));
            hub.servers.insert(name, Entry::new(State::Unused(resolved)));
        }
        hub
    }

    /// Connects to the MCP servers among `tools` at once, reading `${env:VAR}`
    /// from the process environment.
    pub async fn connect(tools: &IndexMap<Name, ToolData>, options: &McpOptions) -> McpHub {
        McpHub::connect_with_env(tools, options, &|name| std::env::var(name).ok()).await
    }

    /// Like [`McpHub::connect`], reading `${env:VAR}` from `env`: every server
    /// is connected, all at once.
    pub async fn connect_with_env(
        tools: &IndexMap<Name, ToolData>,
        options: &McpOptions,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> McpHub {
        let hub = McpHub::new(tools, options, env);
        join_all(hub.servers.keys().map(|name| hub.ensure(name))).await;
        hub
    }

    /// The hub a recorded run had: the same tools, no connections.
    pub fn from_recording(text: &str) -> Result<McpHub, String> {
        let mut hub = McpHub::default();
        for (line, entry) in sr_llm::cassette_entries(text, MCP_TOOLS_KIND).map_err(|e| e.to_string())? {
            let bad = |what: &str| format!("line {line}: the MCP listing has {what}");
            let server = entry["server"].as_str().ok_or_else(|| bad("no server"))?;
            let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
            for tool in entry["tools"].as_array().map(Vec::as_slice).unwrap_or_default() {
                let name = tool["name"].as_str().ok_or_else(|| bad("a tool without a name"))?;
                let description = tool["description"].as_str().unwrap_or_default();
                let parameters = tool["parameters"].clone();
                let spec = ToolSpec { name: name.to_string(), description: description.to_string(), parameters };
                tools.push(Arc::new(ListedTool { spec }));
            }
            let warning = entry["warning"].as_str().map(str::to_string);
            // A resumed run's journal may list a server again: the first listing is the run's.
            let listing = Listing { tools, warning, client: None };
            hub.servers.entry(server.to_string()).or_insert(Entry::new(State::Ready(listing)));
        }
        for (_, entry) in sr_llm::cassette_entries(text, MCP_NOTICE_KIND).map_err(|e| e.to_string())? {
            if let Some(message) = entry["message"].as_str()
                && !hub.notices.iter().any(|n| n == message)
            {
                hub.notices.push(message.to_string());
            }
        }
        Ok(hub)
    }

    /// Records the listings to `cassette`, for [`McpHub::from_recording`]:
    /// those of servers connected so far now, the others when they connect.
    pub fn record(&self, cassette: Arc<Cassette>) -> Result<(), LlmError> {
        for message in &self.notices {
            cassette.append(&json!({"kind": MCP_NOTICE_KIND, "message": message}))?;
        }
        for (server, entry) in &self.servers {
            if let Ok(state) = entry.state.try_lock()
                && let State::Ready(listing) = &*state
            {
                cassette.append(&listing_entry(server, listing))?;
            }
        }
        *self.recording.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(cassette);
        Ok(())
    }

    /// The tools of the server defined as `name`, connecting it if this is
    /// its first use; with the server's warning the first time it is asked.
    pub async fn use_tools(&self, name: &str) -> (Vec<Arc<dyn Tool>>, Option<String>) {
        let Some(entry) = self.servers.get(name) else { return (Vec::new(), None) };
        self.ensure(name).await;
        let first = !entry.announced.swap(true, std::sync::atomic::Ordering::Relaxed);
        let state = entry.state.lock().await;
        match &*state {
            State::Ready(listing) => (listing.tools.clone(), if first { listing.warning.clone() } else { None }),
            _ => (Vec::new(), None),
        }
    }

    /// Connects the server `name` unless it was.
    async fn ensure(&self, name: &str) {
        let Some(entry) = self.servers.get(name) else { return };
        let mut state = entry.state.lock().await;
        if !matches!(&*state, State::Unused(_)) {
            return;
        }
        let State::Unused(resolved) = std::mem::replace(&mut *state, State::Closed) else { return };
        let (url, listing) = match resolved {
            Ok(server) => (server.url.clone(), open(server, &self.options).await),
            Err((url, e)) => (url.clone(), Listing::failed(name, &url, &e)),
        };
        let recording = self.recording.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        *state = State::Ready(match recording.map(|cassette| cassette.append(&listing_entry(name, &listing))) {
            // Without its listing the recording would replay without these tools.
            Some(Err(e)) => Listing::failed(name, &url, &format!("cannot record its tools: {e}")),
            _ => listing,
        });
    }

    /// The tools of the server defined as `name`, if it is connected.
    pub fn tools(&self, name: &str) -> Vec<Arc<dyn Tool>> {
        match self.servers.get(name).and_then(|entry| entry.state.try_lock().ok()) {
            Some(state) => match &*state {
                State::Ready(listing) => listing.tools.clone(),
                _ => Vec::new(),
            },
            None => Vec::new(),
        }
    }

    /// Why some connected servers have no tools, and the run's notices; free of secrets.
    pub fn warnings(&self) -> Vec<String> {
        let listed = self.servers.values().filter_map(|entry| match &*entry.state.try_lock().ok()? {
            State::Ready(listing) => listing.warning.clone(),
            _ => None,
        });
        self.notices.iter().cloned().chain(listed).collect()
    }

    /// Warnings for the start of a run: variables too short to be kept secret.
    pub fn notices(&self) -> Vec<String> {
        self.notices.clone()
    }

    /// Adds the values of the variables the servers use to `redactor`.
    pub fn add_secrets(&self, redactor: &sr_llm::Redactor) {
        for value in &self.secrets {
            let _ = redactor.add(value);
        }
    }

    /// Closes every connected session gracefully, each within the connect
    /// timeout; the hub has no tools afterwards.
    pub async fn close(&self) {
        join_all(self.servers.values().map(|entry| async move {
            let mut state = entry.state.lock().await;
            if let State::Ready(listing) = std::mem::replace(&mut *state, State::Closed)
                && let Some(client) = listing.client
            {
                drop(listing.tools);
                match Arc::try_unwrap(client) {
                    Ok(mut client) => {
                        let _ = client.close_with_timeout(self.options.connect_timeout).await;
                    }
                    // A tool still held elsewhere: stop the session without waiting.
                    Err(client) => client.cancellation_token().cancel(),
                }
            }
        }))
        .await;
    }
}

fn too_short(var: &str) -> String {
    format!(
        "environment variable '{var}' has a value shorter than {} characters: it is not treated as a secret \
         and may appear in events, sessions and recordings",
        sr_llm::Redactor::MIN_LEN
    )
}

fn listing_entry(server: &str, listing: &Listing) -> Value {
    let mut entry = json!({"kind": MCP_TOOLS_KIND, "server": server});
    match &listing.warning {
        Some(warning) => entry["warning"] = json!(warning),
        None => {
            let tools =
                listing.tools.iter().map(|tool| tool.spec()).map(
                    |spec| json!({"name": spec.name, "description": spec.description, "parameters": spec.parameters}),
                );
            entry["tools"] = Value::Array(tools.collect());
        }
    }
    entry
}

async fn open(server: Server, options: &McpOptions) -> Listing {
    let connected = match tokio::time::timeout(options.connect_timeout, connect::connect(&server)).await {
        Ok(Ok(connected)) => connected,
        Ok(Err(e)) => return Listing::failed(&server.name, &server.url, &server.secrets.redact(&e)),
        Err(_) => {
            let e = format!("no answer within {}s", options.connect_timeout.as_secs_f64());
            return Listing::failed(&server.name, &server.url, &e);
        }
    };
    let client = Arc::new(connected.client);
    let tools = connected.tools.iter().map(|listed| {
        Arc::new(McpTool {
            spec: tool::spec(&server.name, listed),
            remote: listed.name.to_string(),
            server: server.name.clone(),
            client: client.clone(),
            timeout: options.call_timeout,
            secrets: server.secrets.clone(),
        }) as Arc<dyn Tool>
    });
    Listing { tools: tools.collect(), warning: None, client: Some(client) }
}

impl Listing {
    fn failed(name: &str, url: &str, error: &str) -> Listing {
        let warning = format!("MCP server '{name}' ({url}) is unavailable, so are its tools: {error}");
        Listing { tools: Vec::new(), warning: Some(warning), client: None }
    }
}

/// Tool names and warnings only: connections hold secrets.
impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut map = f.debug_map();
        for (server, entry) in &self.servers {
            match entry.state.try_lock().as_deref() {
                Ok(State::Ready(Listing { warning: Some(warning), .. })) => map.entry(server, warning),
                Ok(State::Ready(listing)) => {
                    map.entry(server, &listing.tools.iter().map(|t| t.spec().name).collect::<Vec<_>>())
                }
                Ok(State::Unused(_)) => map.entry(server, &"not connected"),
                Ok(State::Closed) => map.entry(server, &"closed"),
                Err(_) => map.entry(server, &"connecting"),
            };
        }
        map.finish()
    }
}
