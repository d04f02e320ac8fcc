//! The MCP client: servers' tools, listed and called.
//!
//! A [`Definition`] says where a server is and how to authenticate to it:
//!
//! - `stdio:COMMAND ARGS...` starts `COMMAND` with `ARGS` (split like a
//!   POSIX shell word list, quotes allowed; no shell runs) in the current
//!   directory and speaks MCP over its stdin and stdout. It inherits only
//!   `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM` and `USER` (as with the MCP
//!   reference SDKs, so that API keys stay with the caller); options become
//!   its environment variables.
//! - `http(s)://…` is a legacy SSE server when the URL contains `/sse` (any
//!   case), as upstream decides, and a streamable HTTP server otherwise. A
//!   bearer auth sends `Authorization: Bearer V`, a basic auth sends
//!   `Authorization: Basic V` with `V` as written (no base64, like upstream),
//!   and options are headers.
//! - `${env:VAR}` and `${VAR}` in auth and option values are resolved from the
//!   environment when the hub is made; their values never appear in warnings,
//!   errors, recordings or `Debug` output.
//!
//! A [`Hub`] holds a program's servers and connects each on first use, within
//! a connect timeout: a server nobody uses is never started or contacted. A
//! server that cannot be reached gives a warning (at that first use) and no
//! tools. [`Hub::close`] closes every session gracefully (a stdio server sees
//! its input end and may exit on its own).
//!
//! A tool `t` of the server defined as `s` is named `s__t`: two servers' tools
//! never collide, nor with the caller's own tools, and a tool keeps its name
//! when a server is added.
//!
//! A recording holds the listing, one `mcp_tools` line per server used, so
//! that a replay offers the same tools without contacting any server:
//! `{"kind":"mcp_tools","server":"s","tools":[{"name","description","parameters"}]}`,
//! with `"warning"` instead of tools for a server that could not be reached;
//! and one `{"kind":"mcp_notice","message"}` line per warning the caller shows
//! at its start.
//!
//! This crate knows nothing of the language or of runs: the caller turns its
//! tool definitions into [`Definition`]s and its tool seam wraps [`McpTool`].
//! Without the `client` feature nothing is connected: recordings are read as
//! usual and every live server is unavailable, with a warning that says why.

#[cfg(feature = "client")]
mod connect;
mod error;
mod hub;
#[cfg(feature = "client")]
mod live;
#[cfg(feature = "client")]
mod secret;
#[cfg(feature = "client")]
mod server;
#[cfg(feature = "client")]
mod sse;
mod tool;
mod vars;

use std::time::Duration;

use serde_json::Value;

pub use error::{RecordingError, ToolCallError};
pub use hub::Hub;
pub use tool::McpTool;
pub use vars::{MissingVar, substitute};

/// The `kind` of the cassette lines that record the servers' tools.
pub const MCP_TOOLS_KIND: &str = "mcp_tools";

/// The `_meta` key of a `tools/call` request that holds the call's
/// idempotency key (the same when a call a crash cut off is made again).
pub const IDEMPOTENCY_KEY_META: &str = "streetrace.dev/idempotency-key";

/// The kind of the cassette lines that hold warnings shown at a run's start.
pub const MCP_NOTICE_KIND: &str = "mcp_notice";

/// One server as its definition writes it; secrets are still `${env:…}` references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// `stdio:COMMAND ARGS`, or an `http(s)://` URL.
    pub url: String,
    pub auth: Option<Auth>,
    /// Environment variables of a stdio server, headers of an HTTP one.
    pub options: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auth {
    pub kind: AuthKind,
    pub value: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthKind {
    Bearer,
    Basic,
}

/// What a model sees of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub name: String,
    pub description: String,
    /// The JSON schema of the arguments.
    pub parameters: Value,
}

#[derive(Debug, Clone)]
pub struct Options {
    /// For starting a server, the handshake and the listing of its tools.
    pub connect_timeout: Duration,
    /// For one tool call; the MCP reference SDK's default.
    pub call_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options { connect_timeout: Duration::from_secs(30), call_timeout: Duration::from_secs(60) }
    }
}
