#![allow(clippy::unwrap_used)]
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use sr_llm::mock::{MockReply, MockServer};
use sr_llm::{
    Cassette, ChatEvent, ChatRequest, LlmError, Message, Provider, Recorder, Replayer, ToolResult, cassette_entries,
};

use crate::{Waits, ask, drain, router};

fn cassette_path(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("sr-llm-{}-{name}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn lines(path: &PathBuf) -> Vec<Value> {
    cassette_entries(&std::fs::read_to_string(path).unwrap(), "llm").unwrap().into_iter().map(|(_, v)| v).collect()
}

/// The second turn of a tool conversation, answering `call_id`.
fn second_turn(first: &ChatRequest, reply: &sr_llm::ChatResponse, call_id: &str) -> ChatRequest {
    let mut messages = first.messages.clone();
    let mut assistant = reply.message();
    if let sr_llm::Part::ToolCall(call) = &mut assistant.content[0] {
        call_id.clone_into(&mut call.id);
    }
    messages.push(assistant);
    messages.push(Message::tool_results(vec![ToolResult {
        call_id: call_id.to_owned(),
        name: "read_file".into(),
        content: json!("contents of a"),
        is_error: false,
    }]));
    ChatRequest { messages, ..first.clone() }
}

#[tokio::test]
async fn a_recorded_conversation_replays_without_the_server() {
    let server = MockServer::start().await;
    server.push(MockReply::tool_call("call_1", "read_file", json!({"path": "a"})).usage(10, 5));
    server.push(MockReply::chunks(["It says ", "hello."]).usage(20, 4));
    let path = cassette_path("conversation");
    let cassette = Arc::new(Cassette::create(&path).unwrap());
    let waits = Arc::new(Waits::default());
    let recorder = Recorder::new(Arc::new(router(&server, &waits)), cassette.clone());

    let first = ask("openai/gpt-4o", "What is in a?");
    let first_events = drain(recorder.chat(first.clone())).await;
    let first_reply = sr_llm::ChatResponse::from_events(first_events.iter().cloned().map(Result::unwrap)).unwrap();
    // The runtime keeps its own entries in the same file.
    cassette.append(&json!({"kind": "tool", "call_id": "call_1", "result": "contents of a"})).unwrap();
    let second = second_turn(&first, &first_reply, "call_1");
    let second_events = drain(recorder.chat(second.clone())).await;
    assert_eq!(server.requests().len(), 2);

    let recorded = lines(&path);
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0]["request"]["model"], "openai/gpt-4o");
    assert_eq!(recorded[1]["request"]["messages"][1]["content"][0]["id"], "call_0", "ids are normalized");
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3);

    let replayer = Replayer::open(&path).unwrap();
    // Another order, and the provider's made-up id differs this time.
    let second_again = second_turn(&first, &first_reply, "toolu_other");
    assert_eq!(drain(replayer.chat(second_again)).await, second_events);
    assert_eq!(drain(replayer.chat(first)).await, first_events);
    assert_eq!(replayer.remaining(), 0);
    assert_eq!(server.requests().len(), 2, "replay never reached the server");
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn errors_are_recorded_and_replayed() {
    let server = MockServer::start().await;
    server.push(MockReply::error(400, "context too long"));
    let path = cassette_path("error");
    let waits = Arc::new(Waits::default());
    let recorder = Recorder::new(Arc::new(router(&server, &waits)), Arc::new(Cassette::create(&path).unwrap()));
    let recorded = drain(recorder.chat(ask("anthropic/claude-sonnet-4-5", "Hi"))).await;
    let [Err(LlmError::Api { status: Some(400), .. })] = &recorded[..] else { panic!("{recorded:?}") };
    assert_eq!(lines(&path)[0]["error"]["kind"], "api");

    let replayer = Replayer::open(&path).unwrap();
    assert_eq!(drain(replayer.chat(ask("anthropic/claude-sonnet-4-5", "Hi"))).await, recorded);
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn a_dropped_stream_is_recorded_as_cancelled() {
    let server = MockServer::start().await;
    server.push(MockReply::chunks(["one", "two", "three"]).chunk_delay(Duration::from_millis(50)));
    let path = cassette_path("cancelled");
    let waits = Arc::new(Waits::default());
    let recorder = Recorder::new(Arc::new(router(&server, &waits)), Arc::new(Cassette::create(&path).unwrap()));
    let mut stream = recorder.chat(ask("openai/gpt-4o", "Count"));
    assert_eq!(stream.next().await.unwrap().unwrap(), ChatEvent::TextDelta("one".into()));
    drop(stream);
    let [line] = &lines(&path)[..] else { panic!("one line expected") };
    assert_eq!(line["cancelled"], true);
    assert_eq!(line["events"], json!([{"type": "text_delta", "data": "one"}]));
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn an_unrecorded_request_shows_the_nearest_one() {
    let server = MockServer::start().await;
    server.push(MockReply::text("Paris"));
    let path = cassette_path("miss");
    let waits = Arc::new(Waits::default());
    let recorder = Recorder::new(Arc::new(router(&server, &waits)), Arc::new(Cassette::create(&path).unwrap()));
    drain(recorder.chat(ask("openai/gpt-4o", "Capital of France?"))).await;

    let replayer = Replayer::open(&path).unwrap();
    let events = drain(replayer.chat(ask("openai/gpt-4o", "Capital of Spain?"))).await;
    let [Err(LlmError::NotRecorded { message })] = &events[..] else { panic!("{events:?}") };
    assert!(message.contains("nearest recorded request (line 1)"), "{message}");
    assert!(
        message.contains(r#"/messages/0/content/0/text: recorded "Capital of France?", requested "Capital of Spain?""#),
        "{message}"
    );
    let _ = std::fs::remove_file(&path);
}
