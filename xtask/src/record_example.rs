//! `cargo xtask record-example`: (re)makes the recordings of the examples:
//! the one the README's first command replays, and the structured workflow's.
//! The model is sr-llm's local mock server with scripted replies, so the
//! recordings are reproducible and need no API key; file tools run for real
//! on `examples/review` and on a copy of `examples/structured-workflow` (whose
//! runs write files and need bubblewrap for their sandboxed steps).

use std::process::Command;

use serde_json::json;
use sr_llm::mock::{MockReply, MockServer};

use crate::root;

pub fn run(_args: &[String]) -> Result<(), String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let server = MockServer::start().await;
        server.push(MockReply::tool_call("call_read", "read_file", json!({"path": "src/calc.py"})).usage(412, 18));
        let findings = json!([
            {"file": "src/calc.py", "line": 5, "severity": "high",
             "message": "average() divides by len(values) and fails with ZeroDivisionError on an empty list."},
            {"file": "src/calc.py", "line": 9, "severity": "medium",
             "message": "percent() divides by whole without checking for zero."},
            {"file": "src/calc.py", "line": 13, "severity": "low",
             "message": "parse_ratio() raises ValueError on malformed input instead of a clear error."}
        ]);
        server.push(MockReply::chunks(["```json\n", &serde_json::to_string_pretty(&findings).unwrap(), "\n```"]).usage(655, 140));
        server.push(
            MockReply::chunks([
                "The review found three problems in src/calc.py, one of them serious: ",
                "average() crashes on an empty list. ",
                "Guard the divisions in average() and percent(), and give parse_ratio() a clear error for malformed input.",
            ])
            .usage(310, 48),
        );
        let example = root().join("examples/review");
        let cassette = example.join("review.cassette.jsonl");
        let _ = std::fs::remove_file(&cassette);
        let sessions = std::env::temp_dir().join(format!("sr-record-{}.db", std::process::id()));
        // The events of the recorded run: replaying must reproduce them exactly.
        let events = std::fs::File::create(example.join("review.events.jsonl")).map_err(|e| e.to_string())?;
        let status = Command::new(env!("CARGO"))
            .args(["run", "-q", "-p", "sr-cli", "--", "run", "examples/review/review.sr", "--events", "jsonl"])
            .arg("--record")
            .arg(&cassette)
            .arg("--work-dir")
            .arg(&example)
            .arg("--sessions")
            .arg(&sessions)
            .args(["--prompt", "Review src/calc.py"])
            .current_dir(root())
            .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
            .env("OPENAI_API_KEY", "recording-key")
            .stdout(events)
            .status()
            .map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&sessions);
        if !status.success() {
            return Err(format!("the recorded run failed ({status})"));
        }
        if server.remaining() != 0 {
            return Err(format!("{} scripted replies were not used", server.remaining()));
        }
        println!("recorded {}", cassette.display());
        record_workflow().await
    })
}

/// The structured workflow's cassette, made by running the workflow on a
/// scratch copy of its directory with the replies of `model-script.json`. It
/// lives where `sr eval --replay-from cassettes` reads it (which refuses a
/// symlink out of that directory); `workflow.cassette.jsonl`, which
/// `sr run --replay` is shown, links to it.
async fn record_workflow() -> Result<(), String> {
    let example = root().join("examples/structured-workflow");
    let script = std::fs::read_to_string(example.join("model-script.json")).map_err(|e| e.to_string())?;
    let server = MockServer::start().await;
    for reply in MockReply::script(&script)? {
        server.push(reply);
    }
    let copy = std::env::temp_dir().join(format!("sr-record-workflow-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&copy);
    let status = Command::new("cp").arg("-r").arg(&example).arg(&copy).status().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("cannot copy {}", example.display()));
    }
    let cassette = example.join("cassettes/word_frequencies/workflow/default.jsonl");
    let _ = std::fs::remove_file(&cassette);
    // Outside the work directory, which file tools must be able to reach.
    let sessions = std::env::temp_dir().join(format!("sr-record-workflow-{}.db", std::process::id()));
    let status = Command::new(env!("CARGO"))
        .args(["run", "-q", "-p", "sr-cli", "--", "run", "examples/structured-workflow/workflow.sr"])
        .arg("--record")
        .arg(&cassette)
        .arg("--work-dir")
        .arg(&copy)
        .arg("--sessions")
        .arg(&sessions)
        .args(["--prompt", "word_frequencies"])
        .current_dir(root())
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .env("OPENAI_API_KEY", "recording-key")
        .status()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&copy);
    let _ = std::fs::remove_file(&sessions);
    if !status.success() {
        return Err(format!("the recorded workflow run failed ({status})"));
    }
    if server.remaining() != 0 {
        return Err(format!("{} scripted replies of the workflow were not used", server.remaining()));
    }
    println!("recorded {}", cassette.display());
    Ok(())
}
