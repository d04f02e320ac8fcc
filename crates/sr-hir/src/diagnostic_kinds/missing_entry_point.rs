//! SR105 `missing-entry-point`: no entry point by upstream's rules.
//!
//! Upstream runs `flow main`, `flow default`, an agent named `main`, an unnamed
//! agent, or the only agent, and fails at run time without one; `sr run` starts
//! the first agent.
//!
//! ```sr
//! prompt p: """Help."""
//! agent writer:
//!     instruction p
//! agent reviewer:
//!     instruction p
//! ```
//!
//! `no entry point: …`, help: `sr run` starts the first agent, 'writer'. Fix:
//! name an agent or flow `main`.

use sr_syntax::{Code, Describe};

/// `runs_instead`: what `sr run` starts when there is something to start.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NoEntryPoint {
    pub runs_instead: Option<String>,
}

impl Describe for NoEntryPoint {
    fn code(&self) -> Code {
        Code::SR105
    }

    fn message(&self) -> String {
        "no entry point: define `flow main`, `flow default`, agent `main`, an unnamed agent, or a single agent"
            .to_string()
    }

    fn help(&self) -> Option<String> {
        Some(match &self.runs_instead {
            Some(first) => format!(
                "upstream fails with \"No entry point found in workflow\"; `sr run` starts the first agent, '{first}'. Name an agent or flow `main` to choose"
            ),
            None => "add `flow main:` or an agent; upstream fails with \"No entry point found in workflow\"".to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn help_says_what_sr_run_starts() {
        let first = NoEntryPoint { runs_instead: Some("writer".into()) };
        let nothing = NoEntryPoint { runs_instead: None };
        expect![[r#"
            SR105 warning: no entry point: define `flow main`, `flow default`, agent `main`, an unnamed agent, or a single agent | help: upstream fails with "No entry point found in workflow"; `sr run` starts the first agent, 'writer'. Name an agent or flow `main` to choose | fixes: []
            SR105 warning: no entry point: define `flow main`, `flow default`, agent `main`, an unnamed agent, or a single agent | help: add `flow main:` or an agent; upstream fails with "No entry point found in workflow" | fixes: []"#]].assert_eq(&[render(first), render(nothing)].join("\n"));
    }
}
