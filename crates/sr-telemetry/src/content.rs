//! Message content in the conventions' JSON shapes (`gen_ai.input.messages`,
//! `gen_ai.output.messages`). `tracing` fields cannot hold structures, so they
//! are JSON strings, which the conventions allow on spans. Only called when
//! content capture is on.

use serde_json::{Value, json};

/// A user message of one text part.
pub(crate) fn user(text: &str) -> String {
    json!([{"role": "user", "parts": [{"type": "text", "content": text}]}]).to_string()
}

/// An answer: its text and the names of the tools it calls (their ids and
/// arguments arrive with the calls).
pub(crate) fn answer(text: &str, tool_calls: &[String], finish_reason: &str) -> String {
    let text = (!text.is_empty()).then(|| json!({"type": "text", "content": text}));
    let calls = tool_calls.iter().map(|name| json!({"type": "tool_call", "name": name}));
    let parts: Vec<Value> = text.into_iter().chain(calls).collect();
    json!([{"role": "assistant", "parts": parts, "finish_reason": finish_reason}]).to_string()
}

/// A string as itself, any other value as JSON.
pub(crate) fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
