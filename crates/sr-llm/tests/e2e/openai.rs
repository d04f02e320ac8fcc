use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use sr_llm::mock::{MockReply, MockServer};
use sr_llm::{ChatEvent, ChatRequest, FinishReason, LlmError, OpenAi, Provider, ToolCall, ToolSpec, Usage};

use crate::{Waits, ask, drain, endpoint, failure, http, reply};

fn openai(server: &MockServer, stream: bool) -> OpenAi {
    let waits = Arc::new(Waits::default());
    OpenAi::new(endpoint("openai", format!("{}/v1", server.url()), stream), http(&waits))
}

#[tokio::test]
async fn a_streamed_answer_arrives_as_deltas_with_usage() {
    let server = MockServer::start().await;
    server.push(MockReply::chunks(["Hel", "lo"]).usage(12, 3));
    let events = drain(openai(&server, true).chat(ask("gpt-4o", "Hi"))).await;
    assert_eq!(
        events,
        vec![
            Ok(ChatEvent::TextDelta("Hel".into())),
            Ok(ChatEvent::TextDelta("lo".into())),
            Ok(ChatEvent::Usage(Usage { input_tokens: 12, output_tokens: 3, ..Usage::default() })),
            Ok(ChatEvent::Finished { reason: FinishReason::Stop }),
        ]
    );

    let [request] = &server.requests()[..] else { panic!("one request expected") };
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(request.header("authorization"), Some("Bearer mock-key"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.body,
        json!({
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": "Hi"}],
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn deltas_reach_the_consumer_before_the_reply_ends() {
    let server = MockServer::start().await;
    server.push(MockReply::chunks(["first", "second"]).chunk_delay(Duration::from_millis(300)));
    let mut stream = openai(&server, true).chat(ask("gpt-4o", "Hi"));
    let first = tokio::time::timeout(Duration::from_secs(5), stream.next()).await.unwrap();
    assert_eq!(first.unwrap().unwrap(), ChatEvent::TextDelta("first".into()));
    // Six frames in all (role, two deltas, finish, usage, [DONE]): the first
    // delta came before the server wrote the rest.
    assert!(server.frames_sent() < 6, "{} frames sent", server.frames_sent());
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_request() {
    let server = MockServer::start().await;
    let chunks: Vec<String> = (0..20).map(|n| format!("{n} ")).collect();
    server.push(MockReply::chunks(chunks).chunk_delay(Duration::from_millis(50)));
    let mut stream = openai(&server, true).chat(ask("gpt-4o", "Count"));
    while let Some(event) = stream.next().await {
        if event.unwrap() == ChatEvent::TextDelta("1 ".into()) {
            break;
        }
    }
    drop(stream);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = server.frames_sent();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.frames_sent(), sent, "the server stopped writing");
    assert!(sent < 20, "{sent} of 24 frames sent");
}

#[tokio::test]
async fn a_whole_reply_is_read_when_not_streaming() {
    let server = MockServer::start().await;
    server.push(MockReply::text("Hello there").usage(5, 2));
    let response = reply(openai(&server, false).chat(ask("gpt-4o", "Hi"))).await;
    assert_eq!(response.text, "Hello there");
    assert_eq!(response.usage, Usage { input_tokens: 5, output_tokens: 2, ..Usage::default() });
    assert_eq!(response.finish_reason, FinishReason::Stop);
    let request = &server.requests()[0];
    assert_eq!(request.body["stream"], false);
    assert!(request.body.get("stream_options").is_none());
}

#[tokio::test]
async fn tool_calls_are_assembled_streaming_or_not() {
    for stream in [true, false] {
        let server = MockServer::start().await;
        server.push(
            MockReply::text("Reading both.")
                .with_tool_call("call_a", "read_file", json!({"path": "a.txt", "lines": [1, 2]}))
                .with_tool_call("call_b", "list_directory", json!({"path": "."}))
                .usage(30, 20),
        );
        let request = ChatRequest {
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "Reads a file".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            }],
            ..ask("gpt-4o", "Read a.txt and list")
        };
        let response = reply(openai(&server, stream).chat(request)).await;
        assert_eq!(response.text, "Reading both.");
        assert_eq!(
            response.tool_calls,
            vec![
                ToolCall::new("call_a", "read_file", json!({"path": "a.txt", "lines": [1, 2]})),
                ToolCall::new("call_b", "list_directory", json!({"path": "."})),
            ],
            "stream: {stream}"
        );
        assert_eq!(response.finish_reason, FinishReason::ToolCalls);
        assert_eq!(response.usage.output_tokens, 20);
        assert_eq!(server.requests()[0].body["tools"][0]["function"]["name"], "read_file");
    }
}

#[tokio::test]
async fn a_json_reply_to_a_streamed_request_is_understood() {
    let server = MockServer::start().await;
    let body = json!({"choices": [{"message": {"content": "plain"}, "finish_reason": "stop"}]});
    server.push(MockReply::raw(200, "application/json", body.to_string()));
    let response = reply(openai(&server, true).chat(ask("m", "Hi"))).await;
    assert_eq!(response.text, "plain");
    assert_eq!(response.usage, Usage::default());
}

#[tokio::test]
async fn broken_tool_arguments_are_kept_and_reported() {
    let server = MockServer::start().await;
    let stream = concat!(
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\": \"}}]}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    server.push(MockReply::raw(200, "text/event-stream", stream));
    let response = reply(openai(&server, true).chat(ask("m", "Hi"))).await;
    let [call] = &response.tool_calls[..] else { panic!("{response:?}") };
    assert_eq!(call.arguments, json!("{\"a\": "));
    assert!(call.arguments_error.as_deref().unwrap().contains("not valid JSON"));
}

#[tokio::test]
async fn a_malformed_event_is_an_error_after_the_good_ones() {
    let server = MockServer::start().await;
    let stream = "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\ndata: {not json\n\ndata: [DONE]\n\n";
    server.push(MockReply::raw(200, "text/event-stream", stream));
    let events = drain(openai(&server, true).chat(ask("m", "Hi"))).await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0], Ok(ChatEvent::TextDelta("ok".into())));
    let Err(LlmError::Protocol { message, .. }) = &events[1] else { panic!("{events:?}") };
    assert!(message.contains("malformed event data"), "{message}");
}

#[tokio::test]
async fn an_error_inside_a_200_stream_is_reported() {
    let server = MockServer::start().await;
    let stream = "data: {\"error\":{\"message\":\"model crashed\",\"type\":\"invalid_request\"}}\n\n";
    server.push(MockReply::raw(200, "text/event-stream", stream));
    let err = failure(openai(&server, true).chat(ask("m", "Hi"))).await;
    assert_eq!(
        err,
        LlmError::Api {
            provider: "openai".into(),
            status: None,
            code: Some("invalid_request".into()),
            message: "model crashed".into(),
            retry_after_ms: None,
        }
    );
}

#[tokio::test]
async fn a_client_error_is_returned_without_retrying() {
    let server = MockServer::start().await;
    server.push(MockReply::error(400, "Unknown parameter: 'foo'"));
    let err = failure(openai(&server, true).chat(ask("m", "Hi"))).await;
    assert_eq!(err.to_string(), "openai: HTTP 400: mock_error: Unknown parameter: 'foo'");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_cut_mid_reply_is_a_retryable_transport_error() {
    let server = MockServer::start().await;
    // A server that closes without `[DONE]` or a finish reason, after text reached the caller.
    server.push(MockReply::raw(200, "text/event-stream", "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}"));
    let err = failure(openai(&server, true).chat(ask("m", "Hi"))).await;
    assert!(matches!(err, LlmError::Transport { .. }) && err.is_retryable(), "{err:?}");
    assert!(err.to_string().contains("no finish reason, no [DONE]"), "{err}");

    // Cut before anything reached the caller (a tool call is only complete at the end):
    // retried, and the second reply is whole.
    let partial = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"pa\"}}]}}]}\n\n";
    server.push(MockReply::raw(200, "text/event-stream", partial));
    server.push(MockReply::text("whole"));
    let response = reply(openai(&server, true).chat(ask("m", "Hi"))).await;
    assert_eq!((response.text.as_str(), response.finish_reason), ("whole", FinishReason::Stop));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn an_event_stream_under_another_content_type_is_understood() {
    let server = MockServer::start().await;
    let stream =
        "data: {\"choices\":[{\"delta\":{\"content\":\"sniffed\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    server.push(MockReply::raw(200, "application/json", stream));
    let response = reply(openai(&server, true).chat(ask("m", "Hi"))).await;
    assert_eq!(response.text, "sniffed");
}

#[tokio::test]
async fn a_stream_without_events_is_an_error() {
    let server = MockServer::start().await;
    server.push(MockReply::raw(200, "text/event-stream", ": just a comment\n\n"));
    let err = failure(openai(&server, true).chat(ask("m", "Hi"))).await;
    assert!(err.to_string().contains("ended without any event"), "{err}");
}
