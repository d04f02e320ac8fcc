//! Provider-neutral requests, messages and streamed events.
//!
//! These are our own types, not any provider's: each protocol module maps them to
//! its wire format and back, so the runtime, cassettes and events never depend on
//! a vendor's JSON shape.

use std::fmt;
use std::ops::{Add, AddAssign};

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{ChatStream, LlmError};

/// One call to a chat model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The provider's model id; through a [`Router`](crate::Router), `provider/model`.
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// JSON schema the reply must follow; sent through the provider's native
    /// structured-output mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

impl ChatRequest {
    pub fn new(model: impl Into<String>, messages: Vec<Message>) -> ChatRequest {
        ChatRequest { model: model.into(), messages, ..ChatRequest::default() }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    /// Results of tool calls, answering the assistant message before it.
    Tool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Part>,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Message {
        Message { role: Role::User, content: vec![Part::text(text)] }
    }

    pub fn assistant(text: impl Into<String>) -> Message {
        Message { role: Role::Assistant, content: vec![Part::text(text)] }
    }

    pub fn tool_results(results: Vec<ToolResult>) -> Message {
        Message { role: Role::Tool, content: results.into_iter().map(Part::ToolResult).collect() }
    }

    /// The text parts, concatenated.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|part| match part {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    Text { text: String },
    ToolCall(ToolCall),
    ToolResult(ToolResult),
}

impl Part {
    pub fn text(text: impl Into<String>) -> Part {
        Part::Text { text: text.into() }
    }
}

/// A complete tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id, or `sr_call_N` when the provider gave none.
    pub id: String,
    pub name: String,
    /// The parsed arguments; the raw text as a JSON string when it was not valid JSON.
    pub arguments: Value,
    /// Why the arguments could not be parsed, so the caller can tell the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_error: Option<String>,
    /// An opaque provider token that must be sent back with the call (Gemini's
    /// `thoughtSignature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// The longest tool-call arguments a reply may carry, as JSON text: a model
/// that sends more gets an error it can act on, and no more than this is held.
pub const MAX_TOOL_ARGUMENTS: usize = 4 << 20;

/// Appends a fragment of streamed arguments, keeping at most one byte past
/// [`MAX_TOOL_ARGUMENTS`]: enough to tell that they were too long.
pub(crate) fn push_arguments(raw: &mut String, fragment: &str) {
    let room = (MAX_TOOL_ARGUMENTS + 1).saturating_sub(raw.len());
    if fragment.len() <= room {
        raw.push_str(fragment);
        return;
    }
    let mut end = room;
    while end > 0 && !fragment.is_char_boundary(end) {
        end -= 1;
    }
    raw.push_str(&fragment[..end]);
    // A multi-byte character straddled the limit: still mark the overflow.
    if raw.len() <= MAX_TOOL_ARGUMENTS {
        raw.push(' ');
    }
}

impl ToolCall {
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments, arguments_error: None, signature: None }
    }

    /// A call whose arguments arrived as text: parsed when they are JSON, kept
    /// verbatim with the parse error otherwise.
    pub(crate) fn from_raw(id: String, name: String, raw: &str) -> ToolCall {
        let mut call = ToolCall::new(id, name, Value::Object(Default::default()));
        if raw.len() > MAX_TOOL_ARGUMENTS {
            return call.too_long();
        }
        if raw.trim().is_empty() {
            return call;
        }
        match serde_json::from_str(raw) {
            Ok(arguments) => call.arguments = arguments,
            Err(err) => {
                call.arguments = Value::String(raw.to_owned());
                call.arguments_error = Some(format!("arguments of `{}` are not valid JSON: {err}", call.name));
            }
        }
        call
    }

    /// The call with arguments that arrived whole (an object), refused when
    /// they are longer than [`MAX_TOOL_ARGUMENTS`] as JSON text.
    pub(crate) fn from_object(id: String, name: String, arguments: Value) -> ToolCall {
        let call = ToolCall::new(id, name, Value::Object(Default::default()));
        match serde_json::to_string(&arguments) {
            Ok(text) if text.len() <= MAX_TOOL_ARGUMENTS => ToolCall { arguments, ..call },
            _ => call.too_long(),
        }
    }

    /// The call without its arguments, and an error the model is told.
    fn too_long(mut self) -> ToolCall {
        self.arguments = Value::Object(Default::default());
        self.arguments_error = Some(format!(
            "the arguments of `{}` are longer than {} MiB, so the call was not made: pass less at once \
             (write a large file in parts with append_to_file)",
            self.name,
            MAX_TOOL_ARGUMENTS >> 20
        ));
        self
    }

    /// The arguments as JSON text, as OpenAI-style protocols want them back.
    pub(crate) fn arguments_text(&self) -> String {
        match (&self.arguments, &self.arguments_error) {
            (Value::String(raw), Some(_)) => raw.clone(),
            (arguments, _) => arguments.to_string(),
        }
    }
}

/// Prefix of tool-call ids we make up for providers that send none.
pub(crate) const SYNTHETIC_ID_PREFIX: &str = "sr_call_";

/// The outcome of a tool call, sent back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub call_id: String,
    pub name: String,
    /// A JSON value, or plain text as a JSON string.
    pub content: Value,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl ToolResult {
    /// The content as text: strings verbatim, other values as JSON.
    pub(crate) fn content_text(&self) -> String {
        match &self.content {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        }
    }
}

/// One item of a streamed reply.
///
/// A provider's stream yields text deltas as they arrive and tool calls once
/// complete, then exactly one `Usage` and one `Finished`. An `Err` item ends the
/// stream. `Retrying` items come before everything else, one per failed
/// attempt that is retried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum ChatEvent {
    TextDelta(String),
    ToolCall(ToolCall),
    Usage(Usage),
    Finished {
        reason: FinishReason,
    },
    /// Attempt `attempt` failed with `error` (already free of keys); the
    /// request is sent again after `delay_ms`.
    Retrying {
        attempt: u32,
        error: String,
        delay_ms: u64,
    },
}

impl ChatEvent {
    /// Appends the event to `events`, joining a text delta to one just before
    /// it: held this way, a reply takes memory in proportion to its size
    /// however many deltas it came in.
    pub fn append_to(self, events: &mut Vec<ChatEvent>) {
        match (events.last_mut(), self) {
            (Some(ChatEvent::TextDelta(last)), ChatEvent::TextDelta(text)) => last.push_str(&text),
            (_, event) => events.push(event),
        }
    }
}

/// Token counts of one reply, normalized across providers: `input_tokens`
/// includes cached tokens, `output_tokens` includes reasoning tokens. Zero when
/// the server reported nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }
}

impl Add for Usage {
    type Output = Usage;
    fn add(mut self, other: Usage) -> Usage {
        self += other;
        self
    }
}

/// Why the model stopped, normalized; `Other` keeps a provider's raw reason.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum FinishReason {
    Stop,
    Length,
    ToolCalls,
    ContentFilter,
    Other(String),
}

impl FinishReason {
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(raw) => raw,
        }
    }
}

impl From<String> for FinishReason {
    fn from(raw: String) -> FinishReason {
        match raw.as_str() {
            "stop" => FinishReason::Stop,
            "length" => FinishReason::Length,
            "tool_calls" => FinishReason::ToolCalls,
            "content_filter" => FinishReason::ContentFilter,
            _ => FinishReason::Other(raw),
        }
    }
}

impl From<FinishReason> for String {
    fn from(reason: FinishReason) -> String {
        reason.as_str().to_owned()
    }
}

impl fmt::Display for FinishReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A whole reply, folded from its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish_reason: FinishReason,
}

impl ChatResponse {
    /// Folds events; a reply without a `Finished` event was cut short and is an error.
    pub fn from_events(events: impl IntoIterator<Item = ChatEvent>) -> Result<ChatResponse, LlmError> {
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut usage = Usage::default();
        let mut finish_reason = None;
        for event in events {
            match event {
                ChatEvent::TextDelta(delta) => text.push_str(&delta),
                ChatEvent::ToolCall(call) => tool_calls.push(call),
                ChatEvent::Usage(more) => usage += more,
                ChatEvent::Finished { reason } => finish_reason = Some(reason),
                ChatEvent::Retrying { .. } => {}
            }
        }
        let Some(finish_reason) = finish_reason else {
            return Err(LlmError::Protocol {
                provider: String::new(),
                message: "the reply ended without a finish event".to_owned(),
            });
        };
        Ok(ChatResponse { text, tool_calls, usage, finish_reason })
    }

    /// Drains a stream into a response, stopping at the first error.
    pub async fn collect(mut stream: ChatStream) -> Result<ChatResponse, LlmError> {
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            event?.append_to(&mut events);
        }
        ChatResponse::from_events(events)
    }

    /// The assistant message to append to the history.
    pub fn message(&self) -> Message {
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(Part::text(self.text.clone()));
        }
        content.extend(self.tool_calls.iter().cloned().map(Part::ToolCall));
        Message { role: Role::Assistant, content }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn events_fold_into_a_response() {
        let call = ToolCall::new("c1", "read", json!({"path": "a"}));
        let response = ChatResponse::from_events([
            ChatEvent::TextDelta("Hel".into()),
            ChatEvent::TextDelta("lo".into()),
            ChatEvent::ToolCall(call.clone()),
            ChatEvent::Usage(Usage { input_tokens: 3, output_tokens: 2, ..Usage::default() }),
            ChatEvent::Finished { reason: FinishReason::ToolCalls },
        ])
        .unwrap();
        assert_eq!(response.text, "Hello");
        assert_eq!(response.tool_calls, vec![call.clone()]);
        assert_eq!(response.usage.input_tokens + response.usage.output_tokens, 5);
        assert_eq!(response.finish_reason, FinishReason::ToolCalls);
        assert_eq!(response.message().content, vec![Part::text("Hello"), Part::ToolCall(call)]);
    }

    #[test]
    fn appended_text_deltas_are_joined() {
        let mut events = Vec::new();
        for event in [
            ChatEvent::TextDelta("a".into()),
            ChatEvent::TextDelta("b".into()),
            ChatEvent::ToolCall(ToolCall::new("c", "f", json!({}))),
            ChatEvent::TextDelta("c".into()),
            ChatEvent::TextDelta("d".into()),
        ] {
            event.append_to(&mut events);
        }
        assert_eq!(
            events,
            vec![
                ChatEvent::TextDelta("ab".into()),
                ChatEvent::ToolCall(ToolCall::new("c", "f", json!({}))),
                ChatEvent::TextDelta("cd".into()),
            ]
        );
    }

    #[test]
    fn a_reply_without_finish_is_an_error() {
        let err = ChatResponse::from_events([ChatEvent::TextDelta("Hel".into())]).unwrap_err();
        assert!(matches!(err, LlmError::Protocol { .. }), "{err:?}");
    }

    #[test]
    fn invalid_arguments_are_kept_verbatim() {
        let call = ToolCall::from_raw("c".into(), "f".into(), "{\"a\": 1");
        assert_eq!(call.arguments, json!("{\"a\": 1"));
        assert!(call.arguments_error.as_deref().unwrap().contains("not valid JSON"));
        assert_eq!(call.arguments_text(), "{\"a\": 1");

        let empty = ToolCall::from_raw("c".into(), "f".into(), " ");
        assert_eq!(empty.arguments, json!({}));
        assert_eq!(empty.arguments_error, None);
    }

    #[test]
    fn arguments_past_the_limit_are_refused_and_not_held() {
        let mut raw = String::from("{\"content\": \"");
        let chunk = "é".repeat(4096);
        for _ in 0..(64 << 20) / chunk.len() {
            push_arguments(&mut raw, &chunk);
        }
        assert!(raw.len() <= MAX_TOOL_ARGUMENTS + 1, "{} bytes held", raw.len());
        let call = ToolCall::from_raw("c".into(), "write_file".into(), &raw);
        assert_eq!(call.arguments, json!({}));
        assert!(call.arguments_error.as_deref().unwrap().contains("longer than 4 MiB"), "{call:?}");
        let big = json!({"content": "x".repeat(MAX_TOOL_ARGUMENTS)});
        assert!(ToolCall::from_object("c".into(), "f".into(), big).arguments_error.is_some());
        let small = ToolCall::from_object("c".into(), "f".into(), json!({"a": 1}));
        assert_eq!((small.arguments, small.arguments_error), (json!({"a": 1}), None));
        // Right at the limit is allowed.
        let mut exact = String::new();
        push_arguments(&mut exact, &format!("\"{}\"", "y".repeat(MAX_TOOL_ARGUMENTS - 2)));
        assert_eq!(ToolCall::from_raw("c".into(), "f".into(), &exact).arguments_error, None);
    }

    #[test]
    fn events_serialize_with_a_type_tag() {
        let events = vec![
            ChatEvent::TextDelta("hi".into()),
            ChatEvent::Finished { reason: FinishReason::Other("pause_turn".into()) },
        ];
        let text = serde_json::to_string(&events).unwrap();
        assert_eq!(text, r#"[{"type":"text_delta","data":"hi"},{"type":"finished","data":{"reason":"pause_turn"}}]"#);
        let back: Vec<ChatEvent> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, events);
    }
}
