//! Tools agents can call: upstream's builtin file tools (jailed to the work
//! directory) and CLI tool (sandboxed, see `cli`), agents used as tools, and MCP
//! servers' tools.

mod cli;
mod fs;
mod jail;

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use sr_hir::ToolData;

use crate::RunOptions;

pub use jail::Jail;

/// What a model sees of a tool: the providers' own declaration.
pub use sr_llm::ToolSpec;

/// A tool failure the model is told about (it is not a run failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(pub String);

pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    fn call(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>>;
}

/// The builtin tools a `tool` definition (or a bare name in `tools`) gives, by
/// upstream's rules: the reference (or the name) is matched by substring, in
/// order: `fs_readonly`, `fs`, `cli`; anything else gives no tools. A cli
/// reference with a `.network` segment (`streetrace.cli.network`) may use the
/// network; one with a `.host` segment runs on the host, if `options` allow it.
pub fn builtin_tools(name: &str, data: Option<&ToolData>, jail: &Jail, options: &RunOptions) -> Vec<Arc<dyn Tool>> {
    let key = match data {
        Some(ToolData::Builtin(reference) | ToolData::Ref(reference)) if !reference.is_empty() => {
            reference.to_lowercase()
        }
        Some(ToolData::Long { url: Some(url), .. }) => url.to_lowercase(),
        _ => name.to_lowercase(),
    };
    if key.contains("fs_readonly") {
        fs::read_only(jail)
    } else if key.contains("fs") {
        fs::read_write(jail)
    } else if key.contains("cli") {
        let segments: Vec<&str> = key.split('.').collect();
        let place = if segments.contains(&"host") {
            cli::Place::Host { allowed: options.allow_host_tools }
        } else {
            cli::Place::Sandbox { network: segments.contains(&"network") }
        };
        vec![Arc::new(cli::ExecuteCli { jail: jail.clone(), place, timeout: options.command_timeout })]
    } else {
        Vec::new()
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
fn string_arg(args: &Value, name: &str) -> Result<String, ToolError> {
    match args.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(ToolError(format!("argument '{name}' must be a string, got {other}"))),
        None => Err(ToolError(format!("missing argument '{name}'"))),
    }
}

fn object_schema(properties: &[(&str, &str)], required: &[&str]) -> Value {
    let props: serde_json::Map<String, Value> = properties
        .iter()
        .map(|(name, description)| (name.to_string(), json!({"type": "string", "description": description})))
        .collect();
    json!({"type": "object", "properties": props, "required": required})
}

/// The directory tools run in.
pub fn work_dir(path: Option<PathBuf>) -> std::io::Result<Jail> {
    Jail::new(path.unwrap_or(std::env::current_dir()?))
}
