//! E0016 `instruction-runtime-variable`: an agent's instruction prompt
//! interpolates a variable only known at run time, such as `${input_prompt}`.
//!
//! Upstream builds an agent's instruction before the run starts, so the variable
//! has no value there.
//!
//! ```sr
//! prompt review: """Review ${input_prompt}"""
//! agent main:
//!     instruction review
//! ```
//!
//! `instruction 'review' (used by agent 'main') references runtime variable
//! '$input_prompt'`. Fix: move the variable to a prompt the agent is called with,
//! or compose the instruction from other prompts.

use sr_syntax::{Code, Describe};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InstructionRuntimeVariable {
    pub instruction: String,
    pub agent: String,
    pub variable: String,
}

impl Describe for InstructionRuntimeVariable {
    fn code(&self) -> Code {
        Code::E0016
    }

    fn message(&self) -> String {
        let InstructionRuntimeVariable { instruction, agent, variable } = self;
        format!("instruction '{instruction}' (used by agent '{agent}') references runtime variable '${variable}'")
    }

    fn help(&self) -> Option<String> {
        Some(format!(
            "move '${}' to a prompt field, or use prompt composition with other prompts",
            self.variable
        ))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn names_instruction_agent_and_variable() {
        let kind = InstructionRuntimeVariable {
            instruction: "review".into(),
            agent: "main".into(),
            variable: "input_prompt".into(),
        };
        expect!["E0016 error: instruction 'review' (used by agent 'main') references runtime variable '$input_prompt' | help: move '$input_prompt' to a prompt field, or use prompt composition with other prompts | fixes: []"].assert_eq(&render(kind));
    }
}
