//! The scripted model: its answer depends only on the request (and, for
//! `FLAKY`, on whether the same request failed before in this run), so
//! parallel branches and resumed runs get the same answers as the
//! uninterrupted run, whatever the order of their requests.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sr_llm::mock::{MockReply, MockRequest, MockServer};

/// The requests marked `FLAKY` that have been answered with an error, per
/// logical run (the driver clears it before each).
pub type Failed = Arc<Mutex<HashSet<String>>>;

pub fn script(server: &MockServer) -> Failed {
    let failed: Failed = Arc::default();
    let seen = failed.clone();
    server.respond_with(move |request| answer(request, &seen));
    failed
}

fn answer(request: &MockRequest, failed: &Failed) -> MockReply {
    let messages = request.body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    if last["role"] == "tool" {
        return MockReply::text("done");
    }
    let text = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().map_or_else(|| m["content"].to_string(), str::to_owned))
        .unwrap_or_default();
    if let Some(path) = text.split_whitespace().skip_while(|w| *w != "WRITE").nth(1) {
        let content = format!("model wrote {path}");
        return MockReply::tool_call("call_1", "write_file", json!({"path": path, "content": content}));
    }
    if text.contains("FLAKY") && failed.lock().unwrap_or_else(|p| p.into_inner()).insert(text.clone()) {
        return MockReply::error(500, "scripted failure, retry");
    }
    MockReply::text(format!("reply {:016x}", fnv(&text)))
}

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}
