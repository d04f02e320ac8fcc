//! OpenAI Chat Completions (`POST {base}/chat/completions`), also spoken by
//! Ollama, vLLM, llama.cpp, LiteLLM, OpenRouter, Groq and others.
//!
//! Replies are read as untyped JSON, because compatible servers differ in what
//! they omit: `id`, `object`, `index` on tool-call deltas, `[DONE]`, usage, or
//! send `finish_reason: ""` and arguments as an object instead of a string.

use serde_json::{Map, Value, json};

use crate::http::{Decoder, HttpClient, Post};
use crate::limits::Out;
use crate::types::SYNTHETIC_ID_PREFIX;
use crate::{ChatEvent, ChatRequest, ChatStream, Endpoint, FinishReason, Part, Provider, Role, ToolCall, Usage};

pub struct OpenAi {
    endpoint: Endpoint,
    http: HttpClient,
}

impl OpenAi {
    /// `endpoint.base_url` is the API root with its version, e.g. `https://api.openai.com/v1`.
    pub fn new(endpoint: Endpoint, http: HttpClient) -> OpenAi {
        OpenAi { endpoint, http }
    }
}

impl Provider for OpenAi {
    fn chat(&self, request: ChatRequest) -> ChatStream {
        if let Err(err) = crate::check_model_id(&request.model) {
            return crate::provider::failed(err);
        }
        let url = format!("{}/chat/completions", self.endpoint.base_url.trim_end_matches('/'));
        let post = Post::new(&self.endpoint.name, url, &request_body(&request, self.endpoint.stream));
        match &self.endpoint.api_key {
            Some(key) => match post.secret_header("authorization", "Bearer ", key) {
                Ok(post) => self.http.send::<Reply>(post),
                Err(err) => crate::provider::failed(err),
            },
            None => self.http.send::<Reply>(post),
        }
    }
}

pub(crate) fn request_body(request: &ChatRequest, stream: bool) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        let mut text = String::new();
        let mut calls = Vec::new();
        let mut results = Vec::new();
        for part in &message.content {
            match part {
                Part::Text { text: more } => text.push_str(more),
                Part::ToolCall(call) => calls.push(json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text()},
                })),
                Part::ToolResult(result) => results.push(json!({
                    "role": "tool",
                    "tool_call_id": result.call_id,
                    "content": result.content_text(),
                })),
            }
        }
        // Tool results answer the previous assistant message, so they go first.
        messages.extend(results);
        match message.role {
            Role::Assistant if !calls.is_empty() => {
                let content = if text.is_empty() { Value::Null } else { Value::String(text) };
                messages.push(json!({"role": "assistant", "content": content, "tool_calls": calls}));
            }
            Role::Assistant if !text.is_empty() => messages.push(json!({"role": "assistant", "content": text})),
            Role::User | Role::Tool if !text.is_empty() => messages.push(json!({"role": "user", "content": text})),
            _ => {}
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request.tools.iter().map(|tool| {
            json!({
                "type": "function",
                "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
            })
        });
        body.insert("tools".into(), tools.collect());
    }
    if let Some(schema) = &request.response_schema {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}),
        );
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(max_tokens) = request.max_tokens {
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    body.insert("stream".into(), json!(stream));
    if stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

/// Accumulates a reply; streamed chunks and a whole reply go through the same
/// code, as a whole reply is one chunk with `message` instead of `delta`.
#[derive(Default)]
struct Reply {
    calls: Vec<PartialCall>,
    finish: Option<FinishReason>,
    usage: Usage,
}

#[derive(Default)]
struct PartialCall {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
    /// Arguments some servers send as a JSON object rather than text.
    object: Option<Value>,
}

impl Decoder for Reply {
    fn event(&mut self, _name: Option<&str>, data: Value, out: &mut Out) -> Result<bool, String> {
        self.chunk(&data, out)?;
        Ok(false)
    }

    fn body(&mut self, body: Value, out: &mut Out) -> Result<(), String> {
        self.chunk(&body, out)
    }

    fn said_finished(&self) -> bool {
        self.finish.is_some()
    }

    fn finish(&mut self, out: &mut Out) {
        let has_calls = !self.calls.is_empty();
        for (n, call) in self.calls.drain(..).enumerate() {
            let id = if call.id.is_empty() { format!("{SYNTHETIC_ID_PREFIX}{n}") } else { call.id };
            let call = match call.object {
                Some(arguments) => ToolCall::from_object(id, call.name, arguments),
                None => ToolCall::from_raw(id, call.name, &call.arguments),
            };
            out.call(call);
        }
        out.push(ChatEvent::Usage(self.usage));
        let reason = match self.finish.take() {
            // Ollama and others say "stop" when they call tools.
            Some(FinishReason::Stop) | None if has_calls => FinishReason::ToolCalls,
            Some(reason) => reason,
            None => FinishReason::Stop,
        };
        out.push(ChatEvent::Finished { reason });
    }
}

impl Reply {
    fn chunk(&mut self, chunk: &Value, out: &mut Out) -> Result<(), String> {
        if !chunk.is_object() {
            return Err(format!("expected a JSON object, got {chunk}"));
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            self.usage = usage_of(usage);
        }
        let Some(choice) = chunk.get("choices").and_then(Value::as_array).and_then(|choices| choices.first()) else {
            return Ok(());
        };
        let message = choice.get("delta").or_else(|| choice.get("message")).unwrap_or(&Value::Null);
        match message.get("content") {
            Some(Value::String(text)) => out.text(text)?,
            // Some servers send content as parts: [{"type": "text", "text": ...}].
            Some(Value::Array(parts)) => {
                let text: String = parts.iter().filter_map(|part| part.get("text").and_then(Value::as_str)).collect();
                out.text(&text)?;
            }
            _ => {}
        }
        for delta in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            self.tool_call_delta(delta, out)?;
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str).filter(|reason| !reason.is_empty()) {
            self.finish = Some(FinishReason::from(reason.to_owned()));
        }
        Ok(())
    }

    /// Deltas belong to a call by `index`, else by `id`, else to the last call.
    fn tool_call_delta(&mut self, delta: &Value, out: &mut Out) -> Result<(), String> {
        let index = delta.get("index").and_then(Value::as_u64);
        let id = delta.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
        let position = match (index, id) {
            (Some(index), _) => self.calls.iter().position(|call| call.index == Some(index)),
            (None, Some(id)) => self.calls.iter().position(|call| call.id == id),
            (None, None) => self.calls.len().checked_sub(1),
        };
        let call = match position {
            Some(position) => &mut self.calls[position],
            None => {
                out.begin_call()?;
                self.calls.push(PartialCall { index, ..PartialCall::default() });
                self.calls.last_mut().expect("just pushed")
            }
        };
        if let Some(id) = id {
            id.clone_into(&mut call.id);
        }
        let function = delta.get("function").unwrap_or(&Value::Null);
        if let Some(name) = function.get("name").and_then(Value::as_str)
            && call.name.is_empty()
        {
            name.clone_into(&mut call.name);
        }
        match function.get("arguments") {
            Some(Value::String(fragment)) => out.arguments(&mut call.arguments, fragment),
            Some(object @ Value::Object(_)) => {
                call.object = Some(object.clone());
                out.object_arguments(object)
            }
            _ => Ok(()),
        }
    }
}

fn usage_of(usage: &Value) -> Usage {
    let count =
        |path: &[&str]| path.iter().try_fold(usage, |value, key| value.get(key)).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: count(&["prompt_tokens"]),
        output_tokens: count(&["completion_tokens"]),
        cache_read_tokens: count(&["prompt_tokens_details", "cached_tokens"]),
        cache_write_tokens: 0,
        reasoning_tokens: count(&["completion_tokens_details", "reasoning_tokens"]),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::{Message, ToolResult, ToolSpec};

    fn decode(chunks: &[&str]) -> Vec<ChatEvent> {
        let mut reply = Reply::default();
        let mut out = Out::default();
        for chunk in chunks {
            reply.event(None, serde_json::from_str(chunk).unwrap(), &mut out).unwrap();
        }
        reply.finish(&mut out);
        out.events
    }

    #[test]
    fn tool_call_deltas_accumulate_by_index() {
        let events = decode(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"list","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"a\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":4}}}"#,
        ]);
        assert_eq!(
            events,
            vec![
                ChatEvent::ToolCall(ToolCall::new("call_a", "read", json!({"path": "a"}))),
                ChatEvent::ToolCall(ToolCall::new("call_b", "list", json!({}))),
                ChatEvent::Usage(Usage {
                    input_tokens: 10,
                    output_tokens: 5,
                    cache_read_tokens: 4,
                    ..Usage::default()
                }),
                ChatEvent::Finished { reason: FinishReason::ToolCalls },
            ]
        );
    }

    #[test]
    fn quirks_of_compatible_servers_are_tolerated() {
        // No index, id only on the first delta, object arguments, empty finish
        // reason, "stop" with tool calls, no usage.
        let events = decode(&[
            r#"{"choices":[{"delta":{"content":"Let me look."},"finish_reason":""}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"x1","function":{"name":"read","arguments":"{\"a\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"x2","function":{"name":"list","arguments":{"deep":true}}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
        ]);
        assert_eq!(
            events,
            vec![
                ChatEvent::TextDelta("Let me look.".into()),
                ChatEvent::ToolCall(ToolCall::new("x1", "read", json!({"a": 1}))),
                ChatEvent::ToolCall(ToolCall::new("x2", "list", json!({"deep": true}))),
                ChatEvent::Usage(Usage::default()),
                ChatEvent::Finished { reason: FinishReason::ToolCalls },
            ]
        );
    }

    #[test]
    fn broken_arguments_and_missing_ids_are_reported_not_dropped() {
        let events = decode(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"read","arguments":"{\"path\": "}}]},"finish_reason":"length"}]}"#,
        ]);
        let ChatEvent::ToolCall(call) = &events[0] else { panic!("{events:?}") };
        assert_eq!(call.id, "sr_call_0");
        assert_eq!(call.arguments, json!("{\"path\": "));
        assert!(call.arguments_error.is_some());
        assert_eq!(events.last(), Some(&ChatEvent::Finished { reason: FinishReason::Length }));
    }

    #[test]
    fn a_whole_reply_decodes_like_a_stream() {
        let mut reply = Reply::default();
        let mut out = Out::default();
        let body = json!({
            "choices": [{"message": {"role": "assistant", "content": "Hi", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}}
            ]}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4, "completion_tokens_details": {"reasoning_tokens": 2}}
        });
        reply.body(body, &mut out).unwrap();
        reply.finish(&mut out);
        assert_eq!(
            out.events,
            vec![
                ChatEvent::TextDelta("Hi".into()),
                ChatEvent::ToolCall(ToolCall::new("c", "f", json!({"x": 1}))),
                ChatEvent::Usage(Usage { input_tokens: 3, output_tokens: 4, reasoning_tokens: 2, ..Usage::default() }),
                ChatEvent::Finished { reason: FinishReason::ToolCalls },
            ]
        );
    }

    #[test]
    fn a_chunk_that_is_not_an_object_is_an_error() {
        let err = Reply::default().event(None, json!([1, 2]), &mut Out::default()).unwrap_err();
        assert!(err.contains("expected a JSON object"), "{err}");
    }

    #[test]
    fn cut_or_corrupted_streams_never_panic() {
        crate::http::assert_robust::<Reply>(concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",",
            "\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n\n",
            "data: [DONE]\n\n",
        ));
    }

    #[test]
    fn requests_map_to_the_wire_format() {
        let call = ToolCall::new("call_1", "read", json!({"path": "a"}));
        let request = ChatRequest {
            model: "gpt-4o".into(),
            system: Some("Be brief.".into()),
            messages: vec![
                Message::user("Read a"),
                Message { role: Role::Assistant, content: vec![Part::ToolCall(call)] },
                Message::tool_results(vec![ToolResult {
                    call_id: "call_1".into(),
                    name: "read".into(),
                    content: json!("contents"),
                    is_error: false,
                }]),
            ],
            tools: vec![ToolSpec {
                name: "read".into(),
                description: "Reads".into(),
                parameters: json!({"type": "object"}),
            }],
            response_schema: Some(json!({"type": "object"})),
            temperature: Some(0.5),
            max_tokens: Some(100),
        };
        expect![[r#"{"model":"gpt-4o","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Read a"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"contents"}],"tools":[{"type":"function","function":{"name":"read","description":"Reads","parameters":{"type":"object"}}}],"response_format":{"type":"json_schema","json_schema":{"name":"response","schema":{"type":"object"}}},"temperature":0.5,"max_tokens":100,"stream":true,"stream_options":{"include_usage":true}}"#]]
        .assert_eq(&request_body(&request, true).to_string());
    }
}
