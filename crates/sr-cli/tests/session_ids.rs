//! `sr run --session ID` and `--resume ID` take only ids that follow the id
//! rule: a hostile one is an error naming the rule (exit 2), and nothing is
//! written anywhere, in the state directory or outside it.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::{sr, temp_dir};

/// Everything under `dir`.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(tree(&path));
        }
        out.push(path.display().to_string());
    }
    out.sort();
    out
}

#[test]
fn hostile_session_ids_are_refused_before_anything_is_written() {
    let dir = temp_dir(
        "session-ids",
        &[("w/agent.sr", "model main = openai/gpt-4o\nprompt p: \"\"\"x\"\"\"\nagent:\n    instruction p\n")],
    );
    let before = tree(&dir);
    // Ids a shell can pass (a NUL cannot be a process argument); the runtime's
    // own tests feed the whole table of `sr_runtime::ids::hostile`.
    let long = "a".repeat(10_000);
    let ids = ["../x", "../../x", "/abs", "a/b", ".", "..", "", ".hidden", "a b", "é", "x\ny", long.as_str()];
    for id in ids {
        for flag in ["--session", "--resume"] {
            let state = dir.join("w/state").display().to_string();
            let args = ["run", "agent.sr", flag, id, "--state-dir", &state, "--prompt", "hi"];
            let (code, stdout, stderr) = sr(&args, &dir.join("w"));
            assert_eq!(code, 2, "{flag} {id:?}: {stderr}");
            assert!(
                stdout.is_empty() && stderr.contains("session id ") && stderr.contains(sr_runtime::ids::RULE),
                "{stderr}"
            );
        }
    }
    assert_eq!(tree(&dir), before);
}
