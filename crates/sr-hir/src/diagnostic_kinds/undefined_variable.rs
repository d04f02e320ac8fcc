//! SR101 `undefined-variable`: a variable nothing assigns, where upstream does
//! not look.
//!
//! `${x}` in flow strings, `log`/`notify`/`escalate` expressions, `match` arms,
//! `on failure` blocks, filter expressions, property assignments and `history`.
//!
//! ```sr
//! flow main:
//!     log "hello ${nme}"
//! ```
//!
//! `undefined variable '$nme'`. Fix: correct the name, or assign it first.

use sr_syntax::{Code, Describe};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UndefinedVariable {
    pub name: String,
}

impl Describe for UndefinedVariable {
    fn code(&self) -> Code {
        Code::SR101
    }

    fn message(&self) -> String {
        format!("undefined variable '${}'", self.name)
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn names_the_variable() {
        expect!["SR101 error: undefined variable '$nme' | help:  | fixes: []"].assert_eq(&render(UndefinedVariable { name: "nme".into() }));
    }
}
