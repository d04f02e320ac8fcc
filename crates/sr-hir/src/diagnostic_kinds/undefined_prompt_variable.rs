//! E0015 `undefined-prompt-variable`: a prompt's `${name}` that no flow or
//! handler assigns and that is no prompt.
//!
//! Reported at the `${…}` itself (upstream counts from the `prompt` keyword).
//! The help is `did you mean '${x}'?` for a known variable or prompt at least
//! 85% similar (longest common subsequence), as upstream; names over 64
//! characters get none, and at most 256 names of a length that could reach 85%
//! are compared. Upstream accepts only flow assignments; the default mode also
//! accepts handler assignments (the runtime sees them).
//!
//! ```sr
//! prompt greeting: """Say hello to ${user_nme}."""
//! flow main:
//!     $user_name = "Ada"
//!     $g = call llm greeting
//!     return $g
//! ```
//!
//! `prompt 'greeting' references undefined variable '$user_nme'`, help `did you
//! mean '${user_name}'?`. Fix: correct the name (a quick fix offers the suggestion), or
//! assign the variable in a flow.

use sr_syntax::{Code, Describe, Fix};

/// `suggestion`: the known variable the name is a likely typo of.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UndefinedPromptVariable {
    pub prompt: String,
    pub variable: String,
    pub suggestion: Option<String>,
}

impl Describe for UndefinedPromptVariable {
    fn code(&self) -> Code {
        Code::E0015
    }

    fn message(&self) -> String {
        format!("prompt '{}' references undefined variable '${}'", self.prompt, self.variable)
    }

    fn help(&self) -> Option<String> {
        Some(format!("did you mean '${{{}}}'?", self.suggestion.as_ref()?))
    }

    fn fixes(&self) -> Vec<Fix> {
        self.suggestion.iter().map(|variable| Fix::Replace(format!("${{{variable}}}"))).collect()
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn the_fix_replaces_the_whole_interpolation() {
        let typo =
            UndefinedPromptVariable { prompt: "p".into(), variable: "usr".into(), suggestion: Some("user".into()) };
        let unknown = UndefinedPromptVariable { suggestion: None, ..typo.clone() };
        expect![[r#"
            E0015 error: prompt 'p' references undefined variable '$usr' | help: did you mean '${user}'? | fixes: [Replace("${user}")]
            E0015 error: prompt 'p' references undefined variable '$usr' | help:  | fixes: []"#]].assert_eq(&[render(typo), render(unknown)].join("\n"));
    }
}
