//! `EXECUTOR.run(code, options?)` in flows: Python run in the executor's
//! sandbox without a model, its outcome as a value, the executor's policy and
//! limits, and failures with the statement's location.

mod common;

use std::sync::Arc;

use common::{Options, bubblewrap_or_skip, recording, run_source, run_with_journal, serving, work_dir};
use serde_json::json;
use sr_runtime::event::{Payload, RunStatus};
use sr_runtime::journal::Mode;
use sr_runtime::scripted::ScriptedProvider;

const EXECUTOR: &str = "executor box:\n    backend: bubblewrap\n    timeout: 20\n\n";

#[tokio::test]
async fn code_runs_with_its_input_and_gives_its_outcome() {
    if !bubblewrap_or_skip("EXECUTOR.run") {
        return;
    }
    let source = format!(
        r#"{EXECUTOR}flow main:
    $ok = box.run('
print("hi", input["n"])
final_answer({{"double": input["n"] * 2, "words": input["words"][::-1], "none": input["none"]}})
', {{input: {{n: 21, words: ["a", "b"], none: null}}}})
    $expr = box.run("6 * 7")
    $failed = box.run("1 / 0")
    $slow = box.run('
while True:
    pass
', {{timeout: 1}})
    $denied = box.run("import socket")
    return {{ok: $ok, expr: $expr, failed: $failed, slow: $slow.outcome, denied: $denied.outcome, why: $denied.error}}
"#
    );
    let model = Arc::new(ScriptedProvider::new());
    let dir = work_dir("flow-code");
    let run =
        run_source("flow-code", &source, "go", model.clone(), Options { work_dir: dir, ..Options::default() }).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    let result = run.outcome.result.clone().unwrap();
    assert_eq!(
        result["ok"],
        json!({"outcome": "ok", "stdout": "hi 21\n", "stderr": "", "error": null,
               "result": {"double": 42, "words": ["b", "a"], "none": null}})
    );
    assert_eq!(result["expr"]["result"], "42", "a final expression gives its repr: {result}");
    assert_eq!(result["failed"]["outcome"], "error");
    assert_eq!(result["failed"]["error"], "ZeroDivisionError: division by zero");
    assert_eq!(result["slow"], "timeout");
    assert_eq!(result["denied"], "error");
    assert!(result["why"].as_str().unwrap().contains("socket"), "{result}");
    // No model was asked; each run is a tool step with its events.
    assert_eq!(model.requests().len(), 0);
    let calls =
        run.payloads().into_iter().filter(|p| matches!(p, Payload::ToolCall { tool, .. } if tool == "run")).count();
    assert_eq!(calls, 5);
}

#[tokio::test]
async fn bad_calls_and_refused_backends_fail_at_the_statement() {
    // Unknown executors and functions are check errors (SR117), so only bad
    // options reach the run.
    let cases = [
        ("    $r = box.run(\"1\", {inputs: 1})\n", "no option named 'inputs' (the options are input, timeout)"),
        ("    $r = box.run(\"1\", {timeout: 0})\n", "timeout is seconds, more than 0 and at most 3600, got 0"),
    ];
    for (n, (statement, expected)) in cases.into_iter().enumerate() {
        let source = format!("{EXECUTOR}flow main:\n    log \"start\"\n{statement}    return $r\n");
        let name = format!("flow-code-bad-{n}");
        let run = run_source(&name, &source, "go", Arc::new(ScriptedProvider::new()), Options::default()).await;
        assert_eq!(run.outcome.status, RunStatus::Failed);
        let error = run.outcome.error.unwrap();
        assert!(error.message.contains(expected), "{}", error.message);
        assert_eq!(error.location.map(|l| l.line), Some(7), "{statement}");
    }

    // `unsandboxed` needs the run's flag; without it nothing runs, and the
    // flow can catch the failure.
    let dir = work_dir("flow-code-unsandboxed");
    let source = format!(
        "executor host:\n    backend: unsandboxed\n\nflow main:\n    $r = host.run('open(\"{}/ran\", \"w\").write(\"x\")')\n    on failure:\n        return \"refused: ${{error}}\"\n",
        dir.display()
    );
    let run =
        run_source("flow-code-unsandboxed", &source, "go", Arc::new(ScriptedProvider::new()), Options::default()).await;
    let result = run.outcome.result.unwrap();
    assert!(result.as_str().unwrap().contains("needs `sr run --allow-unsandboxed`"), "{result}");
    assert!(!dir.join("ran").exists());
}

#[tokio::test]
async fn a_replay_serves_the_recorded_outcome_without_running_the_code() {
    if !bubblewrap_or_skip("EXECUTOR.run") {
        return;
    }
    let dir = work_dir("flow-code-replay");
    let path = dir.join("replay.sr");
    std::fs::write(&path, format!("{EXECUTOR}flow main:\n    return box.run(\"import random\nrandom.random()\")\n"))
        .unwrap();
    let cassette_path = work_dir("flow-code-cassette").join("run.jsonl");
    let recorded = run_with_journal(&path, &dir, recording(&cassette_path, &dir)).await;
    assert_eq!(recorded.status, RunStatus::Completed, "{:?}", recorded.error);
    let number = recorded.result.clone().unwrap()["result"].as_str().unwrap().parse::<f64>().unwrap();
    assert!((0.0..1.0).contains(&number));

    let text = std::fs::read_to_string(&cassette_path).unwrap();
    let replay = run_with_journal(&path, &dir, serving(Mode::Replay, &text, &dir, None)).await;
    assert_eq!(replay.result, recorded.result, "a second run would draw another number");
}

#[tokio::test]
async fn the_code_reads_its_calls_idempotency_key_from_the_journal() {
    if !bubblewrap_or_skip("EXECUTOR.run") {
        return;
    }
    let dir = work_dir("flow-code-key");
    let path = dir.join("key.sr");
    std::fs::write(
        &path,
        format!("{EXECUTOR}flow main:\n    $a = box.run(\"idempotency_key\")\n    $b = box.run(\"idempotency_key\")\n    return [$a.result, $b.result]\n"),
    )
    .unwrap();
    let cassette_path = work_dir("flow-code-key-cassette").join("run.jsonl");
    let recorded = run_with_journal(&path, &dir, recording(&cassette_path, &dir)).await;
    assert_eq!(recorded.status, RunStatus::Completed, "{:?}", recorded.error);
    let seen: Vec<String> = recorded
        .result
        .clone()
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().trim_matches('\'').to_string())
        .collect();
    let text = std::fs::read_to_string(&cassette_path).unwrap();
    let journaled: Vec<String> = text
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|entry| entry["kind"] == "tool_start")
        .map(|entry| entry["key"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(seen, journaled, "each call's code sees the key journaled for it");
    assert_ne!(seen[0], seen[1]);
}
