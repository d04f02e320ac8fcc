//! Requests must grow by appending: earlier turns keep their exact wire form,
//! or provider-side prompt caching misses on every turn.

use serde_json::{Value, json};

use crate::{ChatRequest, ChatResponse, FinishReason, Message, ToolCall, ToolResult, ToolSpec, Usage};

/// The requests of a tool loop: ask, call a tool, answer, ask again.
fn turns() -> Vec<ChatRequest> {
    let mut request = ChatRequest {
        system: Some("Be brief.".into()),
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Reads".into(),
            parameters: json!({"type": "object"}),
        }],
        ..ChatRequest::new("m", vec![Message::user("What is in a?")])
    };
    let mut turns = vec![request.clone()];
    let call = ToolCall::new("call_1", "read", json!({"path": "a"}));
    let called = ChatResponse {
        text: String::new(),
        tool_calls: vec![call],
        usage: Usage::default(),
        finish_reason: FinishReason::ToolCalls,
    };
    request.messages.push(called.message());
    request.messages.push(Message::tool_results(vec![ToolResult {
        call_id: "call_1".into(),
        name: "read".into(),
        content: json!("hello"),
        is_error: false,
    }]));
    turns.push(request.clone());
    request.messages.push(Message::assistant("It says hello."));
    request.messages.push(Message::user("And b?"));
    turns.push(request);
    turns
}

fn assert_grows_by_appending(bodies: Vec<Value>, list: &str) {
    for pair in bodies.windows(2) {
        let (before, after) = (pair[0][list].as_array().unwrap(), pair[1][list].as_array().unwrap());
        assert!(after.len() > before.len());
        assert_eq!(&after[..before.len()], &before[..], "{list} changed between turns");
        let mut rest = pair[1].clone();
        rest[list] = Value::Null;
        let mut earlier = pair[0].clone();
        earlier[list] = Value::Null;
        assert_eq!(rest.to_string(), earlier.to_string(), "the rest of the body changed between turns");
    }
}

#[test]
fn openai_requests_grow_by_appending() {
    assert_grows_by_appending(turns().iter().map(|r| crate::openai::request_body(r, true)).collect(), "messages");
}

#[test]
fn anthropic_requests_grow_by_appending() {
    assert_grows_by_appending(turns().iter().map(|r| crate::anthropic::request_body(r, true)).collect(), "messages");
}

#[test]
fn gemini_requests_grow_by_appending() {
    assert_grows_by_appending(turns().iter().map(crate::gemini::request_body).collect(), "contents");
}
