use std::sync::Arc;

use serde_json::json;
use sr_llm::mock::{MockReply, MockServer};
use sr_llm::{Anthropic, ChatEvent, ChatRequest, FinishReason, LlmError, Provider, ToolCall, Usage};

use crate::{Waits, ask, drain, endpoint, failure, http, reply};

fn anthropic(server: &MockServer, stream: bool, waits: &Arc<Waits>) -> Anthropic {
    Anthropic::new(endpoint("anthropic", server.url(), stream), http(waits))
}

#[tokio::test]
async fn a_streamed_answer_with_a_tool_use() {
    let server = MockServer::start().await;
    server.push(
        MockReply::chunks(["Let me ", "read it."])
            .with_tool_call("toolu_1", "read_file", json!({"path": "a.txt"}))
            .usage(40, 12),
    );
    let request = ChatRequest { system: Some("You are terse.".into()), ..ask("claude-sonnet-4-5", "Read a.txt") };
    let waits = Arc::new(Waits::default());
    let events = drain(anthropic(&server, true, &waits).chat(request)).await;
    assert_eq!(
        events,
        vec![
            Ok(ChatEvent::TextDelta("Let me ".into())),
            Ok(ChatEvent::TextDelta("read it.".into())),
            Ok(ChatEvent::ToolCall(ToolCall::new("toolu_1", "read_file", json!({"path": "a.txt"})))),
            Ok(ChatEvent::Usage(Usage { input_tokens: 40, output_tokens: 12, ..Usage::default() })),
            Ok(ChatEvent::Finished { reason: FinishReason::ToolCalls }),
        ]
    );
    let [request] = &server.requests()[..] else { panic!("one request expected") };
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("mock-key"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(
        request.body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "system": "You are terse.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Read a.txt"}]}],
            "stream": true,
        })
    );
}

#[tokio::test]
async fn a_whole_message_when_not_streaming() {
    let server = MockServer::start().await;
    server.push(MockReply::text("Hi!").with_tool_call("toolu_2", "list", json!({})).usage(7, 3));
    let waits = Arc::new(Waits::default());
    let response = reply(anthropic(&server, false, &waits).chat(ask("claude-haiku-4-5", "Hi"))).await;
    assert_eq!(response.text, "Hi!");
    assert_eq!(response.tool_calls, vec![ToolCall::new("toolu_2", "list", json!({}))]);
    assert_eq!(response.usage, Usage { input_tokens: 7, output_tokens: 3, ..Usage::default() });
    assert_eq!(server.requests()[0].body["stream"], false);
}

#[tokio::test]
async fn an_overload_inside_a_200_stream_is_retried_before_output() {
    let server = MockServer::start().await;
    let overloaded = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
    );
    server.push(MockReply::raw(200, "text/event-stream", overloaded));
    server.push(MockReply::text("Recovered").usage(5, 1));
    let waits = Arc::new(Waits::default());
    let response = reply(anthropic(&server, true, &waits).chat(ask("claude-sonnet-4-5", "Hi"))).await;
    assert_eq!(response.text, "Recovered");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(waits.taken().len(), 1, "one backoff");
}

#[tokio::test]
async fn an_overload_after_output_is_reported_not_retried() {
    let server = MockServer::start().await;
    let stream = concat!(
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Par\"}}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
    );
    server.push(MockReply::raw(200, "text/event-stream", stream));
    server.push(MockReply::text("never served"));
    let waits = Arc::new(Waits::default());
    let events = drain(anthropic(&server, true, &waits).chat(ask("claude-sonnet-4-5", "Hi"))).await;
    assert_eq!(events[0], Ok(ChatEvent::TextDelta("Par".into())));
    let Err(err) = &events[1] else { panic!("{events:?}") };
    assert_eq!(err.to_string(), "anthropic: overloaded_error: Overloaded");
    assert!(err.is_retryable(), "the caller may retry the step itself");
    assert_eq!(server.remaining(), 1);
}

#[tokio::test]
async fn errors_carry_anthropics_error_type() {
    let server = MockServer::start().await;
    server.push(MockReply::error(401, "invalid x-api-key"));
    let waits = Arc::new(Waits::default());
    let err = failure(anthropic(&server, true, &waits).chat(ask("claude-sonnet-4-5", "Hi"))).await;
    let LlmError::Api { status: Some(401), code: Some(code), message, .. } = &err else { panic!("{err:?}") };
    assert_eq!((code.as_str(), message.as_str()), ("authentication_error", "invalid x-api-key"));
}
