//! MCP servers' tools (`tool x = mcp "URL" [with auth …]`).

use std::sync::Arc;

use crate::tools::Tool;

/// Connections to the MCP servers a program names, and their tools.
#[derive(Default)]
pub struct McpHub {
    servers: Vec<(String, Vec<Arc<dyn Tool>>)>,
}

impl McpHub {
    /// The tools of the server defined as `name`.
    pub fn tools(&self, name: &str) -> Vec<Arc<dyn Tool>> {
        self.servers.iter().find(|(n, _)| n == name).map(|(_, t)| t.clone()).unwrap_or_default()
    }
}
