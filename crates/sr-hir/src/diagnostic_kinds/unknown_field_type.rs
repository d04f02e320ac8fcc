//! SR119 `unknown-field-type`: a schema field's type that is neither `string`,
//! `int`, `float`, `bool` nor a schema of the program. Upstream's checker says
//! nothing (and `--compat upstream` keeps that); its code generator and this
//! runtime read such a field as a string, so a typo changes what the model is
//! asked to return.
//!
//! ```sr
//! schema Finding:
//!     note: stringy
//! ```
//!
//! `unknown type 'stringy' of field 'note' in schema 'Finding': it is read as a string`,
//! help `did you mean 'string'?`. Fix: replace it with the suggested type.

use sr_syntax::{Code, Describe, Fix};

use super::Suggestion;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnknownFieldType {
    pub ty: String,
    pub field: String,
    pub schema: String,
    /// The closest primitive or schema name, else the schemas defined.
    pub suggestion: Suggestion,
}

impl Describe for UnknownFieldType {
    fn code(&self) -> Code {
        Code::SR119
    }

    fn message(&self) -> String {
        format!(
            "unknown type '{}' of field '{}' in schema '{}': it is read as a string",
            self.ty, self.field, self.schema
        )
    }

    fn help(&self) -> Option<String> {
        const TYPES: &str = "types are string, int, float, bool and schemas";
        Some(match &self.suggestion {
            Suggestion::DidYouMean(name) => format!("did you mean '{name}'?"),
            Suggestion::Listed(schemas) => format!("{TYPES}; defined schemas are: {schemas}"),
            Suggestion::None => TYPES.to_string(),
        })
    }

    fn fixes(&self) -> Vec<Fix> {
        self.suggestion.replace().into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::{Listing, render};

    #[test]
    fn suggests_the_closest_type_or_lists_the_schemas() {
        let kind = |suggestion| UnknownFieldType {
            ty: "stringy".into(),
            field: "note".into(),
            schema: "Finding".into(),
            suggestion,
        };
        expect![[r#"SR119 warning: unknown type 'stringy' of field 'note' in schema 'Finding': it is read as a string | help: did you mean 'string'? | fixes: [Replace("string")]"#]]
            .assert_eq(&render(kind(Suggestion::DidYouMean("string".into()))));
        expect!["SR119 warning: unknown type 'stringy' of field 'note' in schema 'Finding': it is read as a string | help: types are string, int, float, bool and schemas; defined schemas are: Finding | fixes: []"]
            .assert_eq(&render(kind(Suggestion::Listed(Listing::new(["Finding"], 1)))));
        expect!["SR119 warning: unknown type 'stringy' of field 'note' in schema 'Finding': it is read as a string | help: types are string, int, float, bool and schemas | fixes: []"]
            .assert_eq(&render(kind(Suggestion::None)));
    }
}
