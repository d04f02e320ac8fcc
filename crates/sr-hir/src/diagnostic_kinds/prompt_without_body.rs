//! E0013 `prompt-without-body`: no declaration of a prompt gives its text.
//!
//! Upstream merges a prompt's declarations (one may give the text, another its
//! model or schema); this is reported when none of them has a body.
//!
//! ```sr
//! prompt greeting using model "fast"
//! ```
//!
//! `prompt 'greeting' has no body after merging all definitions`. Fix: add a
//! body, `prompt greeting: """..."""`.

use sr_syntax::{Code, Describe};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PromptWithoutBody {
    pub prompt: String,
}

impl Describe for PromptWithoutBody {
    fn code(&self) -> Code {
        Code::E0013
    }

    fn message(&self) -> String {
        format!("prompt '{}' has no body after merging all definitions", self.prompt)
    }

    fn help(&self) -> Option<String> {
        Some(format!("add a body definition: prompt {}: \"\"\"...\"\"\"", self.prompt))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn help_shows_the_body_to_add() {
        expect![[r#"E0013 error: prompt 'greeting' has no body after merging all definitions | help: add a body definition: prompt greeting: """...""" | fixes: []"#]].assert_eq(&render(PromptWithoutBody { prompt: "greeting".into() }));
    }
}
