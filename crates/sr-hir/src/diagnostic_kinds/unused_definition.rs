//! SR100 `unused-definition`: a model, schema, tool, policy, prompt, agent, flow
//! or executor nothing refers to.
//!
//! Not reported in files other files import (a library defines things for its
//! importers). Editors show the definition faded.
//!
//! ```sr
//! prompt greeting: """Say hello."""
//! prompt farewell: """Say goodbye."""
//! agent main:
//!     instruction greeting
//! ```
//!
//! `prompt 'farewell' is never used`. Fix: remove it, or refer to it from an
//! agent or a flow.

use sr_syntax::{Code, Describe};

use crate::ItemKind;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unused {
    pub kind: ItemKind,
    pub name: String,
}

impl Describe for Unused {
    fn code(&self) -> Code {
        Code::SR100
    }

    fn message(&self) -> String {
        format!("{} '{}' is never used", self.kind.describe(), self.name)
    }

    fn help(&self) -> Option<String> {
        Some("remove it, or refer to it from an agent or a flow".to_string())
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn is_a_warning_naming_the_kind() {
        expect!["SR100 warning: retry policy 'r' is never used | help: remove it, or refer to it from an agent or a flow | fixes: []"].assert_eq(&render(Unused { kind: ItemKind::RetryPolicy, name: "r".into() }));
    }
}
