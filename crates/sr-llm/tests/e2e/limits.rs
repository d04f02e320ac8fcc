//! A reply over a limit fails as soon as it passes it, in every protocol,
//! streamed or not, and is not retried.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sr_llm::mock::{MockReply, MockServer};
use sr_llm::{ChatEvent, LlmError, MAX_REPLY_BODY, MAX_REPLY_TEXT, MAX_REPLY_TOOL_CALLS, Provider, Router, ToolCall};

use crate::{Waits, ask, drain, http, reply};

const MODELS: [&str; 3] = ["openai/gpt-4o", "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash"];

fn router(server: &MockServer, stream: bool) -> Router {
    Router::from_vars(http(&Arc::new(Waits::default())), server.vars()).stream(stream)
}

/// The error the items end with, after checking that nothing but text came before it.
fn failed_after_text(items: &[Result<ChatEvent, LlmError>]) -> (usize, &LlmError) {
    let (last, before) = items.split_last().expect("some items");
    let text = before
        .iter()
        .map(|item| match item {
            Ok(ChatEvent::TextDelta(text)) => text.len(),
            other => panic!("{other:?} before the error"),
        })
        .sum();
    (text, last.as_ref().expect_err("the reply fails"))
}

#[tokio::test]
async fn text_past_the_limit_fails_the_reply_in_every_protocol() {
    for stream in [true, false] {
        for model in MODELS {
            let server = MockServer::start().await;
            server.push(MockReply::chunks(vec!["x".repeat(64 << 10); 2 * MAX_REPLY_TEXT / (64 << 10)]));
            let items = drain(router(&server, stream).chat(ask(model, "Talk"))).await;
            let (text, err) = failed_after_text(&items);
            assert!(text <= MAX_REPLY_TEXT, "{model}: {text} bytes of text delivered");
            let LlmError::Protocol { message, .. } = err else { panic!("{model}: {err:?}") };
            assert!(message.contains("more than 4 MiB of text, the limit for one model reply"), "{model}: {message}");
            assert_eq!(server.requests().len(), 1, "{model} (stream {stream}): not retried");
        }
    }
}

#[tokio::test]
async fn a_stream_past_the_limit_is_not_read_further() {
    let server = MockServer::start().await;
    let frames = 1024;
    server.push(MockReply::chunks(vec!["x".repeat(64 << 10); frames]));
    let items = drain(router(&server, true).chat(ask("openai/gpt-4o", "Talk"))).await;
    assert!(matches!(items.last(), Some(Err(LlmError::Protocol { .. }))), "{:?}", items.last());
    // The server writes until the client closes; what the sockets buffered is all it got out.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = server.frames_sent();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.frames_sent(), sent, "the server stopped writing");
    assert!(sent < frames / 2, "{sent} of {frames} frames of 64 KiB sent");
}

#[tokio::test]
async fn text_right_at_the_limit_is_whole() {
    for stream in [true, false] {
        for model in MODELS {
            let server = MockServer::start().await;
            server.push(MockReply::chunks(vec!["é".repeat(32 << 10); MAX_REPLY_TEXT / (64 << 10)]));
            let response = reply(router(&server, stream).chat(ask(model, "Talk"))).await;
            assert_eq!(response.text.len(), MAX_REPLY_TEXT, "{model}");
        }
    }
}

/// An answer calling `count` tools with `size` bytes of arguments each.
fn calls(count: usize, size: usize) -> MockReply {
    (0..count).fold(MockReply::chunks(Vec::<String>::new()), |reply, n| {
        reply.with_tool_call(&format!("c{n}"), "write_file", json!({"content": "y".repeat(size)}))
    })
}

#[tokio::test]
async fn tool_calls_past_the_limits_fail_the_reply_in_every_protocol() {
    let big = 3900 << 10;
    for model in MODELS {
        // Gemini streams all calls in one event, which the event-stream limit
        // already refuses; not streamed, its calls meet the reply's limit.
        let stream = model != MODELS[2];
        let server = MockServer::start().await;
        server.push(calls(5, big));
        let err = drain(router(&server, stream).chat(ask(model, "Write"))).await.pop().unwrap().unwrap_err();
        assert!(
            err.to_string().contains("tool calls have more than 16 MiB of arguments in all"),
            "{model} (stream {stream}): {err}"
        );
        assert_eq!(server.requests().len(), 1);
        let server = MockServer::start().await;
        server.push(calls(MAX_REPLY_TOOL_CALLS + 1, 0));
        let err = drain(router(&server, true).chat(ask(model, "Write"))).await.pop().unwrap().unwrap_err();
        assert!(err.to_string().contains("more than 1024 tool calls"), "{model}: {err}");
    }
}

#[tokio::test]
async fn tool_calls_within_the_limits_are_whole() {
    let server = MockServer::start().await;
    server.push(calls(4, 3900 << 10));
    server.push(calls(MAX_REPLY_TOOL_CALLS, 0));
    let router = router(&server, true);
    let response = reply(router.chat(ask("anthropic/claude-sonnet-4-5", "Write"))).await;
    assert_eq!(response.tool_calls.len(), 4);
    assert!(response.tool_calls.iter().all(|call| call.arguments_error.is_none()));
    let response = reply(router.chat(ask("openai/gpt-4o", "Write"))).await;
    assert_eq!(response.tool_calls.len(), MAX_REPLY_TOOL_CALLS);
    assert_eq!(response.tool_calls[7], ToolCall::new("c7", "write_file", json!({"content": ""})));
}

#[tokio::test]
async fn a_whole_body_past_its_limit_is_refused_unread() {
    let server = MockServer::start().await;
    let body = format!(r#"{{"choices": [{{"message": {{"content": "{}"}}}}]}}"#, "x".repeat(MAX_REPLY_BODY));
    server.push(MockReply::raw(200, "application/json", body));
    let err = drain(router(&server, false).chat(ask("openai/gpt-4o", "Talk"))).await.pop().unwrap().unwrap_err();
    assert!(err.to_string().contains("longer than 32 MiB, the limit for a model reply that is not streamed"), "{err}");
    // An error body of any size is read only as far as its message is shown.
    server.push(MockReply::raw(400, "text/plain", "e".repeat(MAX_REPLY_BODY * 2)));
    let err = drain(router(&server, false).chat(ask("openai/gpt-4o", "Talk"))).await.pop().unwrap().unwrap_err();
    let LlmError::Api { status: Some(400), message, .. } = &err else { panic!("{err:?}") };
    assert!(message.starts_with("eeee") && message.len() < 1000, "{} bytes", message.len());
}
