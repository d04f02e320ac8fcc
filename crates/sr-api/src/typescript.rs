//! The studio's TypeScript types (`studio/src/lib/wire.ts`), generated from
//! the same schemas as the OpenAPI document: one `export type` per schema,
//! with its description as a doc comment, and `EVENT_KINDS`, every event
//! `type` the runtime emits. Only the JSON Schema the wire types produce is
//! translated (objects, arrays, enums, constants, unions, `null`, references);
//! anything else is `unknown`.

use serde_json::{Map, Value};

use crate::openapi;

/// The module, as committed.
pub fn module() -> String {
    let document = openapi::document();
    let schemas =
        named_unions(document["components"]["schemas"].as_object().expect("the document has components.schemas"));
    let schemas = &schemas;
    let mut out = String::from(
        "// Generated from crates/sr-api (API v1's wire types): do not edit. After changing\n\
         // a wire type, regenerate with `UPDATE_EXPECT=1 cargo test -p sr-api --test drift`.\n\n",
    );
    for (name, schema) in schemas {
        comment(&mut out, schema, "");
        out.push_str(&format!("export type {name} = {};\n\n", ts(schema, "")));
    }
    let kinds: Vec<String> = schemas["Payload"]["oneOf"]
        .as_array()
        .expect("Payload is a oneOf of its variants")
        .iter()
        .filter_map(|variant| variant["properties"]["type"]["const"].as_str())
        .map(|kind| format!("  {kind:?},\n"))
        .collect();
    out.push_str("/** Every event `type` the runtime emits, in the order `Payload` declares them. */\n");
    out.push_str(&format!("export const EVENT_KINDS = [\n{}] as const;\n", kinds.concat()));
    out
}

/// `schemas` where a schema's `oneOf` is the whole of another schema's (an
/// `Event` flattens its `Payload`) refers to that one by name instead.
fn named_unions(schemas: &Map<String, Value>) -> Map<String, Value> {
    let unions: Vec<(&String, &Value)> = schemas
        .iter()
        .filter(|(_, schema)| schema.as_object().is_some_and(|o| o.keys().all(|k| k == "oneOf" || k == "description")))
        .filter_map(|(name, schema)| Some((name, schema.get("oneOf")?)))
        .collect();
    let mut out = schemas.clone();
    for (name, schema) in &mut out {
        let Some(object) = schema.as_object_mut() else { continue };
        let found = unions.iter().find(|(union, variants)| *union != name && object.get("oneOf") == Some(variants));
        if let Some((union, _)) = found {
            object.remove("oneOf");
            object.insert("allOf".to_string(), serde_json::json!([{"$ref": format!("#/components/schemas/{union}")}]));
        }
    }
    out
}

fn comment(out: &mut String, schema: &Value, indent: &str) {
    if let Some(text) = schema["description"].as_str() {
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() == 1 {
            out.push_str(&format!("{indent}/** {} */\n", lines[0]));
        } else {
            out.push_str(&format!("{indent}/**\n"));
            for line in lines {
                out.push_str(&format!("{indent} * {line}\n").replace(" * \n", " *\n"));
            }
            out.push_str(&format!("{indent} */\n"));
        }
    }
}

/// The TypeScript type of `schema`; `indent` is the indentation of the line it starts on.
fn ts(schema: &Value, indent: &str) -> String {
    let Some(schema) = schema.as_object() else {
        // `true` (anything) or `false` (nothing).
        return if schema == &Value::Bool(false) { "never" } else { "unknown" }.to_string();
    };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        return reference.rsplit('/').next().unwrap_or(reference).to_string();
    }
    if let Some(value) = schema.get("const") {
        return value.to_string();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.iter().map(Value::to_string).collect::<Vec<_>>().join(" | ");
    }
    let mut parts = Vec::new();
    if schema.contains_key("properties") || schema.get("type") == Some(&Value::from("object")) {
        parts.push(object(schema, indent));
    } else if let Some(kind) = schema.get("type") {
        parts.push(types(kind, schema, indent));
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(variants) = schema.get(key).and_then(Value::as_array) {
            let union: Vec<String> = variants.iter().map(|v| ts(v, indent)).collect();
            parts.push(format!("({})", union.join(" | ")));
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        parts.extend(all.iter().map(|v| ts(v, indent)));
    }
    if parts.is_empty() { "unknown".to_string() } else { parts.join(" & ") }
}

/// `type` as a name or a list of names (`["string", "null"]`).
fn types(kind: &Value, schema: &Map<String, Value>, indent: &str) -> String {
    let names: Vec<&str> = match kind {
        Value::String(name) => vec![name.as_str()],
        Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let shown: Vec<String> = names
        .iter()
        .map(|name| match *name {
            "string" => "string".to_string(),
            "integer" | "number" => "number".to_string(),
            "boolean" => "boolean".to_string(),
            "null" => "null".to_string(),
            "array" => match schema.get("items") {
                Some(items) => format!("{}[]", wrap(&ts(items, indent))),
                None => "unknown[]".to_string(),
            },
            "object" => object(schema, indent),
            _ => "unknown".to_string(),
        })
        .collect();
    if shown.is_empty() { "unknown".to_string() } else { shown.join(" | ") }
}

/// A union or intersection in parentheses, so that `[]` applies to all of it.
fn wrap(ts: &str) -> String {
    if ts.contains(' ') && !ts.starts_with('{') { format!("({ts})") } else { ts.to_string() }
}

fn object(schema: &Map<String, Value>, indent: &str) -> String {
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let inner = format!("{indent}  ");
    let mut out = String::from("{\n");
    for (name, property) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        comment(&mut out, property, &inner);
        let optional = if required.contains(&name.as_str()) { "" } else { "?" };
        out.push_str(&format!("{inner}{name}{optional}: {};\n", ts(property, &inner)));
    }
    match schema.get("additionalProperties") {
        Some(Value::Bool(false)) | None => {}
        Some(extra) => out.push_str(&format!("{inner}[field: string]: {};\n", ts(extra, &inner))),
    }
    if out == "{\n" {
        return "Record<string, unknown>".to_string();
    }
    out.push_str(indent);
    out.push('}');
    out
}
