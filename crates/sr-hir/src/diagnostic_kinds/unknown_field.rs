//! SR104 `unknown-field`: a property access names a field the value's schema
//! lacks.
//!
//! The schema is known when the value comes from a prompt `expecting S`.
//!
//! ```sr
//! schema Report:
//!     summary: string
//! prompt review expecting Report: """Review the code."""
//! flow main:
//!     $r = call llm review
//!     return $r.summry
//! ```
//!
//! `schema 'Report' has no field 'summry'`, help `fields of 'Report': summary`.
//! Fix: use one of the schema's fields, or add the field to the schema.

use sr_syntax::{Code, Describe};

use super::Listing;

/// `fields` are the schema's fields.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnknownField {
    pub schema: String,
    pub field: String,
    pub fields: Listing,
}

impl Describe for UnknownField {
    fn code(&self) -> Code {
        Code::SR104
    }

    fn message(&self) -> String {
        format!("schema '{}' has no field '{}'", self.schema, self.field)
    }

    fn help(&self) -> Option<String> {
        Some(format!("fields of '{}': {}", self.schema, self.fields))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn help_lists_the_fields() {
        let kind = UnknownField { schema: "Report".into(), field: "summry".into(), fields: Listing::new(["summary"], 1) };
        expect!["SR104 error: schema 'Report' has no field 'summry' | help: fields of 'Report': summary | fixes: []"].assert_eq(&render(kind));
    }
}
