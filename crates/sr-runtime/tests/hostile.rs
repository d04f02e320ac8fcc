//! A hostile model against the file tools: every call below tries to leave the
//! work directory, hang the run, exhaust memory or reach the runtime's state.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{Options, run_source, tool_results};
use serde_json::{Value, json};
use sr_runtime::event::RunStatus;
use sr_runtime::scripted::ScriptedProvider;

const AGENT: &str = r#"
model main = openai/gpt-4o
tool fs = builtin streetrace.fs
prompt helper: """You edit files."""
agent:
    instruction helper
    tools fs
"#;

/// Runs the agent whose model makes `calls` (one per turn), then stops; the
/// tool results in order.
async fn hostile(name: &str, calls: Vec<(&str, Value)>, options: Options) -> Vec<Value> {
    let calls = calls.into_iter().map(|(tool, args)| (tool.to_string(), args)).collect();
    tool_results(name, AGENT, calls, options, std::time::Duration::from_secs(20)).await
}

fn error_of(result: &Value) -> String {
    assert_eq!(result["result"], "failure", "{result}");
    result["error"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn writes_through_a_dangling_symlink_do_not_leave_the_work_dir() {
    let outside = common::work_dir("outside");
    let work = common::work_dir("dangling");
    std::os::unix::fs::symlink(outside.join("planted.txt"), work.join("note.txt")).unwrap();
    std::os::unix::fs::symlink(outside.join("appended.txt"), work.join("log.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, work.join("out")).unwrap();
    std::os::unix::fs::symlink("missing.txt", work.join("inner.txt")).unwrap();
    let results = hostile(
        "dangling",
        vec![
            ("write_file", json!({"path": "note.txt", "content": "pwned"})),
            ("append_to_file", json!({"path": "log.txt", "content": "pwned"})),
            ("write_file", json!({"path": "out/new.txt", "content": "pwned"})),
            ("create_directory", json!({"path": "out/newdir"})),
            ("write_file", json!({"path": "../escape.txt", "content": "pwned"})),
            ("write_file", json!({"path": "inner.txt", "content": "through"})),
        ],
        Options { work_dir: work.clone(), ..Options::default() },
    )
    .await;
    assert_eq!(results.len(), 6);
    assert!(error_of(&results[0]).contains("outside the work directory"), "{}", results[0]);
    assert!(error_of(&results[1]).contains("outside the work directory"), "{}", results[1]);
    assert!(error_of(&results[2]).contains("outside the work directory"), "{}", results[2]);
    assert!(error_of(&results[3]).contains("outside the work directory"), "{}", results[3]);
    assert!(results[4].to_string().contains("outside the work directory"), "{}", results[4]);
    // Even a dangling symlink that stays inside creates nothing at its target.
    assert!(error_of(&results[5]).contains("symlink to a missing file"), "{}", results[5]);
    assert!(!work.join("missing.txt").exists());
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "something was written outside");
}

#[tokio::test]
async fn reads_through_symlinks_out_of_the_work_dir_are_refused() {
    let outside = common::work_dir("secret-outside");
    std::fs::write(outside.join("secret.txt"), "TOP SECRET").unwrap();
    let work = common::work_dir("symlink-read");
    std::os::unix::fs::symlink(outside.join("secret.txt"), work.join("link.txt")).unwrap();
    std::os::unix::fs::symlink("/proc/self/root/etc", work.join("magic")).unwrap();
    std::fs::write(work.join("inner.txt"), "fine").unwrap();
    std::os::unix::fs::symlink("inner.txt", work.join("ok-link.txt")).unwrap();
    let results = hostile(
        "symlink-read",
        vec![
            ("read_file", json!({"path": "link.txt"})),
            ("read_file", json!({"path": "magic/hostname"})),
            ("find_in_files", json!({"pattern": "**", "search_string": "SECRET"})),
            ("read_file", json!({"path": "ok-link.txt"})),
        ],
        Options { work_dir: work, ..Options::default() },
    )
    .await;
    assert!(error_of(&results[0]).contains("outside the work directory"), "{}", results[0]);
    assert!(error_of(&results[1]).contains("outside the work directory"), "{}", results[1]);
    assert_eq!(results[2]["output"], json!([]), "{}", results[2]);
    // A symlink that stays inside is followed.
    assert_eq!(results[3]["output"], "fine");
}

#[tokio::test]
async fn a_fifo_is_refused_without_blocking_and_large_files_are_capped() {
    let work = common::work_dir("fifo");
    let fifo = work.join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let big = std::fs::File::create(work.join("big.txt")).unwrap();
    big.set_len(17 << 20).unwrap();
    std::fs::write(work.join("small.txt"), "needle here").unwrap();
    let results = hostile(
        "fifo",
        vec![
            ("read_file", json!({"path": "pipe"})),
            ("write_file", json!({"path": "pipe", "content": "x"})),
            ("append_to_file", json!({"path": "pipe", "content": "x"})),
            ("read_file", json!({"path": "big.txt"})),
            ("find_in_files", json!({"pattern": "*", "search_string": "needle"})),
        ],
        Options { work_dir: work, ..Options::default() },
    )
    .await;
    assert!(error_of(&results[0]).contains("not a regular file"), "{}", results[0]);
    // Opening a FIFO for writing with no reader fails at once (ENXIO) or is refused.
    for result in &results[1..3] {
        assert_eq!(result["result"], "failure", "{result}");
    }
    assert!(error_of(&results[3]).contains("larger than 16 MiB"), "{}", results[3]);
    assert_eq!(
        results[4]["output"],
        json!([
            {"filepath": "big.txt", "skipped": "larger than 16 MiB"},
            {"filepath": "small.txt", "line_number": 1, "snippet": "needle here"}
        ])
    );
}

#[tokio::test]
async fn the_runtime_state_is_unreachable_even_inside_the_work_dir() {
    let work = common::work_dir("state");
    let state = work.join(".streetrace");
    std::fs::create_dir_all(state.join("journal")).unwrap();
    std::fs::write(state.join("sessions.db"), "DB").unwrap();
    std::os::unix::fs::symlink(".streetrace", work.join("alias")).unwrap();
    let results = hostile(
        "state",
        vec![
            ("read_file", json!({"path": ".streetrace/sessions.db"})),
            ("write_file", json!({"path": "alias/sessions.db", "content": "corrupt"})),
            ("write_file", json!({"path": "alias/journal/x.jsonl", "content": "forged"})),
            ("list_directory", json!({"path": "alias/journal"})),
            ("find_in_files", json!({"pattern": "**", "search_string": "DB"})),
            ("append_to_file", json!({"path": format!("{}/sessions.db", state.display()), "content": "x"})),
        ],
        Options { work_dir: work.clone(), forbidden: vec![state.clone()], ..Options::default() },
    )
    .await;
    // Not found when read, listed or searched; not found or refused when written.
    for (n, result) in results.iter().enumerate() {
        let shown = result.to_string();
        let hidden = match n {
            4 => result["output"] == json!([]),
            0 | 3 => shown.contains("No such file"),
            _ => shown.contains("No such file") || shown.contains("reserved for the runtime's state"),
        };
        assert!(hidden && !shown.contains("DB"), "{shown}");
    }
    assert_eq!(std::fs::read_to_string(state.join("sessions.db")).unwrap(), "DB");
    assert!(!Path::new(&state.join("journal/x.jsonl")).exists());
}

#[tokio::test]
async fn a_recursive_flow_fails_cleanly_instead_of_overflowing_the_stack() {
    for (name, source) in [
        ("self", "flow main:\n    run main\n"),
        ("mutual", "flow main:\n    run other\n\nflow other:\n    $x = 1\n    run main\n"),
    ] {
        let provider = Arc::new(ScriptedProvider::new());
        let run = run_source(name, source, "go", provider, Options::default()).await;
        assert_eq!(run.outcome.status, RunStatus::Failed, "{name}");
        let error = run.outcome.error.unwrap().message;
        assert!(error.contains("more than 32 levels deep"), "{error}");
        assert!(error.contains("main → "), "{error}");
    }
}

/// Blocks nested near the parser's limit (`if` and `for`, 249 levels) run
/// on the runtime `sr run` uses ([`sr_runtime::async_runtime`]); on tokio's
/// default 2 MiB worker stacks a debug build overflowed at about 60.
#[test]
fn blocks_nested_to_the_parser_limit_run() {
    let depth = 250;
    let mut source = String::from("flow main:\n    $n = 0\n");
    for level in 1..depth {
        let indent = "    ".repeat(level);
        source.push_str(&if level % 2 == 0 {
            format!("{indent}if true:\n")
        } else {
            format!("{indent}for $i in [1] do\n")
        });
    }
    source.push_str(&format!("{}$n = $n + 1\n", "    ".repeat(depth)));
    for level in (1..depth).rev().filter(|level| level % 2 == 1) {
        source.push_str(&format!("{}end\n", "    ".repeat(level)));
    }
    source.push_str("    return $n\n");
    let runtime = sr_runtime::async_runtime().unwrap();
    let outcome = runtime
        .block_on(async {
            // On a worker thread, as `sr run` polls a run.
            tokio::spawn(async move {
                let provider = Arc::new(ScriptedProvider::new());
                run_source("deep-blocks", &source, "go", provider, Options::default()).await.outcome
            })
            .await
        })
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert_eq!(outcome.result, Some(json!(1)));
}
