//! A run's API key, handed on encoded by a command the model runs on the
//! host (`--allow-host-tools`), reaches no output: not the model, not the
//! events, the session store, the journal or the recording.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use sr_llm::mock::{MockReply, MockServer};

const KEY: &str = "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0";

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-secrets-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every file under `dir`, as text (lossy for binary files).
fn contents(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(contents(&path));
        } else {
            out.push((path.clone(), String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned()));
        }
    }
    out
}

/// The key, after 0, 1 and 2 other bytes (each of base64's alignments),
/// base64-encoded by coreutils as the command prints it: every 12 characters
/// in a row made of the key's bits alone (past the first and before the last
/// four) are absent from everything the run wrote or sent.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_a_host_command_prints_in_base64_is_redacted_everywhere() {
    let dir = temp("base64");
    let outside = temp("base64-outside");
    std::fs::write(
        dir.join("host.sr"),
        "model main = openai/gpt-4o-mini\ntool sh = builtin streetrace.cli.host\n\
         prompt helper: \"\"\"You run commands.\"\"\"\nagent:\n    instruction helper\n    tools sh\n",
    )
    .unwrap();
    let mut encoded = Vec::new();
    for lead in 0..3 {
        let file = outside.join(format!("k{lead}"));
        std::fs::write(&file, format!("{}{KEY}", "x".repeat(lead))).unwrap();
        let out = Command::new("base64").arg("-w0").arg(&file).output().unwrap();
        encoded.push(String::from_utf8(out.stdout).unwrap());
    }
    let script = format!("for f in {0}/k0 {0}/k1 {0}/k2; do base64 -w0 $f; echo; done", outside.display());
    let server = MockServer::start().await;
    server.push(MockReply::tool_call("c1", "execute_cli_command", json!({"command": ["sh", "-c", script]})));
    server.push(MockReply::text("done"));
    let record = outside.join("run.cassette.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_sr"))
        .args(["run", "host.sr", "--allow-host-tools", "--events", "jsonl", "--prompt", "go", "--record"])
        .arg(&record)
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .env("OPENAI_API_KEY", KEY)
        .env("STREETRACE_STATE_DIR", dir.join("state"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = server.requests();
    let told = requests[1].body["messages"].to_string();
    assert_eq!(told.matches("[redacted]").count(), 3, "the command ran and printed three encodings: {told}");
    let mut written = vec![(PathBuf::from("stdout"), String::from_utf8_lossy(&out.stdout).into_owned())];
    written.push((PathBuf::from("stderr"), String::from_utf8_lossy(&out.stderr).into_owned()));
    written.extend(requests.iter().map(|r| (PathBuf::from("request"), r.body.to_string())));
    written.extend(contents(&dir.join("state")));
    written.push((record.clone(), std::fs::read_to_string(&record).unwrap()));
    assert!(written.iter().any(|(path, _)| path.extension().is_some_and(|e| e == "db")), "the session store");
    for line in &encoded {
        let keyed = &line[4..line.len() - 4];
        for window in keyed.as_bytes().windows(12) {
            let window = std::str::from_utf8(window).unwrap();
            for (path, text) in &written {
                assert!(!text.contains(window), "{} holds {window} of {line}", path.display());
            }
        }
    }
}

/// A key of a real key's length (108 characters, as Anthropic's), printed by
/// a host command wrapped as the usual tools wrap it — `base64` (76 columns),
/// `base64 -w 64` and `openssl base64` (64, as PEM), `xxd -p` (60, hex) —
/// after 0, 1 and 2 other bytes: no run of 12 of its encoded characters,
/// line breaks taken out (also as JSON escapes), reaches the model, the
/// events, the session store, the journal or the recording.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_key_a_host_command_prints_wrapped_is_redacted_everywhere() {
    let key =
        format!("sk-ant-api03-{}", "Zq8Xw2Lm5Nv7Bc1Df4Gh6Jk9Pr3St0Uy".repeat(3)).chars().take(108).collect::<String>();
    let dir = temp("wrapped");
    let outside = temp("wrapped-outside");
    std::fs::write(
        dir.join("host.sr"),
        "model main = openai/gpt-4o-mini\ntool sh = builtin streetrace.cli.host\n\
         prompt helper: \"\"\"You run commands.\"\"\"\nagent:\n    instruction helper\n    tools sh\n",
    )
    .unwrap();
    let commands = ["base64 $f", "base64 -w 64 $f", "openssl base64 -in $f", "xxd -p $f"];
    let mut encoded = Vec::new();
    let mut script = String::new();
    for lead in 0..3 {
        let file = outside.join(format!("k{lead}"));
        std::fs::write(&file, format!("{}{key}", "x".repeat(lead))).unwrap();
        for command in commands {
            let command = command.replace("$f", &file.display().to_string());
            let out = Command::new("sh").arg("-c").arg(&command).output().unwrap();
            let printed = String::from_utf8(out.stdout).unwrap();
            assert!(printed.trim_end().contains('\n'), "{command} wraps the key: {printed}");
            encoded.push(printed.replace('\n', ""));
            script.push_str(&command);
            script.push_str("; ");
        }
    }
    let server = MockServer::start().await;
    server.push(MockReply::tool_call("c1", "execute_cli_command", json!({"command": ["sh", "-c", script]})));
    server.push(MockReply::text("done"));
    let record = outside.join("run.cassette.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_sr"))
        .args(["run", "host.sr", "--allow-host-tools", "--events", "jsonl", "--prompt", "go", "--record"])
        .arg(&record)
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .env("OPENAI_API_KEY", &key)
        .env("STREETRACE_STATE_DIR", dir.join("state"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = server.requests();
    let told = requests[1].body["messages"].to_string();
    assert!(told.matches("[redacted]").count() >= 12, "the command ran and printed twelve encodings: {told}");
    let mut written = vec![(PathBuf::from("stdout"), String::from_utf8_lossy(&out.stdout).into_owned())];
    written.push((PathBuf::from("stderr"), String::from_utf8_lossy(&out.stderr).into_owned()));
    written.extend(requests.iter().map(|r| (PathBuf::from("request"), r.body.to_string())));
    written.extend(contents(&dir.join("state")));
    written.push((record.clone(), std::fs::read_to_string(&record).unwrap()));
    let unwrapped: Vec<(PathBuf, String)> = written
        .into_iter()
        .map(|(path, text)| (path, text.replace("\\r", "").replace("\\n", "").replace(['\r', '\n'], "")))
        .collect();
    for line in &encoded {
        let keyed = &line[4..line.len() - 4];
        for window in keyed.as_bytes().windows(12) {
            let window = std::str::from_utf8(window).unwrap();
            for (path, text) in &unwrapped {
                assert!(!text.contains(window), "{} holds {window} of {line}", path.display());
            }
        }
    }
}
