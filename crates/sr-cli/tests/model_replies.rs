//! A hostile model server's replies: `sr run` stops reading a reply over its
//! limits, fails the call with an error naming the limit, and its memory stays
//! bounded (measured with GNU time, as `hostile.rs` does).
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;
use sr_llm::mock::{MockReply, MockServer};

/// Peak memory allowed; before the limits, the 8 MiB reply took 740 MiB and
/// the tool calls 1.4 GiB.
const PEAK_BOUND_KIB: u64 = 300 << 10;

const WORKLOAD: &str = "model main = openai/gpt-4o-mini\ntool fs = builtin streetrace.fs\n\
                        prompt helper: \"\"\"You write files.\"\"\"\nagent:\n    instruction helper\n    tools fs\n";

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-model-replies-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One OpenAI stream frame with this delta.
fn frame(delta: serde_json::Value) -> String {
    format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": delta}]}))
}

/// Runs the workload against `server` under GNU time: exit code, stderr and
/// the peak in KiB, or `None` without GNU time.
fn run_measured(name: &str, server: &MockServer) -> Option<(Option<i32>, String, u64)> {
    let dir = temp(name);
    std::fs::write(dir.join("w.sr"), WORKLOAD).unwrap();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "peak %M KiB", env!("CARGO_BIN_EXE_sr"), "run", "w.sr", "--prompt", "write"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .env("OPENAI_API_KEY", "test-key-1234")
        .env("STREETRACE_STATE_DIR", dir.join("state"))
        .output();
    let Ok(out) = out else {
        sr_testing::required(false, "GNU time (/usr/bin/time)");
        return None;
    };
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let peak = stderr.lines().find_map(|l| l.strip_prefix("peak ")?.strip_suffix(" KiB")?.parse().ok()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Some((out.status.code(), stderr, peak))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_8_mib_text_reply_fails_at_the_limit_in_bounded_memory() {
    let server = MockServer::start().await;
    // 8 MiB of text in deltas of 16 bytes, as a model streams tokens.
    let delta = frame(json!({"content": "x".repeat(16)}));
    let mut body = String::with_capacity(delta.len() * (512 << 10) + 200);
    for _ in 0..512 << 10 {
        body.push_str(&delta);
    }
    body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    server.push(MockReply::raw(200, "text/event-stream", body));
    let Some((code, stderr, peak)) = run_measured("text", &server) else { return };
    eprintln!("peak memory with an 8 MiB reply: {} MiB", peak >> 10);
    assert_eq!(code, Some(1), "{}", &stderr[stderr.len().saturating_sub(2000)..]);
    assert!(stderr.contains("the reply has more than 4 MiB of text, the limit for one model reply"), "{stderr:.2000}");
    assert_eq!(server.requests().len(), 1, "the failed reply is not asked for again");
    assert!(peak < PEAK_BOUND_KIB, "peak {} MiB", peak >> 10);
}

#[tokio::test(flavor = "multi_thread")]
async fn thirty_tool_calls_of_4_mib_fail_at_the_limit_in_bounded_memory() {
    let server = MockServer::start().await;
    // Each call just under the 4 MiB limit of one call, in fragments of 64 KiB.
    let fragment = frame(json!({"tool_calls": [{"index": 0, "function": {"arguments": "y".repeat(64 << 10)}}]}));
    let mut body = String::new();
    for n in 0..30 {
        let head = format!(r#"{{"path": "f{n}.txt", "content": ""#);
        body.push_str(&frame(json!({"tool_calls": [{"index": n, "id": format!("c{n}"), "type": "function",
            "function": {"name": "write_file", "arguments": head}}]})));
        for _ in 0..(3900 << 10) / (64 << 10) {
            body.push_str(&fragment.replace("\"index\":0", &format!("\"index\":{n}")));
        }
        body.push_str(&frame(json!({"tool_calls": [{"index": n, "function": {"arguments": "\"}"}}]})));
    }
    body.push_str(
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
    );
    server.push(MockReply::raw(200, "text/event-stream", body));
    let Some((code, stderr, peak)) = run_measured("tools", &server) else { return };
    eprintln!("peak memory with 30 tool calls of 3.9 MiB: {} MiB", peak >> 10);
    assert_eq!(code, Some(1), "{}", &stderr[stderr.len().saturating_sub(2000)..]);
    assert!(stderr.contains("tool calls have more than 16 MiB of arguments in all"), "{stderr:.2000}");
    assert_eq!(server.requests().len(), 1, "the failed reply is not asked for again");
    assert!(peak < PEAK_BOUND_KIB, "peak {} MiB", peak >> 10);
}
