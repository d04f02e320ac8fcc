//! examples/structured-workflow end to end: the shipped recording replays
//! offline with model calls only where the workflow needs a model, and a live
//! run (a local mock model, the real sandbox) leaves the answers behind and
//! removes its scratch workspace.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use sr_llm::mock::{MockReply, MockServer};

const EXAMPLE: &str = "examples/structured-workflow";

fn sr(args: &[&str], env: &[(&str, String)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sr"));
    command.args(args).current_dir(sr_testing::workspace_root()).env("NO_COLOR", "1");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-workflow-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The run's steps: `MODEL` for each model call, else the tool called.
fn steps(jsonl: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(jsonl)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter_map(|event| match event["type"].as_str() {
            Some("model_request") => Some("MODEL".to_string()),
            Some("tool_call") => Some(event["tool"].as_str().unwrap().to_string()),
            _ => None,
        })
        .collect()
}

const RESULT: &str = r#"{"structured": {"passed": true, "attempts": 2}, "baseline": {"passed": true, "attempts": 1}}"#;

#[test]
fn the_recording_replays_offline_with_model_calls_only_where_needed() {
    let sessions = temp("replay").join("sessions.db");
    // An empty work directory: the replay reads nothing from it, and leaves
    // what the recorded run left.
    let work = temp("replay-work");
    let cassette = format!("{EXAMPLE}/workflow.cassette.jsonl");
    let work_dir = work.to_str().unwrap();
    let args = ["run", &format!("{EXAMPLE}/workflow.sr"), "--replay", &cassette, "--work-dir", work_dir];
    let out = sr(
        &[&args[..], &["--events", "jsonl", "--sessions", sessions.to_str().unwrap(), "--prompt", "word_frequencies"]]
            .concat(),
        &[],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|event| event["type"] == "run_finished")
        .unwrap()["result"]
        .clone();
    assert_eq!(result, serde_json::from_str::<Value>(RESULT).unwrap());
    #[rustfmt::skip]
    let expected = [
        // structured: setup reads the task and its tests and makes the scratch directory
        "read_file", "read_file", "create_directory",
        // the index, then the model picks modules by number
        "read_file", "MODEL",
        // the docstrings of the two modules it picked, then the plan
        "read_file", "read_file", "MODEL",
        // attempt 1: code, saved, tested in the sandbox (it fails); attempt 2 passes
        "MODEL", "write_file", "run",
        "MODEL", "write_file", "run",
        // the answer, and the scratch workspace removed
        "write_file", "execute_cli_command",
        // baseline: setup, the searching agent with its file tool, one attempt, finish
        "read_file", "read_file", "create_directory",
        "MODEL", "find_in_files", "MODEL",
        "MODEL", "write_file", "run",
        "write_file", "execute_cli_command",
    ];
    assert_eq!(steps(&out.stdout), expected);
    // The files the recorded run wrote are written again, its scratch
    // workspace made and removed again; nothing else appears.
    let mut left: Vec<String> =
        std::fs::read_dir(&work).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    assert_eq!(left, ["baseline_agent.py", "my_agent.py"]);
    assert!(std::fs::read_to_string(work.join("my_agent.py")).unwrap().contains("def solve"));
    assert!(!Path::new(&sr_testing::workspace_root().join(EXAMPLE).join("my_agent.py")).exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_live_run_writes_the_answers_and_removes_its_scratch_workspace() {
    if !sr_testing::required(Command::new("bwrap").arg("--version").output().is_ok(), "bubblewrap (bwrap)") {
        return;
    }
    let root = sr_testing::workspace_root();
    let work = temp("live");
    let copied = Command::new("cp").arg("-r").arg(root.join(EXAMPLE)).arg(work.join("example")).status().unwrap();
    assert!(copied.success());
    let work = work.join("example");
    let server = MockServer::start().await;
    let script = std::fs::read_to_string(root.join(EXAMPLE).join("model-script.json")).unwrap();
    let replies = MockReply::script(&script).unwrap();
    let model_calls = replies.len();
    replies.into_iter().for_each(|reply| server.push(reply));
    let sessions = temp("live-state").join("sessions.db");
    let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", "test-key".to_string())];
    let work_dir = work.display().to_string();
    let out = tokio::task::spawn_blocking(move || {
        let workload = format!("{EXAMPLE}/workflow.sr");
        let args = ["run", &workload, "--work-dir", &work_dir, "--sessions", sessions.to_str().unwrap()];
        sr(&[&args[..], &["--prompt", "word_frequencies"]].concat(), &env)
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result, serde_json::from_str::<Value>(RESULT).unwrap());
    assert_eq!(server.requests().len(), model_calls);
    assert_eq!(model_calls, 7);

    let answer = std::fs::read_to_string(work.join("my_agent.py")).unwrap();
    assert!(answer.contains("re.findall(r\"[a-z0-9']+\", text.lower())"), "{answer}");
    assert_eq!(std::fs::read_to_string(work.join("baseline_agent.py")).unwrap(), answer);
    assert!(!work.join("scratch").exists(), "the scratch workspace is removed");
}
