//! W0002 `delegate-and-use`: an agent both delegates to agents and uses agents
//! as tools.
//!
//! An error, as upstream's `check` reports it, though upstream calls it a warning.
//!
//! ```sr
//! prompt p: """Help."""
//! agent main:
//!     instruction p
//!     delegate helper
//!     use helper
//! agent helper:
//!     instruction p
//! ```
//!
//! `agent 'main' has both delegate and use - this is unusual`. Fix: choose one:
//! `delegate` hands the conversation over, `use` calls the agent as a tool.

use sr_syntax::{Code, Describe};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DelegateAndUse {
    pub agent: String,
}

impl Describe for DelegateAndUse {
    fn code(&self) -> Code {
        Code::W0002
    }

    fn message(&self) -> String {
        format!("agent '{}' has both delegate and use - this is unusual", self.agent)
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn is_an_error_despite_its_w() {
        expect!["W0002 error: agent 'main' has both delegate and use - this is unusual | help:  | fixes: []"].assert_eq(&render(DelegateAndUse { agent: "main".into() }));
    }
}
