//! SR115 `recursive-flow`: a flow that runs itself.
//!
//! Unless a condition stops it, the run fails when flows nest more than 32 deep.
//!
//! ```sr
//! flow main:
//!     run main
//! ```
//!
//! `flow 'main' runs itself: …`. Fix: stop the recursion with a condition, or
//! repeat with `loop`.

use sr_syntax::{Code, Describe};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecursiveFlow {
    pub flow: String,
}

impl Describe for RecursiveFlow {
    fn code(&self) -> Code {
        Code::SR115
    }

    fn message(&self) -> String {
        format!(
            "flow '{}' runs itself: unless a condition stops it, the run fails when flows nest too deep",
            self.flow
        )
    }

    fn help(&self) -> Option<String> {
        Some("stop the recursion with a condition, or repeat with `loop`".to_string())
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn is_a_warning() {
        expect!["SR115 warning: flow 'main' runs itself: unless a condition stops it, the run fails when flows nest too deep | help: stop the recursion with a condition, or repeat with `loop` | fixes: []"].assert_eq(&render(RecursiveFlow { flow: "main".into() }));
    }
}
