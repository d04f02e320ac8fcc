//! The agent's tools as the sandbox sees them: declarations, the host-side callback,
//! and the typed Python functions generated from the declarations.

mod stubs;
mod toolbox;

use std::fmt;

use serde_json::Value;

use crate::BoxFuture;

pub(crate) use toolbox::{Invalid, Toolbox};

/// A tool's declaration, as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: Value,
}

/// A tool failure that the agent's code sees as `ToolError` (not a run failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(pub String);

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToolError {}

/// Runs the agent's tools on the host. Before a call the session has checked `args`
/// against the tool's schema; it applies the timeout and size limits, and reports the
/// call and its result as step events (the runtime's tool events and spans).
pub trait ToolHost: Send + Sync {
    fn call<'a>(&'a self, name: &'a str, args: Value) -> BoxFuture<'a, Result<Value, ToolError>>;
}
