//! SR102 `undefined-instruction`: an agent's `instruction` names no prompt.
//!
//! Upstream's checker accepts it and fails only when the agent is built.
//!
//! ```sr
//! prompt greeting: """Say hello."""
//! agent main:
//!     instruction greting
//! ```
//!
//! `instruction 'greting' names no prompt`, help `did you mean 'greeting'?`.
//! Fix: correct the name (a quick fix offers the suggestion), or define the
//! prompt (a quick fix appends one).

use sr_syntax::{Code, DefinitionKind, Describe, Fix};

use super::Suggestion;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UndefinedInstruction {
    pub name: String,
    pub suggestion: Suggestion,
}

impl Describe for UndefinedInstruction {
    fn code(&self) -> Code {
        Code::SR102
    }

    fn message(&self) -> String {
        format!("instruction '{}' names no prompt", self.name)
    }

    fn help(&self) -> Option<String> {
        self.suggestion.help("prompt")
    }

    fn fixes(&self) -> Vec<Fix> {
        let define = Fix::Define(DefinitionKind::Prompt, self.name.clone());
        self.suggestion.replace().into_iter().chain([define]).collect()
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn offers_the_suggestion_and_a_new_prompt() {
        let typo = UndefinedInstruction { name: "greting".into(), suggestion: Suggestion::DidYouMean("greeting".into()) };
        let none = UndefinedInstruction { name: "greeting".into(), suggestion: Suggestion::None };
        expect![[r#"
            SR102 error: instruction 'greting' names no prompt | help: did you mean 'greeting'? | fixes: [Replace("greeting"), Define(Prompt, "greting")]
            SR102 error: instruction 'greeting' names no prompt | help:  | fixes: [Define(Prompt, "greeting")]"#]].assert_eq(&[render(typo), render(none)].join("\n"));
    }
}
