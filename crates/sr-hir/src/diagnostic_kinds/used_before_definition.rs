//! E0002 `used-before-definition`: a variable is read before anything assigns it.
//!
//! In the default mode a variable is defined once any statement before it (in
//! text order, in any block) assigns it, once a flow it ran assigns it, or when a
//! flow that runs this flow assigns it; `on start` assignments are visible
//! everywhere. `--compat upstream` follows upstream's block scopes (see "Where
//! upstream's checker is wrong" below).
//!
//! ```sr
//! flow main:
//!     $sum = $total
//!     $total = 1
//!     return $sum
//! ```
//!
//! `variable '$total' used before definition`. Fix: assign it first, or pass it in.

use sr_syntax::{Code, Describe};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UsedBeforeDefinition {
    pub name: String,
}

impl Describe for UsedBeforeDefinition {
    fn code(&self) -> Code {
        Code::E0002
    }

    fn message(&self) -> String {
        format!("variable '${}' used before definition", self.name)
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn names_the_variable_with_its_dollar() {
        expect!["E0002 error: variable '$total' used before definition | help:  | fixes: []"]
            .assert_eq(&render(UsedBeforeDefinition { name: "total".into() }));
    }
}
