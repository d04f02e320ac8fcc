//! SR106 `duplicate-field`: a field defined twice in one schema.
//!
//! ```sr
//! schema Finding:
//!     file: string
//!     file: string
//! ```
//!
//! `duplicate field 'file' in schema 'Finding'`. Fix: rename or remove one.

use sr_syntax::{Code, Describe};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DuplicateField {
    pub field: String,
    pub schema: String,
}

impl Describe for DuplicateField {
    fn code(&self) -> Code {
        Code::SR106
    }

    fn message(&self) -> String {
        format!("duplicate field '{}' in schema '{}'", self.field, self.schema)
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn names_field_and_schema() {
        expect!["SR106 error: duplicate field 'file' in schema 'Finding' | help:  | fixes: []"].assert_eq(&render(DuplicateField { field: "file".into(), schema: "Finding".into() }));
    }
}
