//! `sr try`: one prompt or agent run with inputs against sr-llm's mock model,
//! recorded, replayed offline, refused with the missing inputs named, and
//! saved as an `sr eval` case that `sr eval` runs again.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::Command;

use expect_test::expect;
use serde_json::Value;
use sr_llm::mock::{MockReply, MockServer};

const WORKLOAD: &str = r#"model main = openai/gpt-4o-mini
tool fs = builtin streetrace.fs
prompt tone: """Be ${mood}."""
prompt ask: """${tone} Explain ${topic.name} in ${words} words."""
prompt helper: """You write files. ${tone}"""
agent writer:
    instruction helper
    tools fs
flow main:
    $topic = {name: "x"}
    $mood = "calm"
    $words = 3
    $r = call llm ask
    $w = run agent writer with $r
    return $w
"#;

const INPUTS: &str = "topic:\n  name: borrowing\nmood: brief\nwords: 5\n";

const PRICES: &str = r#"{"openai/gpt-4o-mini": {"input": 1.0, "output": 2.0}}"#;

/// `sr ARGS` in `dir` with the mock server as OpenAI.
fn sr_against(server: &MockServer, args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sr"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .env("OPENAI_API_KEY", "test-key-1234")
        .env("STREETRACE_STATE_DIR", dir.join("state"))
        .output()
        .unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// The user message of the mock's `n`-th request.
fn sent(server: &MockServer, n: usize) -> String {
    let body = server.requests()[n].body.clone();
    let messages = body["messages"].as_array().unwrap();
    messages.iter().map(|m| format!("{}: {}", m["role"].as_str().unwrap(), m["content"])).collect::<Vec<_>>().join("\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_runs_alone_with_its_inputs_then_replays_offline() {
    let dir =
        common::temp_dir("try-prompt", &[("w.sr", WORKLOAD), ("ask.inputs.yaml", INPUTS), ("prices.json", PRICES)]);
    let server = MockServer::start().await;
    server.push(MockReply::text("Borrowing lends without moving.").usage(12, 6));
    let args = ["try", "w.sr", "ask", "--record", "ask.jsonl", "--prices", "prices.json"];
    let (code, stdout, stderr) = sr_against(&server, &args, &dir);
    assert_eq!(code, 0, "{stderr}");
    // One model call, no flow: the prompt rendered with the sidecar's inputs.
    assert_eq!(server.requests().len(), 1);
    assert_eq!(sent(&server, 0), r#"user: "Be brief. Explain borrowing in 5 words.""#);
    // 12 input tokens at $1 and 6 output tokens at $2 a million.
    expect![[r#"
        ── prompt ask (openai/gpt-4o-mini) ──
        Be brief. Explain borrowing in 5 words.
        ── reply ──
        Borrowing lends without moving.
        ── 12 input + 6 output tokens, $0.000024 ──
    "#]]
    .assert_eq(&stdout);

    // The recording alone answers, as JSON for the editors; the same figures.
    let (code, replayed, stderr) = common::sr(
        &["try", "w.sr", "ask", "--replay", "ask.jsonl", "--prices", "prices.json", "--format", "json"],
        &dir,
    );
    assert_eq!(code, 0, "{stderr}");
    let replayed: Value = serde_json::from_str(&replayed).unwrap();
    assert_eq!(replayed["kind"], "prompt");
    assert_eq!(replayed["rendered"], "Be brief. Explain borrowing in 5 words.");
    assert_eq!(replayed["reply"], "Borrowing lends without moving.");
    assert_eq!(replayed["inputs"]["topic"]["name"], "borrowing");
    assert_eq!(replayed["usage"], serde_json::json!({"input_tokens": 12, "output_tokens": 6, "cost_usd": 0.000024}));

    // Other inputs ask the recording something else: refused, not answered.
    std::fs::write(dir.join("other.yaml"), INPUTS.replace("brief", "long")).unwrap();
    let (code, _, stderr) =
        common::sr(&["try", "w.sr", "ask", "--replay", "ask.jsonl", "--inputs", "other.yaml"], &dir);
    assert_eq!(code, 1, "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_inputs_are_named_at_the_interpolation_that_reads_them() {
    let dir = common::temp_dir("try-missing", &[("w.sr", WORKLOAD), ("some.yaml", "mood: calm\n")]);
    let (code, stdout, stderr) = common::sr(&["try", "w.sr", "ask", "--inputs", "some.yaml"], &dir);
    assert_eq!((code, stdout.as_str()), (2, ""));
    expect![[r#"
        w.sr:4:32: error: missing input 'topic' (read by prompt 'ask')
        w.sr:4:49: error: missing input 'words' (read by prompt 'ask')
        error: ask needs inputs: add them to some.yaml
    "#]]
    .assert_eq(&stderr);
    // Without a sidecar file every input is missing; a flow is not an item to try.
    let (_, _, stderr) = common::sr(&["try", "w.sr", "ask"], &dir);
    assert!(stderr.contains("w.sr:3:20: error: missing input 'mood' (read by prompt 'tone')"), "{stderr}");
    assert!(stderr.ends_with("error: ask needs inputs: add them to ask.inputs.yaml\n"), "{stderr}");
    // An agent's instruction reads its inputs too.
    let (code, _, stderr) = common::sr(&["try", "w.sr", "writer", "--prompt", "go"], &dir);
    assert_eq!(code, 2);
    assert!(stderr.starts_with("w.sr:3:20: error: missing input 'mood' (read by prompt 'tone')\n"), "{stderr}");
    let (code, _, stderr) = common::sr(&["try", "w.sr", "main"], &dir);
    assert_eq!(code, 2);
    assert!(stderr.contains("'main' is a flow"), "{stderr}");
    std::fs::write(dir.join("bad.yaml"), "- a\n").unwrap();
    let (code, _, stderr) = common::sr(&["try", "w.sr", "ask", "--inputs", "bad.yaml"], &dir);
    assert_eq!(code, 2);
    assert!(stderr.starts_with("error: bad.yaml:1:1: the inputs are a map"), "{stderr}");
    // A FIFO is refused at once, never waited on.
    assert!(Command::new("mkfifo").arg(dir.join("fifo.yaml")).status().unwrap().success());
    let (code, _, stderr) = common::sr(&["try", "w.sr", "ask", "--inputs", "fifo.yaml"], &dir);
    assert_eq!(code, 2);
    assert!(stderr.contains("fifo.yaml: a FIFO (named pipe), not a regular file"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_runs_with_its_tools_and_is_saved_as_a_case_sr_eval_runs() {
    let inputs = "mood: terse\ninput_prompt: Write notes.md\n";
    let dir = common::temp_dir("try-agent", &[("w.sr", WORKLOAD), ("writer.inputs.yaml", inputs)]);
    let server = MockServer::start().await;
    let write = serde_json::json!({"path": "notes.md", "content": "lifetimes"});
    server.push(MockReply::tool_call("call_1", "write_file", write));
    server.push(MockReply::text("Wrote notes.md"));
    let args = ["try", "w.sr", "writer", "--format", "json", "--save-case", "cases.jsonl"];
    let (code, stdout, stderr) = sr_against(&server, &args, &dir);
    assert_eq!(code, 0, "{stderr}");
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["kind"], "agent");
    assert_eq!(outcome["message"], "Write notes.md");
    assert_eq!(outcome["rendered"], "You write files. Be terse.");
    assert_eq!(outcome["tool_calls"], serde_json::json!(["write_file"]));
    assert_eq!(outcome["reply"], "Wrote notes.md");
    assert_eq!(outcome["saved_case"], "writer");
    assert_eq!(std::fs::read_to_string(dir.join("notes.md")).unwrap(), "lifetimes");
    assert!(sent(&server, 0).starts_with("system: \"You write files. Be terse.\""), "{}", sent(&server, 0));
    expect![[r#"
        {"id":"writer","prompt":"Write notes.md","vars":{"mood":"terse","input_prompt":"Write notes.md"},"expect":[{"equals":"Wrote notes.md"}]}
    "#]]
    .assert_eq(&std::fs::read_to_string(dir.join("cases.jsonl")).unwrap());

    // `sr eval` runs the saved case as `sr try` ran it: the agent alone, with the inputs.
    server.push(MockReply::tool_call("call_1", "write_file", serde_json::json!({"path": "notes.md", "content": "x"})));
    server.push(MockReply::text("Wrote notes.md"));
    let eval = ["eval", "cases.jsonl", "--workload", "w.sr", "--entry", "writer", "--jobs", "1", "--out", "out"];
    let (code, stdout, stderr) = sr_against(&server, &eval, &dir);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(sent(&server, 2).starts_with("system: \"You write files. Be terse.\""), "{}", sent(&server, 2));
    let results: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("out/results.json")).unwrap()).unwrap();
    assert_eq!(results["cases"][0]["passed"], true, "{results}");

    // A second save of the same item gets the next free id.
    server.push(MockReply::text("Done"));
    let (code, stdout, stderr) = sr_against(&server, &args, &dir);
    assert_eq!(code, 0, "{stderr}");
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["saved_case"], "writer-2");
}

/// A prompt that shares a flow's or an agent's name is tried as `prompt:NAME`
/// (the editors' Try lens names every item so), and `sr eval --entry
/// prompt:NAME` runs the case saved from it; a plain name still resolves as
/// the runtime's entry does.
#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_named_like_a_flow_or_an_agent_is_tried_by_its_kind() {
    let workload = "model main = openai/gpt-4o-mini\n\
                    prompt main: \"\"\"Summarise the message.\"\"\"\n\
                    prompt writer: \"\"\"Name a writer of ${topic}.\"\"\"\n\
                    agent writer:\n    instruction main\n\
                    flow main:\n    $topic = \"x\"\n    $r = run agent writer with $topic\n    return $r\n";
    let dir = common::temp_dir("try-shadowed", &[("w.sr", workload), ("writer.inputs.yaml", "topic: tides\n")]);
    let server = MockServer::start().await;
    server.push(MockReply::text("Rachel Carson"));
    let args = ["try", "w.sr", "prompt:writer", "--format", "json", "--save-case", "cases.jsonl"];
    let (code, stdout, stderr) = sr_against(&server, &args, &dir);
    assert_eq!(code, 0, "{stderr}");
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((outcome["kind"].as_str(), outcome["item"].as_str()), (Some("prompt"), Some("writer")));
    assert_eq!(outcome["entry"], "prompt:writer");
    assert_eq!(sent(&server, 0), r#"user: "Name a writer of tides.""#);

    server.push(MockReply::text("Rachel Carson"));
    let eval = ["eval", "cases.jsonl", "--workload", "w.sr", "--entry", "prompt:writer", "--jobs", "1", "--out", "out"];
    let (code, stdout, stderr) = sr_against(&server, &eval, &dir);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(sent(&server, 1), r#"user: "Name a writer of tides.""#);

    // The plain name is the agent (agents come before prompts), a flow is not tried.
    let (code, _, stderr) = common::sr(&["try", "w.sr", "writer", "--prompt", "go", "--replay", "none.jsonl"], &dir);
    assert!(stderr.contains("none.jsonl"), "{code} {stderr}");
    let (code, _, stderr) = common::sr(&["try", "w.sr", "main"], &dir);
    assert_eq!(code, 2);
    assert!(stderr.contains("'main' is a flow"), "{stderr}");
    let (code, _, stderr) = common::sr(&["try", "w.sr", "agent:main"], &dir);
    assert_eq!(code, 2);
    assert!(stderr.contains("no agent or prompt named 'agent:main' (it has: writer)"), "{stderr}");
}
