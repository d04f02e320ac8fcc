//! E0012 `continue-outside-loop`: `on escalate continue` outside a loop.
//!
//! ```sr
//! prompt p: """Help."""
//! agent helper:
//!     instruction p
//! flow main:
//!     $r = run agent helper with $input_prompt, on escalate continue
//!     return $r
//! ```
//!
//! `'on escalate continue' can only be used inside a loop`. Fix: move the
//! statement into a `loop` or `for`, or escalate with `return` or `abort`.

use sr_syntax::{Code, Describe};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ContinueOutsideLoop;

impl Describe for ContinueOutsideLoop {
    fn code(&self) -> Code {
        Code::E0012
    }

    fn message(&self) -> String {
        "'on escalate continue' can only be used inside a loop".to_string()
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn has_upstream_s_message() {
        expect!["E0012 error: 'on escalate continue' can only be used inside a loop | help:  | fixes: []"].assert_eq(&render(ContinueOutsideLoop));
    }
}
