//! Python functions from tool declarations: the JSON schema becomes a signature with
//! types and defaults, the description a docstring. The same text (without bodies) is
//! what the system prompt lists. Every name is made an identifier and every string is
//! an escaped literal, so a declaration cannot inject code.

use std::collections::HashSet;
use std::fmt::Write;

use serde_json::Value;

use crate::policy::is_identifier;

/// Nested schemas deeper than this are typed `Any`.
const MAX_TYPE_DEPTH: usize = 6;

/// Names the stub bodies use, which parameters must not shadow.
const STUB_LOCALS: &[&str] = &["_call", "_sr_args"];

pub(crate) const PRELUDE: &str = "from __future__ import annotations\nfrom typing import Any, Literal\n";

/// One generated function.
#[derive(Debug, Clone)]
pub(crate) struct Stub {
    /// `def name(params) -> Any:` and the indented docstring.
    pub header: String,
    pub body: String,
}

struct Param {
    key: String,
    name: String,
    annotation: String,
    default: Default,
    description: Option<String>,
}

enum Default {
    Required,
    Value(String),
    /// Optional without a default: `= None`, left out of the call when None.
    Omitted,
}

pub(crate) fn stub(tool_name: &str, function: &str, description: &str, parameters: &Value) -> Stub {
    let params = params(parameters);
    let signature = params
        .iter()
        .map(|param| match &param.default {
            Default::Required => format!("{}: {}", param.name, param.annotation),
            Default::Value(value) => format!("{}: {} = {value}", param.name, param.annotation),
            Default::Omitted => format!("{}: {} | None = None", param.name, param.annotation),
        })
        .collect::<Vec<_>>()
        .join(", ");

    let mut doc = description.trim().to_string();
    if !params.is_empty() {
        doc.push_str(if doc.is_empty() { "Args:" } else { "\n\nArgs:" });
        for param in &params {
            let optional = if matches!(param.default, Default::Required) { "" } else { ", optional" };
            let _ = write!(doc, "\n    {} ({}{optional})", param.name, param.annotation);
            if let Some(description) = &param.description {
                let _ = write!(doc, ": {}", description.trim().replace('\n', " "));
            }
        }
    }
    let mut header = format!("def {function}({signature}) -> Any:\n");
    if !doc.is_empty() {
        let _ = writeln!(header, "    {}", docstring(&doc));
    }

    let required: Vec<String> = params
        .iter()
        .filter(|param| !matches!(param.default, Default::Omitted))
        .map(|param| format!("{}: {}", string(&param.key), param.name))
        .collect();
    let mut body = format!("    _sr_args = {{{}}}\n", required.join(", "));
    for param in params.iter().filter(|param| matches!(param.default, Default::Omitted)) {
        let _ = writeln!(
            body,
            "    if {} is not None:\n        _sr_args[{}] = {}",
            param.name,
            string(&param.key),
            param.name
        );
    }
    let _ = writeln!(body, "    return _call({}, _sr_args)", string(tool_name));
    Stub { header, body }
}

fn params(schema: &Value) -> Vec<Param> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required: HashSet<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let mut taken: HashSet<String> = STUB_LOCALS.iter().map(|name| name.to_string()).collect();
    let mut params: Vec<Param> = properties
        .iter()
        .map(|(key, property)| {
            let name = unique(identifier(key), &mut taken);
            let default = match property.get("default") {
                Some(value) => Default::Value(literal(value)),
                None if required.contains(key.as_str()) => Default::Required,
                None => Default::Omitted,
            };
            let description = property.get("description").and_then(Value::as_str).map(str::to_string);
            Param { key: key.clone(), name, annotation: annotation(property, 0), default, description }
        })
        .collect();
    // Python wants parameters without defaults first; the sort is stable.
    params.sort_by_key(|param| !matches!(param.default, Default::Required));
    params
}

/// A Python identifier for a tool or parameter name: invalid characters become `_`,
/// keywords get a trailing `_`.
pub(crate) fn identifier(name: &str) -> String {
    let mut out: String = name.chars().map(|c| if c == '_' || c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    debug_assert!(is_identifier(&out));
    out
}

fn unique(mut name: String, taken: &mut HashSet<String>) -> String {
    while taken.contains(&name) {
        name.push('_');
    }
    taken.insert(name.clone());
    name
}

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// The Python type of a JSON schema, for the signature (annotations stay strings).
fn annotation(schema: &Value, depth: usize) -> String {
    if depth > MAX_TYPE_DEPTH {
        return "Any".to_string();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && !values.is_empty()
        && values.iter().all(|value| !value.is_array() && !value.is_object())
    {
        return format!("Literal[{}]", values.iter().map(literal).collect::<Vec<_>>().join(", "));
    }
    if let Some(value) = schema.get("const")
        && !value.is_array()
        && !value.is_object()
    {
        return format!("Literal[{}]", literal(value));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array)
            && !options.is_empty()
        {
            return union(options.iter().map(|option| annotation(option, depth + 1)));
        }
    }
    match schema.get("type") {
        Some(Value::String(kind)) => simple(kind, schema, depth),
        Some(Value::Array(kinds)) => {
            union(kinds.iter().filter_map(Value::as_str).map(|kind| simple(kind, schema, depth)))
        }
        _ => "Any".to_string(),
    }
}

fn simple(kind: &str, schema: &Value, depth: usize) -> String {
    match kind {
        "string" => "str".to_string(),
        "integer" => "int".to_string(),
        "number" => "float".to_string(),
        "boolean" => "bool".to_string(),
        "null" => "None".to_string(),
        "array" => match schema.get("items") {
            Some(items) if items.is_object() => format!("list[{}]", annotation(items, depth + 1)),
            _ => "list".to_string(),
        },
        "object" => "dict[str, Any]".to_string(),
        _ => "Any".to_string(),
    }
}

fn union(types: impl Iterator<Item = String>) -> String {
    let mut seen = Vec::new();
    for ty in types {
        if !seen.contains(&ty) {
            seen.push(ty);
        }
    }
    if seen.is_empty() || seen.iter().any(|ty| ty == "Any") { "Any".to_string() } else { seen.join(" | ") }
}

/// A JSON value as a Python literal.
pub(crate) fn literal(value: &Value) -> String {
    match value {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => string(text),
        Value::Array(items) => format!("[{}]", items.iter().map(literal).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => {
            let entries: Vec<String> =
                map.iter().map(|(key, item)| format!("{}: {}", string(key), literal(item))).collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}

/// A double-quoted Python string literal.
pub(crate) fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A triple-quoted docstring, indented for a function body. A quote is escaped only
/// where it could close the string: before another quote, or at the end.
fn docstring(text: &str) -> String {
    let mut out = String::from("\"\"\"");
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' if matches!(chars.peek(), Some('"') | None) => out.push_str("\\\""),
            '\n' if matches!(chars.peek(), Some('\n') | None) => out.push('\n'),
            '\n' => out.push_str("\n    "),
            '\t' | '"' => out.push(c),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push_str("\"\"\"");
    out
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use serde_json::json;

    use super::*;

    #[test]
    fn signature_types_defaults_and_docstring() {
        let schema = json!({
            "type": "object",
            "properties": {
                "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
                "city": {"type": "string", "description": "City name,\nin English"},
                "days": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "from": {"type": ["number", "null"]},
                "filter": {"type": "object"},
                "x-y": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
            },
            "required": ["city", "from"]
        });
        let stub = stub("get-weather", "get_weather", "Weather \"now\".\nUses a \\ path.", &schema);
        expect![[r#"
            def get_weather(city: str, from_: float | None, units: Literal["metric", "imperial"] = "metric", days: int | None = None, tags: list[str] | None = None, filter: dict[str, Any] | None = None, x_y: str | int | None = None) -> Any:
                """Weather "now".
                Uses a \\ path.

                Args:
                    city (str): City name, in English
                    from_ (float | None)
                    units (Literal["metric", "imperial"], optional)
                    days (int, optional)
                    tags (list[str], optional)
                    filter (dict[str, Any], optional)
                    x_y (str | int, optional)"""
                _sr_args = {"city": city, "from": from_, "units": units}
                if days is not None:
                    _sr_args["days"] = days
                if tags is not None:
                    _sr_args["tags"] = tags
                if filter is not None:
                    _sr_args["filter"] = filter
                if x_y is not None:
                    _sr_args["x-y"] = x_y
                return _call("get-weather", _sr_args)
        "#]]
        .assert_eq(&format!("{}{}", stub.header, stub.body));
    }

    #[test]
    fn names_become_identifiers_without_collisions() {
        assert_eq!(identifier("mcp.server/tool"), "mcp_server_tool");
        assert_eq!(identifier("3d"), "_3d");
        assert_eq!(identifier("class"), "class_");
        assert_eq!(identifier(""), "_");
        let schema = json!({"properties": {"a-b": {}, "a_b": {}, "_call": {}}, "required": ["a-b", "a_b", "_call"]});
        let stub = stub("t", "t", "", &schema);
        assert!(stub.header.starts_with("def t(a_b: Any, a_b_: Any, _call_: Any) -> Any:"), "{}", stub.header);
    }

    #[test]
    fn strings_cannot_escape_their_literals() {
        assert_eq!(string("a\"b\\c\n\u{0}"), r#""a\"b\\c\n\u0000""#);
        assert_eq!(literal(&json!({"k": [1, 2.5, null, true, "x"]})), r#"{"k": [1, 2.5, None, True, "x"]}"#);
        let stub = stub("t", "t", "end with quote\"\"\"; import os", &json!({}));
        assert_eq!(stub.header, "def t() -> Any:\n    \"\"\"end with quote\\\"\\\"\"; import os\"\"\"\n");
    }
}
