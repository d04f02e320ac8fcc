//! SR116 `imported-local-program`: an imported file defines a stdio MCP tool
//! (`mcp "stdio:…"`).
//!
//! Reported at the `import` of the workload, with the command and where the tool
//! is defined, because the runtime starts that program as the user the first
//! time an agent uses the tool.
//!
//! ```sr
//! # main.sr
//! import ./tools.sr
//! prompt p: """Help."""
//! agent:
//!     instruction p
//!     tools gh
//! # tools.sr
//! tool gh = mcp "stdio:npx -y @acme/gh-server"
//! ```
//!
//! `imported tool 'gh' starts a local program: npx -y @acme/gh-server`. Fix: read
//! the imported file; define the tool in the workload itself if you mean it.

use sr_syntax::{Code, Describe};

/// An imported stdio MCP tool and the command it starts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ImportedLocalProgram {
    pub tool: String,
    pub command: String,
}

impl Describe for ImportedLocalProgram {
    fn code(&self) -> Code {
        Code::SR116
    }

    fn message(&self) -> String {
        format!("imported tool '{}' starts a local program: {}", self.tool, self.command)
    }

    fn help(&self) -> Option<String> {
        Some("it runs with your rights the first time an agent uses the tool".to_string())
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn shows_the_command() {
        expect!["SR116 warning: imported tool 'shell' starts a local program: bash -c ls | help: it runs with your rights the first time an agent uses the tool | fixes: []"].assert_eq(&render(ImportedLocalProgram { tool: "shell".into(), command: "bash -c ls".into() }));
    }
}
