//! Tools agents can call: upstream's builtin file tools (jailed to the work
//! directory, see `jail`) and CLI tool (sandboxed, see `cli`), agents used as tools, MCP
//! servers' tools and remote A2A agents (`crate::a2a`).

mod cli;
mod fs;
mod jail;
mod names;

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use sr_hir::ToolData;
use sr_hir::tool_functions::{Param, ToolKind};

use crate::RunOptions;

pub use jail::{Entry, Jail, Opened};

/// What a model sees of a tool: the providers' own declaration.
pub use sr_llm::ToolSpec;

/// A tool failure the model is told about (it is not a run failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(pub String);

/// What a tool reports while it runs: a remote agent's task update (its
/// state, and the text of its status message, artifact or message). Each
/// becomes a `remote_update` event, and the journal keeps them with the call
/// so that a replay reports them again with the remote gone.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Update {
    pub task_id: String,
    pub state: String,
    pub text: String,
}

/// Where a running tool reports its [`Update`]s.
pub type Report = Arc<dyn Fn(Update) + Send + Sync>;

pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    /// The spec's name, without building the spec.
    fn name(&self) -> String {
        self.spec().name
    }
    fn call(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>>;
    /// Calls it with the idempotency key the journal gives the call (the same
    /// when a call cut off by a crash is made again); tools that can pass it
    /// on (MCP `_meta`, a sandboxed command's environment) do.
    fn call_keyed(&self, args: Value, _key: &str) -> BoxFuture<'_, Result<Value, ToolError>> {
        self.call(args)
    }
    /// Calls it with its key, reporting what happens during the call to
    /// `report` (a remote agent's stream does; other tools report nothing).
    fn call_reporting(&self, args: Value, key: &str, _report: Report) -> BoxFuture<'_, Result<Value, ToolError>> {
        self.call_keyed(args, key)
    }
    /// Whether calling it twice with the same arguments has the effect of
    /// calling it once: a resumed run calls it again when a crash cut a call
    /// off, rather than asking (see `crate::in_doubt`).
    fn idempotent(&self) -> bool {
        false
    }
}

/// The builtin tools a `tool` definition (or a bare name in `tools`) gives, by
/// upstream's rules (`sr_hir::tool_functions::ToolKind::of`). A cli reference
/// with a `.network` segment (`streetrace.cli.network`) may use the network;
/// one with a `.host` segment runs on the host, if `options` allow it.
pub fn builtin_tools(name: &str, data: Option<&ToolData>, jail: &Jail, options: &RunOptions) -> Vec<Arc<dyn Tool>> {
    match ToolKind::of(name, data) {
        ToolKind::FsReadonly => fs::read_only(jail),
        ToolKind::Fs => fs::read_write(jail),
        ToolKind::Cli => {
            let key = data.and_then(ToolData::builtin_key).unwrap_or(name).to_lowercase();
            let segments: Vec<&str> = key.split('.').collect();
            let place = if segments.contains(&"host") {
                cli::Place::Host { allowed: options.allow_host_tools }
            } else {
                cli::Place::Sandbox { network: segments.contains(&"network") }
            };
            vec![Arc::new(cli::ExecuteCli { jail: jail.clone(), place, timeout: options.command_timeout })]
        }
        // MCP tools and remote A2A agents come from the hub; the state tool is
        // served by the run itself (`run::state_tool`).
        ToolKind::Mcp | ToolKind::A2a | ToolKind::State | ToolKind::None => Vec::new(),
    }
}

/// Function `function` of a builtin file tool, made alone (a flow's call).
pub(crate) fn file_function(kind: ToolKind, function: &str, jail: &Jail) -> Option<Arc<dyn Tool>> {
    let function = kind.functions()?.into_iter().find(|f| f.name == function)?;
    matches!(kind, ToolKind::Fs | ToolKind::FsReadonly).then(|| fs::tool(function, jail))
}

/// What a builtin tool function gives a flow: the output of a success
/// (`list_directory`'s as a list of names), the error of a failure.
pub(crate) fn flow_value(function: &str, result: Value) -> Result<Value, String> {
    match result.get("result").and_then(Value::as_str) {
        Some("success") => {
            let output = result.get("output").cloned().unwrap_or(Value::Null);
            Ok(if function == "list_directory" { fs::listing_names(output) } else { output })
        }
        Some("failure") => {
            Err(result.get("error").and_then(Value::as_str).unwrap_or("the tool failed without saying why").to_string())
        }
        _ => Ok(result),
    }
}

/// Upstream's result shape for file tools.
fn success(tool: &str, output: Value) -> Value {
    json!({"tool_name": tool, "result": "success", "output": output})
}

fn failure(tool: &str, error: impl std::fmt::Display) -> Value {
    json!({"tool_name": tool, "result": "failure", "error": error.to_string()})
}

/// A required string argument.
pub(crate) fn string_arg(args: &Value, name: &str) -> Result<String, ToolError> {
    match args.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(ToolError(format!("argument '{name}' must be a string, got {other}"))),
        None => Err(ToolError(format!("missing argument '{name}'"))),
    }
}

fn object_schema(params: &[Param]) -> Value {
    let props: serde_json::Map<String, Value> =
        params.iter().map(|p| (p.name.to_string(), json!({"type": "string", "description": p.doc}))).collect();
    let required: Vec<&str> = params.iter().filter(|p| p.required).map(|p| p.name).collect();
    json!({"type": "object", "properties": props, "required": required})
}

/// The directory tools run in.
pub fn work_dir(path: Option<PathBuf>) -> std::io::Result<Jail> {
    Jail::new(path.unwrap_or(std::env::current_dir()?))
}
