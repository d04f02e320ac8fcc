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
//! A run connects to every server its program defines before it starts (runs
//! ask for tools synchronously), all at once and each within a connect
//! timeout. A server that cannot be reached gives a warning and no tools; the
//! run goes on.
//!
//! Models see a tool `t` of the server defined as `tool s = mcp …` as `s__t`:
//! two servers' tools never collide, nor with builtin tools, and a tool keeps
//! its name when the program adds a server.
//!
//! A recording holds the listing, one `mcp_tools` line per server, so that a
//! replay shows the model the same tools without contacting any server:
//! `{"kind":"mcp_tools","server":"s","tools":[{"name","description","parameters"}]}`,
//! with `"warning"` instead of tools for a server that could not be reached.

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

/// The MCP servers a program defines, and their tools.
#[derive(Default)]
pub struct McpHub {
    servers: IndexMap<String, Listing>,
    /// The values of the `${env:…}` variables the servers use.
    secrets: Vec<String>,
    /// Variables whose values are too short to be redacted, for a warning.
    too_short: Vec<String>,
}

/// One server's tools, or why it has none.
struct Listing {
    tools: Vec<Arc<dyn Tool>>,
    warning: Option<String>,
}

impl McpHub {
    /// Connects to the MCP servers among `tools` (a program's tool
    /// definitions), reading `${env:VAR}` from the process environment.
    pub async fn connect(tools: &IndexMap<Name, ToolData>, options: &McpOptions) -> McpHub {
        McpHub::connect_with_env(tools, options, &|name| std::env::var(name).ok()).await
    }

    /// Like [`McpHub::connect`], reading `${env:VAR}` from `env`.
    pub async fn connect_with_env(
        tools: &IndexMap<Name, ToolData>,
        options: &McpOptions,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> McpHub {
        let definitions = tools.iter().filter_map(|(name, data)| Some((name.to_string(), Definition::of(data)?)));
        let listings = join_all(definitions.map(|(name, definition)| async move {
            match Server::resolve(&name, definition, env) {
                Ok(server) => {
                    let secrets = (server.secrets.values().to_vec(), server.secrets.too_short.clone());
                    (name, open(server, options).await, secrets)
                }
                Err(e) => (name.clone(), Listing::failed(&name, definition.url, &e), Default::default()),
            }
        }))
        .await;
        let mut hub = McpHub::default();
        for (name, listing, (secrets, too_short)) in listings {
            hub.servers.insert(name, listing);
            hub.secrets.extend(secrets);
            hub.too_short.extend(too_short);
        }
        hub
    }

    /// The hub a recorded run had: the same tools, no connections.
    pub fn from_recording(text: &str) -> Result<McpHub, String> {
        let mut servers = IndexMap::new();
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
            servers.entry(server.to_string()).or_insert(Listing { tools, warning });
        }
        Ok(McpHub { servers, ..McpHub::default() })
    }

    /// Writes the listing to `cassette`, for [`McpHub::from_recording`].
    pub fn record(&self, cassette: &Cassette) -> Result<(), LlmError> {
        for (server, listing) in &self.servers {
            let mut entry = json!({"kind": MCP_TOOLS_KIND, "server": server});
            match &listing.warning {
                Some(warning) => entry["warning"] = json!(warning),
                None => {
                    let tools = listing.tools.iter().map(|tool| tool.spec()).map(|spec| {
                        json!({"name": spec.name, "description": spec.description, "parameters": spec.parameters})
                    });
                    entry["tools"] = Value::Array(tools.collect());
                }
            }
            cassette.append(&entry)?;
        }
        Ok(())
    }

    /// The tools of the server defined as `name`.
    pub fn tools(&self, name: &str) -> Vec<Arc<dyn Tool>> {
        self.servers.get(name).map(|listing| listing.tools.clone()).unwrap_or_default()
    }

    /// Why some servers have no tools, and which variables are too short to
    /// be kept secret, for the run to show; free of secrets.
    pub fn warnings(&self) -> Vec<String> {
        let short = self.too_short.iter().map(|name| {
            format!(
                "environment variable '{name}' has a value shorter than {} characters: it is not treated as a secret \
                 and may appear in events, sessions and recordings",
                sr_llm::Redactor::MIN_LEN
            )
        });
        short.chain(self.servers.values().filter_map(|listing| listing.warning.clone())).collect()
    }

    /// Adds the values of the variables the servers use to `redactor`.
    pub fn add_secrets(&self, redactor: &sr_llm::Redactor) {
        for value in &self.secrets {
            let _ = redactor.add(value);
        }
    }
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
    Listing { tools: tools.collect(), warning: None }
}

impl Listing {
    fn failed(name: &str, url: &str, error: &str) -> Listing {
        let warning = format!("MCP server '{name}' ({url}) is unavailable, so are its tools: {error}");
        Listing { tools: Vec::new(), warning: Some(warning) }
    }
}

/// Tool names and warnings only: connections hold secrets.
impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut map = f.debug_map();
        for (server, listing) in &self.servers {
            match &listing.warning {
                Some(warning) => map.entry(server, warning),
                None => map.entry(server, &listing.tools.iter().map(|t| t.spec().name).collect::<Vec<_>>()),
            };
        }
        map.finish()
    }
}
