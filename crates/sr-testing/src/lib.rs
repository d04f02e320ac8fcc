//! Helpers shared by tests and benchmarks of several crates. Not shipped.
// Test support: a missing corpus file should fail the test that asked for it.
#![allow(clippy::unwrap_used)]

pub mod fixture;
pub mod hostile;
pub mod postgres;
pub mod random;
pub mod scaling;
pub mod simulate;

use std::path::{Path, PathBuf};

/// A workload of one file-tool agent run by `flow main`, for the evaluation
/// harness's tests and `sr eval`'s.
pub const HELPER_WORKLOAD: &str = r#"streetrace v1

model main = openai/gpt-4o-mini

tool fs = builtin streetrace.fs

prompt helper_instruction: """You answer questions and write files when asked."""

agent helper:
    instruction helper_instruction
    tools fs
    description "Answers questions"

flow main:
    $answer = run agent helper with $input_prompt
    return $answer
"#;

/// Whether a test that needs `what` (a program on the machine) can run: in CI
/// a missing tool fails the test, elsewhere the test is skipped loudly.
pub fn required(available: bool, what: &str) -> bool {
    if available {
        return true;
    }
    assert!(std::env::var_os("CI").is_none(), "{what} is required in CI");
    eprintln!("\n!!! SKIPPED: {what} is not available on this machine; install it to run this test !!!\n");
    false
}

/// The binary `name` that the hostile suites (megabytes of generated input per
/// case) drive: the shipped build in `$SR_HOSTILE_BIN_DIR` when that is set
/// (`cargo xtask ci` builds the `dist` profile first and points it there, so
/// the attacks hit what users install, about nine times faster than a debug
/// build), else `built`, the binary of this test build.
pub fn hostile_binary(name: &str, built: &str) -> PathBuf {
    match std::env::var_os("SR_HOSTILE_BIN_DIR") {
        Some(dir) => {
            let path = Path::new(&dir).join(name);
            assert!(path.is_file(), "SR_HOSTILE_BIN_DIR has no {name}: {}", path.display());
            path
        }
        None => PathBuf::from(built),
    }
}

/// The venv `.ci/setup` installs the official A2A Python SDK (and uvicorn) in:
/// `$SR_A2A_VENV`, else `~/.cache/streetrace/a2a-venv`.
pub fn a2a_venv() -> PathBuf {
    std::env::var_os("SR_A2A_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/streetrace/a2a-venv")
    })
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The upstream corpus directory (`fixtures/upstream`).
pub fn upstream_corpus() -> PathBuf {
    workspace_root().join("fixtures/upstream")
}

/// Every `.sr` file of the upstream corpus, as (path relative to `files/`, text), sorted.
pub fn upstream_files() -> Vec<(String, String)> {
    let root = upstream_corpus().join("files");
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "sr") {
                let rel = path.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Upstream's largest real program (880 lines).
pub fn v2_parallel() -> String {
    std::fs::read_to_string(upstream_corpus().join("files/agents/code-review/v2-parallel.sr")).unwrap()
}

/// A workload without a single diagnostic, of at least `lines` lines: groups
/// of a schema, two prompts, two agents (one delegating, one used as a tool by
/// the next group) and a flow that runs them, plus a `main` flow.
pub fn generated_workload(lines: usize) -> String {
    // A group takes 32 lines and one more in `main`.
    let groups = lines.div_ceil(33).max(1);
    let mut out =
        String::from("streetrace v1\n\nmodel main = anthropic/claude-sonnet\ntool fs = builtin streetrace.fs\n\n");
    for i in 0..groups {
        // Each fixer uses the previous group's reviewer: a chain, no cycle.
        let uses = if i == 0 { String::new() } else { format!("    use reviewer{}\n", i - 1) };
        out.push_str(&format!(
            r#"schema Finding{i}:
    file: string
    line: int
    note: string?

prompt review{i} expecting Finding{i}[]: """Review the code of group {i} and list findings."""

prompt helper{i}: """Help with group {i}."""

agent reviewer{i}:
    instruction review{i}
    tools fs
    delegate fixer{i}
    description "Reviews group {i}"

agent fixer{i}:
    instruction helper{i}
{uses}
flow group{i}:
    $found = run agent reviewer{i} with $input_prompt
    $count = 0
    for $item in $found do
        if $item.line > 10:
            $count = $count + 1
            log "long finding ${{item}}"
    end
    $fixed = call llm helper{i} with $found
    return {{found: $found, fixed: $fixed, count: $count}}

"#
        ));
    }
    out.push_str("flow main:\n");
    for i in 0..groups {
        out.push_str(&format!("    $r{i} = run group{i}\n"));
    }
    out.push_str("    return $r0\n");
    out
}
