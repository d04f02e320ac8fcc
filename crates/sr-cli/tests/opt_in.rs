//! `sr run`'s opt-in flags: `--allow-host-tools` lets `streetrace.cli.host` tools
//! run commands on the host, `--allow-unsandboxed` lets coding agents use
//! `backend: unsandboxed`; without them both fail with an error naming the flag.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;
use sr_llm::mock::{MockReply, MockServer};

fn sr(args: &[&str], cwd: &Path, server: &MockServer) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sr"));
    command.args(args).current_dir(cwd).env("NO_COLOR", "1");
    command.env("OPENAI_BASE_URL", format!("{}/v1", server.url())).env("OPENAI_API_KEY", "test-key-1234");
    command.env("STREETRACE_STATE_DIR", cwd.join("state"));
    command.output().unwrap()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-opt-in-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An agent whose only tool is the cli tool `reference`.
fn cli_agent(reference: &str) -> String {
    format!(
        "model main = openai/gpt-4o-mini\ntool sh = builtin {reference}\nprompt helper: \"\"\"You run commands.\"\"\"\n\
         agent:\n    instruction helper\n    tools sh\n"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn host_tools_run_on_the_host_only_with_allow_host_tools() {
    let dir = temp("host");
    std::fs::write(dir.join("host.sr"), cli_agent("streetrace.cli.host")).unwrap();
    let outside = temp("host-outside");
    std::fs::write(outside.join("host.txt"), "from the host").unwrap();
    let command = json!({"command": ["cat", outside.join("host.txt")]});
    let server = MockServer::start().await;
    for flags in [&[][..], &["--allow-host-tools"][..]] {
        server.push(MockReply::tool_call("c1", "execute_cli_command", command.clone()));
        server.push(MockReply::text("done"));
        let args = [&["run", "host.sr", "--prompt", "go"][..], flags].concat();
        let out = sr(&args, &dir, &server);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let requests = server.requests();
    let told = |n: usize| requests[n].body["messages"].to_string();
    assert!(told(1).contains("`sr run --allow-host-tools`") && !told(1).contains("from the host"), "{}", told(1));
    assert!(told(3).contains("from the host"), "{}", told(3));
}

const UNSANDBOXED: &str = r#"model main = openai/gpt-4o-mini
executor local:
    backend: unsandboxed
prompt solver: """You solve tasks with code."""
agent:
    instruction solver
    executor local
"#;

#[tokio::test(flavor = "multi_thread")]
async fn unsandboxed_coding_agents_need_allow_unsandboxed() {
    let dir = temp("unsandboxed");
    std::fs::write(dir.join("local.sr"), UNSANDBOXED).unwrap();
    let server = MockServer::start().await;
    let out = sr(&["run", "local.sr", "--prompt", "go"], &dir, &server);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`sr run --allow-unsandboxed`"), "{stderr}");
    assert!(server.requests().is_empty(), "no model call was made");

    server.push(MockReply::text("```python\nfinal_answer('ran')\n```"));
    let out = sr(&["run", "local.sr", "--allow-unsandboxed", "--prompt", "go"], &dir, &server);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ran");
}

/// Without bubblewrap the cli tool fails; its commands never run on the host.
#[tokio::test(flavor = "multi_thread")]
async fn without_bubblewrap_commands_fail_instead_of_running_on_the_host() {
    let dir = temp("no-bwrap");
    std::fs::write(dir.join("sh.sr"), cli_agent("streetrace.cli")).unwrap();
    let marker = dir.join("ran-on-the-host");
    let server = MockServer::start().await;
    server.push(MockReply::tool_call("c1", "execute_cli_command", json!({"command": ["/usr/bin/touch", marker]})));
    server.push(MockReply::text("done"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_sr"));
    command.args(["run", "sh.sr", "--prompt", "go"]).current_dir(&dir).env("NO_COLOR", "1");
    command.env("OPENAI_BASE_URL", format!("{}/v1", server.url())).env("OPENAI_API_KEY", "test-key-1234");
    command.env("STREETRACE_STATE_DIR", dir.join("state")).env("PATH", dir.join("empty"));
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let told = server.requests()[1].body["messages"].to_string();
    assert!(told.contains("needs `bwrap` and `prlimit`"), "{told}");
    assert!(!marker.exists());
}

/// A host command runs as the user who runs `sr` and is sr's child: it reads
/// `/proc/$PPID/environ` and `/proc/$PPID/mem` unless sr made itself
/// non-dumpable. Run as an unprivileged user (root may read any process).
#[tokio::test(flavor = "multi_thread")]
async fn host_commands_cannot_read_the_environment_or_memory_of_sr() {
    let root = std::fs::metadata("/proc/self").map(|meta| std::os::unix::fs::MetadataExt::uid(&meta) == 0).unwrap();
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok_and(|out| out.status.success());
    if !sr_testing::required(!root || setpriv, "setpriv (util-linux), to run sr as an unprivileged user") {
        return;
    }
    let dir = temp("environ");
    std::fs::write(dir.join("host.sr"), cli_agent("streetrace.cli.host")).unwrap();
    if root {
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        std::os::unix::fs::chown(dir.join("host.sr"), Some(65534), Some(65534)).unwrap();
    }
    let key = "sk-environ-test-5a7c1e9b3d";
    let script = "base64 -w0 /proc/$PPID/environ; echo; od -An -c -j 4096 -N 64 /proc/$PPID/mem";
    let server = MockServer::start().await;
    server.push(MockReply::tool_call("c1", "execute_cli_command", json!({"command": ["sh", "-c", script]})));
    server.push(MockReply::text("done"));
    let mut command = if root {
        let mut command = Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_sr")]);
        command
    } else {
        Command::new(env!("CARGO_BIN_EXE_sr"))
    };
    command.args(["run", "host.sr", "--allow-host-tools", "--prompt", "go"]).current_dir(&dir).env("NO_COLOR", "1");
    command.env("OPENAI_BASE_URL", format!("{}/v1", server.url())).env("OPENAI_API_KEY", key);
    command.env("STREETRACE_STATE_DIR", dir.join("state")).env("HOME", &dir);
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let told = server.requests()[1].body["messages"].to_string();
    assert!(told.contains("environ: Permission denied") && told.contains("mem: Permission denied"), "{told}");
    let environ_base64 = ["OPENAI_API_KEY", key].iter().any(|text| {
        // Each text, base64-encoded at any of the three alignments, loses at most
        // its first and last two characters.
        (0..3).any(|pad| {
            let encoded = base64_encode(&format!("{}{text}", "x".repeat(pad)));
            told.contains(&encoded[4..encoded.len() - 4])
        })
    });
    assert!(!environ_base64 && !told.contains(key), "{told}");
}

fn base64_encode(text: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    text.as_bytes()
        .chunks(3)
        .flat_map(|chunk| {
            let n = chunk.iter().fold(0u32, |n, &b| (n << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
            (0..=chunk.len()).map(move |i| ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char)
        })
        .collect()
}
