//! SR114 `break-outside-loop`: `break` outside a `loop` or `for` of the same
//! body, or inside a `parallel` branch.
//!
//! ```sr
//! flow main:
//!     break
//! ```
//!
//! `` `break` outside a loop ``. Fix: move it into the loop it should end, or
//! end the flow with `return`.

use sr_syntax::{Code, Describe};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BreakOutsideLoop;

impl Describe for BreakOutsideLoop {
    fn code(&self) -> Code {
        Code::SR114
    }

    fn message(&self) -> String {
        "`break` outside a loop".to_string()
    }

    fn help(&self) -> Option<String> {
        Some(
            "`break` ends the innermost `loop` or `for`, and only from its own body (not from a `parallel` branch)"
                .to_string(),
        )
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn help_says_which_loop_it_ends() {
        expect!["SR114 error: `break` outside a loop | help: `break` ends the innermost `loop` or `for`, and only from its own body (not from a `parallel` branch) | fixes: []"].assert_eq(&render(BreakOutsideLoop));
    }
}
