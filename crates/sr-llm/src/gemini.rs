//! Gemini `generateContent` / `streamGenerateContent?alt=sse`.
//!
//! Every streamed chunk is a whole `GenerateContentResponse`; function calls
//! arrive complete and may lack ids (we make them up, and never send made-up
//! ids back). `thoughtSignature`s are kept on the call and echoed, as Gemini 3
//! requires for function calling.

use serde_json::{Map, Value, json};

use crate::http::{Decoder, HttpClient, Post};
use crate::limits::Out;
use crate::types::SYNTHETIC_ID_PREFIX;
use crate::{ChatEvent, ChatRequest, ChatStream, Endpoint, FinishReason, Part, Provider, Role, ToolCall, Usage};

pub struct Gemini {
    endpoint: Endpoint,
    http: HttpClient,
}

impl Gemini {
    /// `endpoint.base_url` is the root without the version, e.g.
    /// `https://generativelanguage.googleapis.com`.
    pub fn new(endpoint: Endpoint, http: HttpClient) -> Gemini {
        Gemini { endpoint, http }
    }
}

impl Provider for Gemini {
    fn chat(&self, request: ChatRequest) -> ChatStream {
        let model = request.model.strip_prefix("models/").unwrap_or(&request.model);
        if let Err(err) = crate::check_model_id(model) {
            return crate::provider::failed(err);
        }
        let method = if self.endpoint.stream { "streamGenerateContent?alt=sse" } else { "generateContent" };
        let url = format!(
            "{}/v1beta/models/{}:{method}",
            self.endpoint.base_url.trim_end_matches('/'),
            crate::model_id::path_segment(model)
        );
        let post = Post::new(&self.endpoint.name, url, &request_body(&request));
        match &self.endpoint.api_key {
            Some(key) => match post.secret_header("x-goog-api-key", "", key) {
                Ok(post) => self.http.send::<Reply>(post),
                Err(err) => crate::provider::failed(err),
            },
            None => self.http.send::<Reply>(post),
        }
    }
}

pub(crate) fn request_body(request: &ChatRequest) -> Value {
    let mut contents: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let role = if message.role == Role::Assistant { "model" } else { "user" };
        let parts = message.content.iter().filter_map(|part| match part {
            Part::Text { text } if text.is_empty() => None,
            Part::Text { text } => Some(json!({"text": text})),
            Part::ToolCall(call) => {
                let mut function_call = json!({"name": call.name, "args": call.arguments});
                if !call.id.starts_with(SYNTHETIC_ID_PREFIX) {
                    function_call["id"] = json!(call.id);
                }
                let mut part = json!({"functionCall": function_call});
                if let Some(signature) = &call.signature {
                    part["thoughtSignature"] = json!(signature);
                }
                Some(part)
            }
            Part::ToolResult(result) => {
                let response = match (&result.content, result.is_error) {
                    (content, true) => json!({"error": content}),
                    (content @ Value::Object(_), false) => content.clone(),
                    (content, false) => json!({"output": content}),
                };
                let mut function_response = json!({"name": result.name, "response": response});
                if !result.call_id.starts_with(SYNTHETIC_ID_PREFIX) {
                    function_response["id"] = json!(result.call_id);
                }
                Some(json!({"functionResponse": function_response}))
            }
        });
        match contents.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(parts),
            _ => contents.push((role, parts.collect())),
        }
    }
    let contents: Vec<Value> = contents
        .into_iter()
        .filter(|(_, parts)| !parts.is_empty())
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect();

    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    if let Some(system) = &request.system {
        body.insert("systemInstruction".into(), json!({"parts": [{"text": system}]}));
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"name": tool.name, "description": tool.description, "parametersJsonSchema": tool.parameters})
            })
            .collect();
        body.insert("tools".into(), json!([{"functionDeclarations": declarations}]));
    }
    let mut config = Map::new();
    if let Some(temperature) = request.temperature {
        config.insert("temperature".into(), json!(temperature));
    }
    if let Some(max_tokens) = request.max_tokens {
        config.insert("maxOutputTokens".into(), json!(max_tokens));
    }
    if let Some(schema) = &request.response_schema {
        config.insert("responseMimeType".into(), json!("application/json"));
        config.insert("responseJsonSchema".into(), schema.clone());
    }
    if !config.is_empty() {
        body.insert("generationConfig".into(), Value::Object(config));
    }
    Value::Object(body)
}

#[derive(Default)]
struct Reply {
    calls: usize,
    usage: Usage,
    finish: Option<FinishReason>,
}

impl Decoder for Reply {
    fn event(&mut self, _name: Option<&str>, data: Value, out: &mut Out) -> Result<bool, String> {
        self.chunk(&data, out)?;
        Ok(false)
    }

    fn body(&mut self, body: Value, out: &mut Out) -> Result<(), String> {
        // A non-streamed reply is one chunk, or a list of them from some proxies.
        match body {
            Value::Array(chunks) => chunks.iter().try_for_each(|chunk| self.chunk(chunk, out)),
            chunk => self.chunk(&chunk, out),
        }
    }

    fn said_finished(&self) -> bool {
        self.finish.is_some()
    }

    fn finish(&mut self, out: &mut Out) {
        out.push(ChatEvent::Usage(self.usage));
        let reason = match self.finish.take() {
            Some(FinishReason::Stop) | None if self.calls > 0 => FinishReason::ToolCalls,
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
        if let Some(usage) = chunk.get("usageMetadata").filter(|usage| usage.is_object()) {
            self.usage = usage_of(usage);
        }
        if chunk["promptFeedback"]["blockReason"].is_string() {
            self.finish = Some(FinishReason::ContentFilter);
        }
        let candidate = &chunk["candidates"][0];
        for part in candidate["content"]["parts"].as_array().into_iter().flatten() {
            if part["thought"] == true {
                continue;
            }
            out.text(part["text"].as_str().unwrap_or_default())?;
            let function_call = &part["functionCall"];
            if function_call.is_object() {
                let id = match function_call["id"].as_str() {
                    Some(id) if !id.is_empty() => id.to_owned(),
                    _ => format!("{SYNTHETIC_ID_PREFIX}{}", self.calls),
                };
                let name = function_call["name"].as_str().unwrap_or_default();
                let arguments = if function_call["args"].is_null() { json!({}) } else { function_call["args"].clone() };
                out.begin_call()?;
                out.object_arguments(&arguments)?;
                let mut call = ToolCall::from_object(id, name.to_owned(), arguments);
                call.signature = part["thoughtSignature"].as_str().map(str::to_owned);
                self.calls += 1;
                out.call(call);
            }
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            self.finish = Some(finish_reason(reason));
        }
        Ok(())
    }
}

fn usage_of(usage: &Value) -> Usage {
    let count = |field: &str| usage[field].as_u64().unwrap_or(0);
    let thoughts = count("thoughtsTokenCount");
    Usage {
        input_tokens: count("promptTokenCount") + count("toolUsePromptTokenCount"),
        output_tokens: count("candidatesTokenCount") + thoughts,
        cache_read_tokens: count("cachedContentTokenCount"),
        cache_write_tokens: 0,
        reasoning_tokens: thoughts,
    }
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            FinishReason::ContentFilter
        }
        other => FinishReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::{Message, ToolResult, ToolSpec};

    fn decode(chunks: &[Value]) -> Vec<ChatEvent> {
        let mut reply = Reply::default();
        let mut out = Out::default();
        for chunk in chunks {
            reply.event(None, chunk.clone(), &mut out).unwrap();
        }
        reply.finish(&mut out);
        out.events
    }

    #[test]
    fn chunks_decode_with_synthesized_ids_and_signatures() {
        let events = decode(&[
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"text": "thinking...", "thought": true}, {"text": "Let me "}]}}]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "check."},
                {"functionCall": {"name": "read", "args": {"path": "a"}}, "thoughtSignature": "sig"},
                {"functionCall": {"name": "list", "id": "given"}}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 3, "thoughtsTokenCount": 2,
                                  "cachedContentTokenCount": 5, "totalTokenCount": 12}}),
        ]);
        let mut read = ToolCall::new("sr_call_0", "read", json!({"path": "a"}));
        read.signature = Some("sig".into());
        assert_eq!(
            events,
            vec![
                ChatEvent::TextDelta("Let me ".into()),
                ChatEvent::TextDelta("check.".into()),
                ChatEvent::ToolCall(read),
                ChatEvent::ToolCall(ToolCall::new("given", "list", json!({}))),
                ChatEvent::Usage(Usage {
                    input_tokens: 7,
                    output_tokens: 5,
                    cache_read_tokens: 5,
                    cache_write_tokens: 0,
                    reasoning_tokens: 2
                }),
                ChatEvent::Finished { reason: FinishReason::ToolCalls },
            ]
        );
    }

    #[test]
    fn cut_or_corrupted_streams_never_panic() {
        crate::http::assert_robust::<Reply>(concat!(
            "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]}}]}\r\n\r\n",
            "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":{\"a\":1}}}]},",
            "\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":2}}\r\n\r\n",
        ));
    }

    #[test]
    fn a_blocked_prompt_finishes_as_filtered() {
        let events = decode(&[json!({"promptFeedback": {"blockReason": "SAFETY"}})]);
        assert_eq!(events.last(), Some(&ChatEvent::Finished { reason: FinishReason::ContentFilter }));
    }

    #[test]
    fn requests_map_to_contents() {
        let mut call = ToolCall::new("sr_call_0", "read", json!({"path": "a"}));
        call.signature = Some("sig".into());
        let request = ChatRequest {
            model: "gemini-2.5-flash".into(),
            system: Some("Be brief.".into()),
            messages: vec![
                Message::user("Read a"),
                Message { role: Role::Assistant, content: vec![Part::ToolCall(call)] },
                Message::tool_results(vec![ToolResult {
                    call_id: "sr_call_0".into(),
                    name: "read".into(),
                    content: json!("text"),
                    is_error: false,
                }]),
            ],
            tools: vec![ToolSpec {
                name: "read".into(),
                description: "Reads".into(),
                parameters: json!({"type": "object"}),
            }],
            response_schema: Some(json!({"type": "object"})),
            temperature: Some(0.0),
            max_tokens: Some(10),
        };
        expect![[r#"{"contents":[{"role":"user","parts":[{"text":"Read a"}]},{"role":"model","parts":[{"functionCall":{"name":"read","args":{"path":"a"}},"thoughtSignature":"sig"}]},{"role":"user","parts":[{"functionResponse":{"name":"read","response":{"output":"text"}}}]}],"systemInstruction":{"parts":[{"text":"Be brief."}]},"tools":[{"functionDeclarations":[{"name":"read","description":"Reads","parametersJsonSchema":{"type":"object"}}]}],"generationConfig":{"temperature":0.0,"maxOutputTokens":10,"responseMimeType":"application/json","responseJsonSchema":{"type":"object"}}}"#]]
        .assert_eq(&request_body(&request).to_string());
    }
}
