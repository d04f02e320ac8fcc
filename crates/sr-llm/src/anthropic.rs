//! Anthropic Messages (`POST {base}/v1/messages`).
//!
//! The protocol differs from OpenAI's where it matters: the system prompt is a
//! top-level field, tool results are blocks of the next user message (all of
//! them first), roles must alternate, `max_tokens` is required, and an
//! `overloaded_error` can arrive inside a 200 stream.

use serde_json::{Map, Value, json};

use crate::http::{Decoder, HttpClient, Post};
use crate::limits::Out;
use crate::{ChatEvent, ChatRequest, ChatStream, Endpoint, FinishReason, Part, Provider, Role, ToolCall, Usage};

const VERSION: &str = "2023-06-01";
/// Sent when the request sets no limit, since the protocol requires one.
const DEFAULT_MAX_TOKENS: u32 = 4096;

pub struct Anthropic {
    endpoint: Endpoint,
    http: HttpClient,
}

impl Anthropic {
    /// `endpoint.base_url` is the root without the version, e.g. `https://api.anthropic.com`.
    pub fn new(endpoint: Endpoint, http: HttpClient) -> Anthropic {
        Anthropic { endpoint, http }
    }
}

impl Provider for Anthropic {
    fn chat(&self, request: ChatRequest) -> ChatStream {
        if let Err(err) = crate::check_model_id(&request.model) {
            return crate::provider::failed(err);
        }
        let url = format!("{}/v1/messages", self.endpoint.base_url.trim_end_matches('/'));
        let post = Post::new(&self.endpoint.name, url, &request_body(&request, self.endpoint.stream))
            .header("anthropic-version", VERSION);
        let post = match (post, &self.endpoint.api_key) {
            (Ok(post), Some(key)) => post.secret_header("x-api-key", "", key),
            (post, None) => post,
            (Err(err), _) => Err(err),
        };
        match post {
            Ok(post) => self.http.send::<Reply>(post),
            Err(err) => crate::provider::failed(err),
        }
    }
}

pub(crate) fn request_body(request: &ChatRequest, stream: bool) -> Value {
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let role = if message.role == Role::Assistant { "assistant" } else { "user" };
        let blocks = message.content.iter().filter_map(|part| match part {
            Part::Text { text } if text.is_empty() => None,
            Part::Text { text } => Some(json!({"type": "text", "text": text})),
            Part::ToolCall(call) => {
                // The protocol wants an object; arguments that were not one cannot be echoed.
                let input = if call.arguments.is_object() { call.arguments.clone() } else { json!({}) };
                Some(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}))
            }
            Part::ToolResult(result) => {
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": result.call_id,
                    "content": result.content_text(),
                });
                if result.is_error {
                    block["is_error"] = json!(true);
                }
                Some(block)
            }
        });
        match messages.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => messages.push((role, blocks.collect())),
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .filter(|(_, content)| !content.is_empty())
        .map(|(role, mut content)| {
            if role == "user" {
                content.sort_by_key(|block| block["type"] != "tool_result");
            }
            json!({"role": role, "content": content})
        })
        .collect();

    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)));
    if let Some(system) = &request.system {
        body.insert("system".into(), json!(system));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|tool| json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters}));
        body.insert("tools".into(), tools.collect());
    }
    if let Some(schema) = &request.response_schema {
        body.insert("output_config".into(), json!({"format": {"type": "json_schema", "schema": schema}}));
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    body.insert("stream".into(), json!(stream));
    Value::Object(body)
}

#[derive(Default)]
struct Reply {
    /// Tool-use blocks still receiving `input_json_delta`s, by block index.
    open: Vec<OpenToolUse>,
    usage: RawUsage,
    finish: Option<FinishReason>,
    called: bool,
}

struct OpenToolUse {
    index: u64,
    id: String,
    name: String,
    input: Value,
    json: String,
}

impl OpenToolUse {
    fn close(self) -> ToolCall {
        if self.json.trim().is_empty() {
            ToolCall::new(self.id, self.name, self.input)
        } else {
            ToolCall::from_raw(self.id, self.name, &self.json)
        }
    }
}

/// Usage as reported: `input_tokens` excludes cache reads and writes.
#[derive(Default)]
struct RawUsage {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
}

impl RawUsage {
    fn update(&mut self, usage: &Value) {
        let fields = [
            ("input_tokens", &mut self.input),
            ("output_tokens", &mut self.output),
            ("cache_read_input_tokens", &mut self.cache_read),
            ("cache_creation_input_tokens", &mut self.cache_write),
        ];
        for (field, slot) in fields {
            if let Some(count) = usage.get(field).and_then(Value::as_u64) {
                *slot = count;
            }
        }
    }

    fn normalized(&self) -> Usage {
        Usage {
            input_tokens: self.input + self.cache_read + self.cache_write,
            output_tokens: self.output,
            cache_read_tokens: self.cache_read,
            cache_write_tokens: self.cache_write,
            reasoning_tokens: 0,
        }
    }
}

impl Decoder for Reply {
    fn event(&mut self, name: Option<&str>, data: Value, out: &mut Out) -> Result<bool, String> {
        let kind = data.get("type").and_then(Value::as_str).or(name).unwrap_or_default();
        let index = data.get("index").and_then(Value::as_u64);
        match kind {
            "message_start" => self.usage.update(&data["message"]["usage"]),
            "content_block_start" => self.block(index, &data["content_block"], out)?,
            "content_block_delta" => {
                let delta = &data["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => out.text(delta["text"].as_str().unwrap_or_default())?,
                    Some("input_json_delta") => {
                        let fragment = delta["partial_json"].as_str().unwrap_or_default();
                        match self.open.iter_mut().find(|tool| Some(tool.index) == index) {
                            Some(tool) => out.arguments(&mut tool.json, fragment)?,
                            None => return Err(format!("input_json_delta for block {index:?}, which is no tool use")),
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(position) = self.open.iter().position(|tool| Some(tool.index) == index) {
                    let call = self.open.remove(position).close();
                    self.called = true;
                    out.call(call);
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.finish = Some(finish_reason(reason));
                }
                self.usage.update(&data["usage"]);
            }
            "message_stop" => return Ok(true),
            _ => {}
        }
        Ok(false)
    }

    fn body(&mut self, body: Value, out: &mut Out) -> Result<(), String> {
        let Some(content) = body.get("content").and_then(Value::as_array) else {
            return Err(format!("a message without content: {body}"));
        };
        for (index, block) in content.iter().enumerate() {
            self.block(Some(index as u64), block, out)?;
        }
        for tool in std::mem::take(&mut self.open) {
            self.called = true;
            out.call(tool.close());
        }
        if let Some(reason) = body["stop_reason"].as_str() {
            self.finish = Some(finish_reason(reason));
        }
        self.usage.update(&body["usage"]);
        Ok(())
    }

    fn said_finished(&self) -> bool {
        self.finish.is_some()
    }

    fn finish(&mut self, out: &mut Out) {
        // Blocks a cut-off stream never closed: still calls the model made.
        for tool in std::mem::take(&mut self.open) {
            self.called = true;
            out.call(tool.close());
        }
        out.push(ChatEvent::Usage(self.usage.normalized()));
        let reason = match self.finish.take() {
            Some(reason) => reason,
            None if self.called => FinishReason::ToolCalls,
            None => FinishReason::Stop,
        };
        out.push(ChatEvent::Finished { reason });
    }
}

impl Reply {
    fn block(&mut self, index: Option<u64>, block: &Value, out: &mut Out) -> Result<(), String> {
        match block["type"].as_str() {
            Some("text") => out.text(block["text"].as_str().unwrap_or_default()),
            Some("tool_use") => {
                out.begin_call()?;
                let input = if block["input"].is_object() { block["input"].clone() } else { json!({}) };
                out.object_arguments(&input)?;
                self.open.push(OpenToolUse {
                    index: index.unwrap_or(u64::MAX),
                    id: block["id"].as_str().unwrap_or_default().to_owned(),
                    name: block["name"].as_str().unwrap_or_default().to_owned(),
                    input,
                    json: String::new(),
                });
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::{Message, ToolResult, ToolSpec};

    fn decode(events: &[(&str, &str)]) -> Vec<ChatEvent> {
        let mut reply = Reply::default();
        let mut out = Out::default();
        for (name, data) in events {
            if reply.event(Some(name), serde_json::from_str(data).unwrap(), &mut out).unwrap() {
                break;
            }
        }
        reply.finish(&mut out);
        out.events
    }

    #[test]
    fn a_streamed_tool_use_is_assembled() {
        let events = decode(&[
            (
                "message_start",
                r#"{"type":"message_start","message":{"id":"m","content":[],"usage":{"input_tokens":10,"cache_read_input_tokens":90,"cache_creation_input_tokens":5,"output_tokens":1}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            ("ping", r#"{"type":"ping"}"#),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Reading."}}"#,
            ),
            ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" \"a\"}"}}"#,
            ),
            ("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":42}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        assert_eq!(
            events,
            vec![
                ChatEvent::TextDelta("Reading.".into()),
                ChatEvent::ToolCall(ToolCall::new("toolu_1", "read", json!({"path": "a"}))),
                ChatEvent::Usage(Usage {
                    input_tokens: 105,
                    output_tokens: 42,
                    cache_read_tokens: 90,
                    cache_write_tokens: 5,
                    reasoning_tokens: 0
                }),
                ChatEvent::Finished { reason: FinishReason::ToolCalls },
            ]
        );
    }

    #[test]
    fn cut_or_corrupted_streams_never_panic() {
        crate::http::assert_robust::<Reply>(concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,",
            "\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,",
            "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":1}\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        ));
    }

    #[test]
    fn json_for_an_unknown_block_is_an_error() {
        let mut reply = Reply::default();
        let delta = json!({"type": "input_json_delta", "partial_json": "{"});
        let data = json!({"type": "content_block_delta", "index": 3, "delta": delta});
        assert!(reply.event(None, data, &mut Out::default()).is_err());
    }

    #[test]
    fn a_whole_message_decodes() {
        let mut reply = Reply::default();
        let mut out = Out::default();
        let body = json!({
            "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "Hi"},
                        {"type": "tool_use", "id": "t", "name": "f", "input": {"x": 1}}],
            "stop_reason": "max_tokens",
            "usage": {"input_tokens": 3, "output_tokens": 4}
        });
        reply.body(body, &mut out).unwrap();
        reply.finish(&mut out);
        assert_eq!(
            out.events,
            vec![
                ChatEvent::TextDelta("Hi".into()),
                ChatEvent::ToolCall(ToolCall::new("t", "f", json!({"x": 1}))),
                ChatEvent::Usage(Usage { input_tokens: 3, output_tokens: 4, ..Usage::default() }),
                ChatEvent::Finished { reason: FinishReason::Length },
            ]
        );
    }

    #[test]
    fn requests_alternate_roles_with_results_first() {
        let call = ToolCall::new("toolu_1", "read", json!({"path": "a"}));
        let request = ChatRequest {
            model: "claude-sonnet-4-5".into(),
            system: Some("Be brief.".into()),
            messages: vec![
                Message::user("Read a"),
                Message { role: Role::Assistant, content: vec![Part::text("Sure."), Part::ToolCall(call)] },
                Message::tool_results(vec![ToolResult {
                    call_id: "toolu_1".into(),
                    name: "read".into(),
                    content: json!({"error": "missing"}),
                    is_error: true,
                }]),
                Message::user("Then?"),
            ],
            tools: vec![ToolSpec {
                name: "read".into(),
                description: "Reads".into(),
                parameters: json!({"type": "object"}),
            }],
            response_schema: None,
            temperature: None,
            max_tokens: None,
        };
        expect![[r#"{"model":"claude-sonnet-4-5","max_tokens":4096,"system":"Be brief.","messages":[{"role":"user","content":[{"type":"text","text":"Read a"}]},{"role":"assistant","content":[{"type":"text","text":"Sure."},{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"{\"error\":\"missing\"}","is_error":true},{"type":"text","text":"Then?"}]}],"tools":[{"name":"read","description":"Reads","input_schema":{"type":"object"}}],"stream":false}"#]]
        .assert_eq(&request_body(&request, false).to_string());
    }
}
