use std::sync::Arc;

use serde_json::json;
use sr_llm::mock::{MockReply, MockServer};
use sr_llm::{
    ChatEvent, ChatRequest, FinishReason, Gemini, LlmError, Message, Part, Provider, Role, ToolCall, ToolResult, Usage,
};

use crate::{Waits, ask, drain, endpoint, failure, http, reply};

fn gemini(server: &MockServer, stream: bool) -> Gemini {
    let waits = Arc::new(Waits::default());
    Gemini::new(endpoint("gemini", server.url(), stream), http(&waits))
}

#[tokio::test]
async fn a_streamed_answer_with_function_calls() {
    let server = MockServer::start().await;
    server.push(
        MockReply::chunks(["Checking", " now."])
            .with_tool_call("", "read_file", json!({"path": "a.txt"}))
            .with_tool_call("fc_2", "list_directory", json!({}))
            .usage(21, 9),
    );
    let events = drain(gemini(&server, true).chat(ask("gemini-2.5-flash", "Read a.txt"))).await;
    assert_eq!(
        events,
        vec![
            Ok(ChatEvent::TextDelta("Checking".into())),
            Ok(ChatEvent::TextDelta(" now.".into())),
            Ok(ChatEvent::ToolCall(ToolCall::new("sr_call_0", "read_file", json!({"path": "a.txt"})))),
            Ok(ChatEvent::ToolCall(ToolCall::new("fc_2", "list_directory", json!({})))),
            Ok(ChatEvent::Usage(Usage { input_tokens: 21, output_tokens: 9, ..Usage::default() })),
            Ok(ChatEvent::Finished { reason: FinishReason::ToolCalls }),
        ]
    );
    let [request] = &server.requests()[..] else { panic!("one request expected") };
    assert_eq!(request.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    assert_eq!(request.header("x-goog-api-key"), Some("mock-key"));
    assert_eq!(request.body, json!({"contents": [{"role": "user", "parts": [{"text": "Read a.txt"}]}]}));
}

#[tokio::test]
async fn a_whole_reply_from_generate_content() {
    let server = MockServer::start().await;
    server.push(MockReply::text("Fine.").usage(4, 2));
    let response = reply(gemini(&server, false).chat(ask("models/gemini-2.5-pro", "How are you?"))).await;
    assert_eq!(response.text, "Fine.");
    assert_eq!(response.finish_reason, FinishReason::Stop);
    assert_eq!(response.usage.input_tokens, 4);
    assert_eq!(server.requests()[0].path, "/v1beta/models/gemini-2.5-pro:generateContent");
}

#[tokio::test]
async fn made_up_ids_are_not_sent_back() {
    let server = MockServer::start().await;
    server.push(MockReply::text("Done."));
    let call = ToolCall::new("sr_call_0", "read_file", json!({"path": "a.txt"}));
    let request = ChatRequest::new(
        "gemini-2.5-flash",
        vec![
            Message::user("Read a.txt"),
            Message { role: Role::Assistant, content: vec![Part::ToolCall(call)] },
            Message::tool_results(vec![ToolResult {
                call_id: "sr_call_0".into(),
                name: "read_file".into(),
                content: json!("no such file"),
                is_error: true,
            }]),
        ],
    );
    reply(gemini(&server, true).chat(request)).await;
    assert_eq!(
        server.requests()[0].body["contents"],
        json!([
            {"role": "user", "parts": [{"text": "Read a.txt"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "read_file", "response": {"error": "no such file"}}}
            ]},
        ])
    );
}

#[tokio::test]
async fn errors_carry_the_status_name() {
    let server = MockServer::start().await;
    server.push(MockReply::error(400, "API key not valid"));
    let err = failure(gemini(&server, true).chat(ask("gemini-2.5-flash", "Hi"))).await;
    let LlmError::Api { status: Some(400), code: Some(code), .. } = &err else { panic!("{err:?}") };
    assert_eq!(code, "INVALID_ARGUMENT");
}
