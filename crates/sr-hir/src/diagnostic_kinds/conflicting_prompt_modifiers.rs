//! E0014 `conflicting-prompt-modifiers`: two declarations of one prompt give it
//! different models, schemas or inheritance.
//!
//! ```sr
//! model fast = anthropic/claude-haiku
//! model slow = anthropic/claude-opus
//! prompt greeting using model "fast": """Say hello."""
//! prompt greeting using model "slow"
//! ```
//!
//! `conflicting model for prompt 'greeting': 'fast' vs 'slow'`. Fix: keep one
//! value.

use sr_syntax::{Code, Describe};

/// `modifier` is `model`, `expecting` or `inherit`; `first` and `second` its two values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConflictingPromptModifier {
    pub modifier: &'static str,
    pub prompt: String,
    pub first: String,
    pub second: String,
}

impl Describe for ConflictingPromptModifier {
    fn code(&self) -> Code {
        Code::E0014
    }

    fn message(&self) -> String {
        let ConflictingPromptModifier { modifier, prompt, first, second } = self;
        format!("conflicting {modifier} for prompt '{prompt}': '{first}' vs '{second}'")
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn names_both_values() {
        let kind = ConflictingPromptModifier {
            modifier: "model",
            prompt: "greeting".into(),
            first: "fast".into(),
            second: "slow".into(),
        };
        expect!["E0014 error: conflicting model for prompt 'greeting': 'fast' vs 'slow' | help:  | fixes: []"].assert_eq(&render(kind));
    }
}
