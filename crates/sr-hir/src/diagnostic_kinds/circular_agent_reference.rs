//! E0011 `circular-agent-reference`: agents that delegate to or use each other in
//! a cycle.
//!
//! Every elementary cycle is reported (upstream: the first), with a related
//! location per edge.
//!
//! ```sr
//! prompt p: """Help."""
//! agent a:
//!     instruction p
//!     delegate b
//! agent b:
//!     instruction p
//!     use a
//! ```
//!
//! `circular agent reference detected: a -> b -> a`. Fix: remove one edge of the
//! cycle.

use sr_syntax::{Code, Describe};

/// The agents of the cycle, the first repeated at the end.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CircularAgentReference {
    pub agents: Vec<String>,
}

impl Describe for CircularAgentReference {
    fn code(&self) -> Code {
        Code::E0011
    }

    fn message(&self) -> String {
        format!("circular agent reference detected: {}", self.agents.join(" -> "))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn lists_the_cycle() {
        expect!["E0011 error: circular agent reference detected: a -> b -> a | help:  | fixes: []"].assert_eq(&render(CircularAgentReference { agents: vec!["a".into(), "b".into(), "a".into()] }));
    }
}
