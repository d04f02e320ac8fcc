//! E0010 `missing-property`: an agent without `instruction`.
//!
//! ```sr
//! prompt greeting: """Say hello."""
//! agent main:
//!     prompt greeting
//! ```
//!
//! `missing required property 'instruction' in agent 'main'`. Fix: add
//! `instruction <prompt_name>`.

use sr_syntax::{Code, Describe};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MissingInstruction {
    pub agent: String,
}

impl Describe for MissingInstruction {
    fn code(&self) -> Code {
        Code::E0010
    }

    fn message(&self) -> String {
        format!("missing required property 'instruction' in agent '{}'", self.agent)
    }

    fn help(&self) -> Option<String> {
        Some("add 'instruction <prompt_name>' to specify the agent's instruction prompt".to_string())
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn names_the_agent() {
        expect!["E0010 error: missing required property 'instruction' in agent 'main' | help: add 'instruction <prompt_name>' to specify the agent's instruction prompt | fixes: []"].assert_eq(&render(MissingInstruction { agent: "main".into() }));
    }
}
