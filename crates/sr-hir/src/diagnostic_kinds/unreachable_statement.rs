//! SR103 `unreachable-statement`: a statement after `return`, `abort`,
//! `continue` or `break` in the same block.
//!
//! ```sr
//! flow main:
//!     return 1
//!     log "done"
//! ```
//!
//! `unreachable statement`, help "it follows `return`, so it never runs". Fix:
//! remove it, or move it before the statement that ends the block.

use sr_syntax::{Code, Describe};

/// `after` is the keyword that ended the block (`return`, `abort`, …).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unreachable {
    pub after: &'static str,
}

impl Describe for Unreachable {
    fn code(&self) -> Code {
        Code::SR103
    }

    fn message(&self) -> String {
        "unreachable statement".to_string()
    }

    fn help(&self) -> Option<String> {
        Some(format!("it follows `{}`, so it never runs", self.after))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn help_names_what_ended_the_block() {
        expect!["SR103 warning: unreachable statement | help: it follows `return`, so it never runs | fixes: []"].assert_eq(&render(Unreachable { after: "return" }));
    }
}
