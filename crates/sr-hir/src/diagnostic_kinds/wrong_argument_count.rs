//! SR113 `wrong-argument-count`: a standard library function called with the
//! wrong number of arguments, with its signature.
//!
//! ```sr
//! flow main:
//!     $id = uuid(1)
//!     return $id
//! ```
//!
//! `uuid() takes no arguments, 1 given`, help: the signature and what it does.
//! Fix: pass what the signature takes.

use sr_syntax::{Code, Describe};

/// `takes` describes the arity, e.g. "1 or 2 arguments".
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArgumentCount {
    pub function: String,
    pub takes: String,
    pub given: usize,
    pub signature: String,
    pub doc: String,
}

impl Describe for ArgumentCount {
    fn code(&self) -> Code {
        Code::SR113
    }

    fn message(&self) -> String {
        format!("{}() takes {}, {} given", self.function, self.takes, self.given)
    }

    fn help(&self) -> Option<String> {
        Some(format!("`{}`: {}", self.signature, self.doc))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn shows_the_signature() {
        let kind = ArgumentCount {
            function: "slice".into(),
            takes: "2 or 3 arguments".into(),
            given: 1,
            signature: "slice(x, start, end?)".into(),
            doc: "a part of a list or string".into(),
        };
        expect!["SR113 error: slice() takes 2 or 3 arguments, 1 given | help: `slice(x, start, end?)`: a part of a list or string | fixes: []"].assert_eq(&render(kind));
    }
}
