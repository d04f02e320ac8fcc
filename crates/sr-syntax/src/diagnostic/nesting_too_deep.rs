//! SR111 `nesting-too-deep`: an expression or block nested more than 256 levels
//! deep.
//!
//! Reported once, at the first place the limit is passed; the parser skips the
//! deep part, so every later layer walks trees of bounded depth and the rest of
//! the file is still checked (see docs/limits.md).
//!
//! ```sr
//! flow main:
//!     $x = ((((((((( … 300 levels … )))))))))
//! ```
//!
//! Fix: split it up, e.g. assign inner parts to variables or move inner blocks
//! into flows.

use crate::MAX_NESTING;

pub(super) fn message(what: &str) -> String {
    format!("{what} nested more than {MAX_NESTING} levels deep")
}

pub(super) fn help() -> String {
    "split it up, e.g. assign inner parts to variables or move inner blocks into flows".to_string()
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::diagnostic::{Describe, SyntaxError};

    #[test]
    fn message_names_the_construct_and_the_limit() {
        let error = SyntaxError::TooDeep { what: "this expression is".into() };
        expect!["SR111 error: this expression is nested more than 256 levels deep | split it up, e.g. assign inner parts to variables or move inner blocks into flows"]
            .assert_eq(&format!("{} {}: {} | {}", error.code(), error.severity().as_str(), error.message(), error.help().unwrap_or_default()));
    }
}
