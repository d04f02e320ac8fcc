//! E0003 `duplicate-definition`: two definitions of one kind share a name.
//!
//! Related: the first definition, also when it is in an imported file (then the
//! help names that file). Prompts are the exception: upstream merges a prompt's
//! declarations (see E0013, E0014).
//!
//! ```sr
//! model fast = anthropic/claude-haiku
//! model fast = openai/gpt-4o-mini
//! ```
//!
//! `duplicate definition of model 'fast'`. Fix: rename or remove one of them.

use sr_syntax::{Code, Describe};

use crate::ItemKind;

/// `first_file`: where the first definition is, when that is another file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DuplicateDefinition {
    pub kind: ItemKind,
    pub name: String,
    pub first_file: Option<String>,
}

impl Describe for DuplicateDefinition {
    fn code(&self) -> Code {
        Code::E0003
    }

    fn message(&self) -> String {
        format!("duplicate definition of {} '{}'", self.kind.describe(), self.name)
    }

    fn help(&self) -> Option<String> {
        Some(format!("'{}' is already defined in {}", self.name, self.first_file.as_ref()?))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn help_names_the_other_file_only() {
        let here = DuplicateDefinition { kind: ItemKind::Model, name: "fast".into(), first_file: None };
        let there = DuplicateDefinition { first_file: Some("lib.sr".into()), ..here.clone() };
        expect![[r#"
            E0003 error: duplicate definition of model 'fast' | help:  | fixes: []
            E0003 error: duplicate definition of model 'fast' | help: 'fast' is already defined in lib.sr | fixes: []"#]]
        .assert_eq(&[render(here), render(there)].join("\n"));
    }
}
