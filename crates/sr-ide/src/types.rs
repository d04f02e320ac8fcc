//! Schema field types as the editor shows them (`list[string]`, `Finding?`).

use sr_hir::hir::TypeRef;

pub(crate) fn type_text(ty: &TypeRef) -> String {
    match ty {
        TypeRef::String => "string".to_string(),
        TypeRef::Int => "int".to_string(),
        TypeRef::Float => "float".to_string(),
        TypeRef::Bool => "bool".to_string(),
        TypeRef::Named(named) => named.name.to_string(),
        TypeRef::List(inner) => format!("list[{}]", type_text(inner)),
        TypeRef::Optional(inner) => format!("{}?", type_text(inner)),
        TypeRef::Missing => "?".to_string(),
    }
}
