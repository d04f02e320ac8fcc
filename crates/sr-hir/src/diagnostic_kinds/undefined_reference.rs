//! E0001 `undefined-reference`: a name refers to a model, schema, tool, retry or
//! timeout policy, agent, flow, prompt or executor nothing defines.
//!
//! The help is upstream's: `did you mean 'x'?` for the first defined name sharing
//! the first three letters, else `defined {kind}s are: …` (the first 20, then
//! `and N more`). An agent's `prompt` names a prompt or a variable. In
//! `--compat upstream` only: a retry policy named `fixed`, `linear` or
//! `exponential` is registered by upstream under the empty name, so a reference
//! to it is undefined and two of them are E0003 duplicates of `''`.
//!
//! ```sr
//! prompt greeting: """Say hello."""
//! agent main:
//!     instruction greeting
//!     delegate helpr
//! agent helper:
//!     instruction greeting
//! ```
//!
//! `undefined reference to agent 'helpr'`, help `did you mean 'helper'?`. Fix:
//! correct the name (a quick fix offers the suggestion), or define what it names
//! (a quick fix appends a prompt, agent or tool).

use sr_syntax::{DefinitionKind, Describe, Fix};

use super::Suggestion;
use crate::ItemKind;
use sr_syntax::Code;

/// A reference to a `kind` nothing defines.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UndefinedReference {
    pub kind: ItemKind,
    pub name: String,
    pub suggestion: Suggestion,
}

/// An agent's `prompt`: it names a prompt or a variable. A listed suggestion
/// names the prompts only.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UndefinedPromptOrVariable {
    pub name: String,
    pub suggestion: Suggestion,
}

impl Describe for UndefinedReference {
    fn code(&self) -> Code {
        Code::E0001
    }

    fn message(&self) -> String {
        format!("undefined reference to {} '{}'", self.kind.describe(), self.name)
    }

    fn help(&self) -> Option<String> {
        self.suggestion.help(self.kind.describe())
    }

    fn fixes(&self) -> Vec<Fix> {
        let define = match self.kind {
            ItemKind::Prompt => Some(DefinitionKind::Prompt),
            ItemKind::Agent => Some(DefinitionKind::Agent),
            ItemKind::Tool => Some(DefinitionKind::Tool),
            _ => None,
        };
        let define = define.map(|kind| Fix::Define(kind, self.name.clone()));
        self.suggestion.replace().into_iter().chain(define).collect()
    }
}

impl Describe for UndefinedPromptOrVariable {
    fn code(&self) -> Code {
        Code::E0001
    }

    fn message(&self) -> String {
        format!("undefined reference to prompt or variable '{}'", self.name)
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
    use crate::diagnostic_kinds::{Listing, render};

    #[test]
    fn fixes_come_from_the_suggestion_and_the_kind() {
        let out = [
            render(UndefinedReference {
                kind: ItemKind::Agent,
                name: "helpr".into(),
                suggestion: Suggestion::DidYouMean("helper".into()),
            }),
            render(UndefinedReference {
                kind: ItemKind::Model,
                name: "fas".into(),
                suggestion: Suggestion::Listed(Listing::new(["fast", "slow"], 2)),
            }),
            render(UndefinedReference {
                kind: ItemKind::Agent,
                name: "zz".into(),
                suggestion: Suggestion::Listed(Listing::new((0..30).map(|i| format!("a{i}")), 30)),
            }),
            render(UndefinedPromptOrVariable { name: "plian".into(), suggestion: Suggestion::DidYouMean("plain".into()) }),
            render(UndefinedPromptOrVariable { name: "x".into(), suggestion: Suggestion::None }),
        ];
        expect![[r#"
            E0001 error: undefined reference to agent 'helpr' | help: did you mean 'helper'? | fixes: [Replace("helper"), Define(Agent, "helpr")]
            E0001 error: undefined reference to model 'fas' | help: defined models are: fast, slow | fixes: []
            E0001 error: undefined reference to agent 'zz' | help: defined agents are: a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19 and 10 more | fixes: [Define(Agent, "zz")]
            E0001 error: undefined reference to prompt or variable 'plian' | help: did you mean 'plain'? | fixes: [Replace("plain"), Define(Prompt, "plian")]
            E0001 error: undefined reference to prompt or variable 'x' | help:  | fixes: [Define(Prompt, "x")]"#]]
        .assert_eq(&out.join("\n"));
    }
}
