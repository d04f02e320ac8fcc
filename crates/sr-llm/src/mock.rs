//! A local server speaking the OpenAI, Anthropic and Gemini wire protocols with
//! scripted replies, so tests exercise the real HTTP clients: streaming, tool
//! calls, errors, rate limits and slow answers.
//!
//! It binds `127.0.0.1` on a port the OS picks. Replies are served in the order
//! they were pushed, whatever the request; each is rendered in the protocol of
//! the path it answers (`/chat/completions`, `/messages`, `:generateContent`,
//! `:streamGenerateContent`), streamed when the request asked for a stream.
//!
//! ```no_run
//! # async fn example() {
//! use sr_llm::mock::{MockReply, MockServer};
//! use sr_llm::{HttpClient, HttpOptions, Router};
//!
//! let server = MockServer::start().await;
//! server.push(MockReply::text("Hello").usage(10, 2));
//! server.push(MockReply::tool_call("call_1", "read_file", serde_json::json!({"path": "a.txt"})));
//! let router = Router::from_vars(HttpClient::new(HttpOptions::default()).unwrap(), server.vars());
//! // ... run the code under test with `router`, then:
//! assert_eq!(server.requests()[0].body["model"], "gpt-4o");
//! # }
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Response, StatusCode, Uri};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::ToolCall;

/// The key [`MockServer::vars`] configures; tests can check it arrived.
pub const MOCK_KEY: &str = "mock-key";

pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Default)]
struct Shared {
    script: Mutex<Script>,
    frames_sent: AtomicUsize,
}

/// Answers a request from its content, when no pushed reply is left.
type Responder = Arc<dyn Fn(&MockRequest) -> MockReply + Send + Sync>;

#[derive(Default)]
struct Script {
    replies: VecDeque<MockReply>,
    requests: Vec<MockRequest>,
    responder: Option<Responder>,
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct MockRequest {
    pub method: String,
    /// The path with its query, e.g. `/v1beta/models/m:streamGenerateContent?alt=sse`.
    pub path: String,
    /// Header names in lower case.
    pub headers: BTreeMap<String, String>,
    /// The body as JSON, or as a JSON string when it was not JSON.
    pub body: Value,
}

impl MockRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }
}

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct MockReply {
    kind: ReplyKind,
    headers: Vec<(String, String)>,
    delay: Duration,
    chunk_delay: Duration,
}

#[derive(Debug, Clone)]
enum ReplyKind {
    Answer { chunks: Vec<String>, calls: Vec<ToolCall>, usage: (u64, u64) },
    Error { status: u16, message: String },
    Raw { status: u16, content_type: String, body: String },
}

impl MockReply {
    fn new(kind: ReplyKind) -> MockReply {
        MockReply { kind, headers: Vec::new(), delay: Duration::ZERO, chunk_delay: Duration::ZERO }
    }

    /// An assistant answer, streamed as one delta.
    pub fn text(text: impl Into<String>) -> MockReply {
        MockReply::chunks([text.into()])
    }

    /// An assistant answer, streamed as these deltas.
    pub fn chunks(chunks: impl IntoIterator<Item = impl Into<String>>) -> MockReply {
        let chunks = chunks.into_iter().map(Into::into).collect();
        MockReply::new(ReplyKind::Answer { chunks, calls: Vec::new(), usage: (0, 0) })
    }

    /// An answer that calls one tool. An empty id is left out on the wire, as
    /// Gemini and some local servers do.
    pub fn tool_call(id: &str, name: &str, arguments: Value) -> MockReply {
        MockReply::chunks(Vec::<String>::new()).with_tool_call(id, name, arguments)
    }

    /// Adds a tool call to an answer; streamed with its arguments in pieces.
    pub fn with_tool_call(mut self, id: &str, name: &str, arguments: Value) -> MockReply {
        if let ReplyKind::Answer { calls, .. } = &mut self.kind {
            calls.push(ToolCall::new(id, name, arguments));
        }
        self
    }

    /// Token counts the answer reports.
    pub fn usage(mut self, input: u64, output: u64) -> MockReply {
        if let ReplyKind::Answer { usage, .. } = &mut self.kind {
            *usage = (input, output);
        }
        self
    }

    /// Replies from a JSON script, a list of `{"text": "…"}` or `{"tool_call":
    /// {"id", "name", "arguments"}}`, each with an optional `"usage": [input,
    /// output]`: how an example keeps the model lines of its recording as data.
    pub fn script(text: &str) -> Result<Vec<MockReply>, String> {
        let items: Vec<Value> =
            serde_json::from_str(text).map_err(|e| format!("the script is not a JSON list: {e}"))?;
        items
            .iter()
            .enumerate()
            .map(|(n, item)| {
                let reply = match (item.get("text").and_then(Value::as_str), item.get("tool_call")) {
                    (Some(text), None) => MockReply::text(text),
                    (None, Some(call)) => {
                        let field = |name: &str| call.get(name).and_then(Value::as_str).unwrap_or_default();
                        let arguments = call.get("arguments").cloned().unwrap_or(Value::Object(Default::default()));
                        MockReply::tool_call(field("id"), field("name"), arguments)
                    }
                    _ => return Err(format!("reply {n} has neither `text` nor `tool_call` (or both)")),
                };
                Ok(match item.get("usage").and_then(Value::as_array).map(|u| u.as_slice()) {
                    Some([input, output]) => reply.usage(input.as_u64().unwrap_or(0), output.as_u64().unwrap_or(0)),
                    _ => reply,
                })
            })
            .collect()
    }

    /// An HTTP error in the protocol's error shape.
    pub fn error(status: u16, message: impl Into<String>) -> MockReply {
        MockReply::new(ReplyKind::Error { status, message: message.into() })
    }

    /// HTTP 429 with a `Retry-After` header (seconds or an HTTP date).
    pub fn rate_limited(retry_after: &str) -> MockReply {
        MockReply::error(429, "Rate limit reached, slow down").header("retry-after", retry_after)
    }

    /// Exactly this body, for malformed or unusual replies. A `text/event-stream`
    /// body is sent as is, in one piece.
    pub fn raw(status: u16, content_type: &str, body: impl Into<String>) -> MockReply {
        MockReply::new(ReplyKind::Raw { status, content_type: content_type.to_owned(), body: body.into() })
    }

    pub fn header(mut self, name: &str, value: &str) -> MockReply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Waits before sending the response head.
    pub fn delay(mut self, delay: Duration) -> MockReply {
        self.delay = delay;
        self
    }

    /// Waits before each streamed event.
    pub fn chunk_delay(mut self, delay: Duration) -> MockReply {
        self.chunk_delay = delay;
        self
    }
}

impl MockServer {
    /// Starts serving on `127.0.0.1` at an ephemeral port; stops when dropped.
    pub async fn start() -> MockServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("binding 127.0.0.1:0");
        let addr = listener.local_addr().expect("a bound listener has an address");
        let shared = Arc::new(Shared::default());
        let app = axum::Router::new().fallback(handle).with_state(shared.clone());
        let task = tokio::spawn(async move {
            // Serving only ends with an I/O error on the listener, which a test cannot act on.
            let _ = axum::serve(listener, app).await;
        });
        MockServer { addr, shared, task }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues a reply for the next request.
    pub fn push(&self, reply: MockReply) {
        self.script().replies.push_back(reply);
    }

    /// Answers every request no pushed reply is left for with `responder`'s
    /// reply to it: a model whose answers depend on the request, not on the
    /// order requests arrive in (parallel branches, a resumed run).
    pub fn respond_with(&self, responder: impl Fn(&MockRequest) -> MockReply + Send + Sync + 'static) {
        self.script().responder = Some(Arc::new(responder));
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<MockRequest> {
        self.script().requests.clone()
    }

    /// Replies pushed but not served yet.
    pub fn remaining(&self) -> usize {
        self.script().replies.len()
    }

    /// Events written to streamed replies so far; a client that drops a stream
    /// stops this from growing.
    pub fn frames_sent(&self) -> usize {
        self.shared.frames_sent.load(Ordering::SeqCst)
    }

    /// Environment variables pointing every provider of [`Router`](crate::Router)
    /// here, with [`MOCK_KEY`] as the key: pass to `Router::from_vars`.
    pub fn vars(&self) -> impl Fn(&str) -> Option<String> + Send + Sync + 'static {
        let url = self.url();
        move |name| match name {
            "OPENAI_API_KEY" | "ANTHROPIC_API_KEY" | "GEMINI_API_KEY" => Some(MOCK_KEY.to_owned()),
            "OPENAI_BASE_URL" => Some(format!("{url}/v1")),
            "ANTHROPIC_BASE_URL" | "GEMINI_BASE_URL" | "OLLAMA_API_BASE" => Some(url.clone()),
            _ => None,
        }
    }

    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.shared.script.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Wire {
    OpenAi,
    Anthropic,
    Gemini,
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let path = uri.path_and_query().map_or_else(|| uri.path().to_owned(), |path| path.as_str().to_owned());
    let body = serde_json::from_slice(&body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into()));
    let request = MockRequest {
        method: method.to_string(),
        path: path.clone(),
        headers: headers
            .iter()
            .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
            .collect(),
        body,
    };
    let wire = if uri.path().ends_with("/messages") {
        Wire::Anthropic
    } else if uri.path().contains(":generateContent") || uri.path().contains(":streamGenerateContent") {
        Wire::Gemini
    } else {
        Wire::OpenAi
    };
    let stream = match wire {
        Wire::Gemini => uri.path().contains(":streamGenerateContent"),
        _ => request.body["stream"] == true,
    };
    let reply = {
        let mut script = shared.script.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        script.requests.push(request.clone());
        let responder = script.responder.clone();
        script.replies.pop_front().or_else(|| responder.map(|respond| respond(&request)))
    };
    let Some(reply) = reply else {
        let message = format!("mock server: no scripted reply left for {method} {path}");
        return json_response(404, error_body(wire, 404, &message), &[]);
    };
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    match reply.kind {
        ReplyKind::Error { status, message } => {
            json_response(status, error_body(wire, status, &message), &reply.headers)
        }
        ReplyKind::Raw { status, content_type, body } => {
            let mut response = Response::builder().status(status).header("content-type", content_type);
            for (name, value) in &reply.headers {
                response = response.header(name, value);
            }
            response.body(Body::from(body)).expect("a valid raw response")
        }
        ReplyKind::Answer { chunks, calls, usage } => {
            let answer = Answer { chunks, calls, usage, model: request.body["model"].as_str().unwrap_or("mock-model") };
            if stream {
                let frames = match wire {
                    Wire::OpenAi => answer.openai_frames(request.body["stream_options"]["include_usage"] == true),
                    Wire::Anthropic => answer.anthropic_frames(),
                    Wire::Gemini => answer.gemini_frames(),
                };
                sse_response(frames, reply.chunk_delay, shared, &reply.headers)
            } else {
                let body = match wire {
                    Wire::OpenAi => answer.openai_body(),
                    Wire::Anthropic => answer.anthropic_body(),
                    Wire::Gemini => answer.gemini_body(),
                };
                json_response(200, body, &reply.headers)
            }
        }
    }
}

fn json_response(status: u16, body: Value, headers: &[(String, String)]) -> Response<Body> {
    let mut response =
        Response::builder().status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
    response = response.header("content-type", "application/json");
    for (name, value) in headers {
        response = response.header(name, value);
    }
    response.body(Body::from(body.to_string())).expect("a valid JSON response")
}

fn sse_response(
    frames: Vec<String>,
    chunk_delay: Duration,
    shared: Arc<Shared>,
    headers: &[(String, String)],
) -> Response<Body> {
    let body = futures::stream::iter(frames).then(move |frame| {
        let shared = shared.clone();
        async move {
            if !chunk_delay.is_zero() {
                tokio::time::sleep(chunk_delay).await;
            }
            shared.frames_sent.fetch_add(1, Ordering::SeqCst);
            Ok::<_, Infallible>(frame)
        }
    });
    let mut response = Response::builder().status(200).header("content-type", "text/event-stream");
    for (name, value) in headers {
        response = response.header(name, value);
    }
    response.body(Body::from_stream(body)).expect("a valid event stream")
}

fn error_body(wire: Wire, status: u16, message: &str) -> Value {
    match wire {
        Wire::OpenAi => json!({"error": {"message": message, "type": "mock_error", "param": null, "code": null}}),
        Wire::Anthropic => {
            let kind = match status {
                401 => "authentication_error",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                500..=599 => "api_error",
                _ => "invalid_request_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Wire::Gemini => {
            let kind = match status {
                400 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                429 => "RESOURCE_EXHAUSTED",
                503 => "UNAVAILABLE",
                _ => "INTERNAL",
            };
            json!({"error": {"code": status, "message": message, "status": kind}})
        }
    }
}

/// A scripted answer rendered in each protocol, the way the real services send it.
struct Answer<'a> {
    chunks: Vec<String>,
    calls: Vec<ToolCall>,
    usage: (u64, u64),
    model: &'a str,
}

impl Answer<'_> {
    fn text(&self) -> String {
        self.chunks.concat()
    }

    /// Argument text in up to three pieces, so clients must reassemble it.
    fn pieces(arguments: &Value) -> Vec<String> {
        let text = arguments.to_string();
        let chars: Vec<char> = text.chars().collect();
        let step = chars.len().div_ceil(3).max(1);
        chars.chunks(step).map(|piece| piece.iter().collect()).collect()
    }

    fn openai_frames(&self, include_usage: bool) -> Vec<String> {
        let chunk = |choices: Value| {
            let chunk = json!({
                "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0,
                "model": self.model, "choices": choices,
            });
            format!("data: {chunk}\n\n")
        };
        let mut frames =
            vec![chunk(json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]))];
        for text in &self.chunks {
            frames.push(chunk(json!([{"index": 0, "delta": {"content": text}, "finish_reason": null}])));
        }
        for (index, call) in self.calls.iter().enumerate() {
            let mut head =
                json!({"index": index, "type": "function", "function": {"name": call.name, "arguments": ""}});
            if !call.id.is_empty() {
                head["id"] = json!(call.id);
            }
            frames.push(chunk(json!([{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": null}])));
            for piece in Answer::pieces(&call.arguments) {
                let delta = json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]});
                frames.push(chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}])));
            }
        }
        let reason = if self.calls.is_empty() { "stop" } else { "tool_calls" };
        frames.push(chunk(json!([{"index": 0, "delta": {}, "finish_reason": reason}])));
        if include_usage {
            let mut last = json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0,
                                  "model": self.model, "choices": []});
            last["usage"] = self.openai_usage();
            frames.push(format!("data: {last}\n\n"));
        }
        frames.push("data: [DONE]\n\n".to_owned());
        frames
    }

    fn openai_usage(&self) -> Value {
        let (input, output) = self.usage;
        json!({"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output})
    }

    fn openai_body(&self) -> Value {
        let content = if self.chunks.is_empty() { Value::Null } else { json!(self.text()) };
        let mut message = json!({"role": "assistant", "content": content});
        if !self.calls.is_empty() {
            let calls: Vec<Value> = self
                .calls
                .iter()
                .map(|call| {
                    json!({"id": call.id, "type": "function",
                           "function": {"name": call.name, "arguments": call.arguments.to_string()}})
                })
                .collect();
            message["tool_calls"] = json!(calls);
        }
        let reason = if self.calls.is_empty() { "stop" } else { "tool_calls" };
        json!({
            "id": "chatcmpl-mock", "object": "chat.completion", "created": 0, "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": reason}],
            "usage": self.openai_usage(),
        })
    }

    fn anthropic_stop_reason(&self) -> &'static str {
        if self.calls.is_empty() { "end_turn" } else { "tool_use" }
    }

    fn anthropic_frames(&self) -> Vec<String> {
        let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
        let (input, output) = self.usage;
        let mut frames = vec![
            event(
                "message_start",
                json!({"type": "message_start", "message": {
                    "id": "msg_mock", "type": "message", "role": "assistant", "model": self.model, "content": [],
                    "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": input, "output_tokens": 1}}}),
            ),
            event("ping", json!({"type": "ping"})),
        ];
        let mut index = 0;
        if !self.chunks.is_empty() {
            frames.push(event(
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
            ));
            for text in &self.chunks {
                frames.push(event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": text}}),
                ));
            }
            frames.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
            index += 1;
        }
        for call in &self.calls {
            frames.push(event(
                "content_block_start",
                json!({"type": "content_block_start", "index": index,
                       "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}),
            ));
            for piece in Answer::pieces(&call.arguments) {
                frames.push(event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": piece}}),
                ));
            }
            frames.push(event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
            index += 1;
        }
        frames.push(event(
            "message_delta",
            json!({"type": "message_delta",
                   "delta": {"stop_reason": self.anthropic_stop_reason(), "stop_sequence": null},
                   "usage": {"output_tokens": output}}),
        ));
        frames.push(event("message_stop", json!({"type": "message_stop"})));
        frames
    }

    fn anthropic_body(&self) -> Value {
        let mut content = Vec::new();
        if !self.chunks.is_empty() {
            content.push(json!({"type": "text", "text": self.text()}));
        }
        for call in &self.calls {
            content.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}));
        }
        let (input, output) = self.usage;
        json!({
            "id": "msg_mock", "type": "message", "role": "assistant", "model": self.model, "content": content,
            "stop_reason": self.anthropic_stop_reason(), "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": output},
        })
    }

    fn gemini_call(call: &ToolCall) -> Value {
        let mut function_call = json!({"name": call.name, "args": call.arguments});
        if !call.id.is_empty() {
            function_call["id"] = json!(call.id);
        }
        json!({"functionCall": function_call})
    }

    fn gemini_usage(&self) -> Value {
        let (input, output) = self.usage;
        json!({"promptTokenCount": input, "candidatesTokenCount": output, "totalTokenCount": input + output})
    }

    fn gemini_frames(&self) -> Vec<String> {
        let frame = |parts: Vec<Value>, last: bool| {
            let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
            let mut chunk = json!({"modelVersion": self.model});
            if last {
                candidate["finishReason"] = json!("STOP");
                chunk["usageMetadata"] = self.gemini_usage();
            }
            chunk["candidates"] = json!([candidate]);
            // Gemini ends its lines with CRLF.
            format!("data: {chunk}\r\n\r\n")
        };
        let mut parts: Vec<Vec<Value>> = self.chunks.iter().map(|text| vec![json!({"text": text})]).collect();
        if !self.calls.is_empty() {
            parts.push(self.calls.iter().map(Answer::gemini_call).collect());
        }
        if parts.is_empty() {
            parts.push(Vec::new());
        }
        let count = parts.len();
        parts.into_iter().enumerate().map(|(n, parts)| frame(parts, n + 1 == count)).collect()
    }

    fn gemini_body(&self) -> Value {
        let mut parts = Vec::new();
        if !self.chunks.is_empty() {
            parts.push(json!({"text": self.text()}));
        }
        parts.extend(self.calls.iter().map(Answer::gemini_call));
        json!({
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": self.gemini_usage(),
            "modelVersion": self.model,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    async fn ask(server: &MockServer, text: &str) -> Value {
        let body = json!({"model": "m", "messages": [{"role": "user", "content": text}], "stream": false});
        let response =
            reqwest::Client::new().post(format!("{}/v1/chat/completions", server.url())).body(body.to_string()).send();
        let bytes = response.await.unwrap().bytes().await.unwrap();
        serde_json::from_slice::<Value>(&bytes).unwrap()["choices"][0]["message"]["content"].clone()
    }

    #[tokio::test]
    async fn pushed_replies_come_first_then_the_responder_answers_from_the_request() {
        let server = MockServer::start().await;
        server.push(MockReply::text("pushed"));
        server.respond_with(|request| MockReply::text(format!("echo {}", request.body["messages"][0]["content"])));
        assert_eq!(ask(&server, "one").await, "pushed");
        assert_eq!(ask(&server, "two").await, "echo \"two\"");
        assert_eq!(ask(&server, "three").await, "echo \"three\"");
        assert_eq!(server.requests().len(), 3);
    }
}
