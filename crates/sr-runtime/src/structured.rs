//! Structured output: a prompt `expecting S` (or `S[]`) gets replies that are
//! JSON values of schema `S`. Replies are read leniently (code fences, JSON
//! inside prose), validated with a JSON-schema validator, and repaired by
//! feeding the problems back to the model a bounded number of times.

use serde_json::{Map, Value, json};
use sr_hir::{Expecting, TypeRef};

use crate::compile::Compiled;

/// Repairs after the first reply (three attempts in all, as upstream).
pub const MAX_REPAIRS: u32 = 2;

/// The JSON schema of `expecting`.
pub fn json_schema(program: &Compiled, expecting: &Expecting) -> Value {
    let item = schema_of(program, &expecting.schema.name, 0);
    if expecting.array { json!({"type": "array", "items": item}) } else { item }
}

/// The schema to ask the provider's native structured-output mode for: single
/// objects only, as providers want an object at the top (arrays are asked for
/// in the prompt's text).
pub fn native_schema(program: &Compiled, expecting: &Expecting) -> Option<Value> {
    (!expecting.array).then(|| json_schema(program, expecting))
}

fn schema_of(program: &Compiled, name: &str, depth: u32) -> Value {
    let Some(schema) = program.schemas.get(name) else { return json!({"type": "object"}) };
    if depth > 8 {
        return json!({"type": "object"});
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in &schema.fields {
        let optional = matches!(field.ty, TypeRef::Optional(_));
        properties.insert(field.name.name.to_string(), type_schema(program, &field.ty, depth));
        if !optional {
            required.push(Value::String(field.name.name.to_string()));
        }
    }
    json!({"type": "object", "properties": properties, "required": required})
}

fn type_schema(program: &Compiled, ty: &TypeRef, depth: u32) -> Value {
    match ty {
        TypeRef::String => json!({"type": "string"}),
        TypeRef::Int => json!({"type": "integer"}),
        TypeRef::Float => json!({"type": "number"}),
        TypeRef::Bool => json!({"type": "boolean"}),
        TypeRef::Named(named) if program.schemas.contains_key(&named.name) => {
            schema_of(program, &named.name, depth + 1)
        }
        // Upstream makes unknown type names strings.
        TypeRef::Named(_) | TypeRef::Missing => json!({"type": "string"}),
        TypeRef::List(item) => json!({"type": "array", "items": type_schema(program, item, depth)}),
        TypeRef::Optional(inner) => {
            let mut schema = type_schema(program, inner, depth);
            if let Some(Value::String(t)) = schema.get("type").cloned() {
                schema["type"] = json!([t, "null"]);
            }
            schema
        }
    }
}

/// What is added to the prompt so that the model knows the shape to produce.
pub fn instruction_suffix(program: &Compiled, expecting: &Expecting) -> String {
    let schema = serde_json::to_string_pretty(&json_schema(program, expecting)).unwrap_or_default();
    let what = if expecting.array { "a JSON array whose items match" } else { "valid JSON that matches" };
    format!("\n\nIMPORTANT: You MUST respond with {what} this schema:\n```json\n{schema}\n```")
}

/// The message that asks the model to fix its reply.
pub fn repair_message(problem: &str) -> String {
    format!(
        "Error: Your response could not be parsed. {problem}\n\nPlease respond with valid JSON matching the expected schema."
    )
}

/// Reads and validates a reply.
pub fn parse(program: &Compiled, expecting: &Expecting, text: &str) -> Result<Value, String> {
    let value = extract_json(text).ok_or_else(|| "the reply contains no JSON value".to_string())?;
    let value = decode_nested(value);
    let schema = json_schema(program, expecting);
    let validator = jsonschema::validator_for(&schema).map_err(|e| format!("invalid schema: {e}"))?;
    let problems: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() { e.to_string() } else { format!("at {at}: {e}") }
        })
        .collect();
    if problems.is_empty() { Ok(value) } else { Err(problems.join("; ")) }
}

/// The whole text as JSON, else the first fenced block, else the first JSON
/// value that starts with `{` or `[` inside the text.
pub fn extract_json(text: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str(text.trim()) {
        return Some(value);
    }
    let fenced = crate::value::strip_fence(text);
    if fenced.len() != text.len()
        && let Ok(value) = serde_json::from_str(fenced.trim())
    {
        return Some(value);
    }
    for (start, _) in text.match_indices(['{', '[']) {
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        if let Some(Ok(value)) = values.next() {
            return Some(value);
        }
    }
    None
}

/// Strings that hold JSON objects or arrays are read as JSON (models often
/// quote nested objects), as upstream does.
fn decode_nested(value: Value) -> Value {
    match value {
        Value::String(s) if s.trim_start().starts_with(['{', '[']) => match serde_json::from_str(&s) {
            Ok(inner) => decode_nested(inner),
            Err(_) => Value::String(s),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(decode_nested).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, decode_nested(v))).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_json_from_prose_and_fences() {
        assert_eq!(extract_json(r#"{"a": 1}"#), Some(json!({"a": 1})));
        assert_eq!(extract_json("Here:\n```json\n[1, 2]\n```\nbye"), Some(json!([1, 2])));
        assert_eq!(extract_json(r#"Sure! The result is {"ok": true} as asked."#), Some(json!({"ok": true})));
        assert_eq!(extract_json("no json here"), None);
    }

    #[test]
    fn nested_json_strings_are_decoded() {
        assert_eq!(decode_nested(json!({"inner": "{\"a\": [1]}"})), json!({"inner": {"a": [1]}}));
        assert_eq!(decode_nested(json!({"s": "{not json"})), json!({"s": "{not json"}));
    }
}
