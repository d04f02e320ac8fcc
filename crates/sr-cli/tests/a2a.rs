//! A2A interoperability: the official Python SDK (`a2a-sdk`, pinned and
//! installed in a venv by `.ci/setup`) and JavaScript SDK (`@a2a-js/sdk`,
//! pinned by `tests/a2a/js/package-lock.json`, installed by its `setup.sh`)
//! as clients of a real `sr serve` whose model is sr-llm's mock (the Python
//! SDK also with file parts, ADK's context parts and a webhook). Each script
//! asserts its steps; these tests give the model's replies in the order the
//! script asks for them and check that every step passed.
#![allow(clippy::unwrap_used)]

mod serving;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serving::{Serve, temp};
use sr_llm::mock::{MockReply, MockServer};

/// A workload that greets whoever it is sent.
const HELLO: &str = include_str!("fixtures/greeter.sr");

/// A flow that asks a human between two model calls.
const APPROVE: &str = include_str!("fixtures/pausing.sr");

/// A flow that asks a human and, when the answer is "yes", returns the context it was sent.
const ADK_GATE: &str = include_str!("fixtures/adk_gate.sr");

/// A flow that reads a delivered file, asks a human, and writes a file when the answer is "yes".
const GATED: &str = include_str!("fixtures/gated.sr");

const KEY: &str = "a2a-interop-key-0123456789";

/// The Python of the venv `.ci/setup` installs the SDK in.
fn venv_python() -> PathBuf {
    sr_testing::a2a_venv().join("bin/python")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_python_sdk_is_a_client_of_sr_serve() {
    let python = venv_python();
    let has_sdk = Command::new(&python).args(["-c", "import a2a.client"]).output().is_ok_and(|o| o.status.success());
    if !sr_testing::required(has_sdk, &format!("a2a-sdk in {} (run .ci/setup)", python.display())) {
        return;
    }
    let dir = temp("a2a-sdk", &[("hello.sr", HELLO), ("approve.sr", APPROVE), ("keys", KEY)]);
    let mock = MockServer::start().await;
    // In the order the script's steps call the model.
    for reply in ["Hello, Ada.", "Hi, Bo.", "Dear Bob", "Dear Bob, warmly.", "Bonjour, Cy.", "Salut, Di."] {
        mock.push(MockReply::text(reply));
    }
    mock.push(MockReply::text("too late").delay(Duration::from_secs(60)));
    let serve = Serve::start(&dir, &mock, &["hello.sr", "approve.sr", "--api-key-file", "keys"]).await;
    let passed = python_steps(python, "sdk_client.py", &serve, "SDK").await;
    assert_eq!(passed, ["card", "send", "stream", "get-list", "input-required", "v0.3", "cancel", "auth"]);
}

/// The SDK sends a file part and ADK's context parts, and receives push
/// notifications on a webhook of its own (`tests/a2a/sdk_files_push.py`).
#[tokio::test(flavor = "multi_thread")]
async fn the_official_python_sdk_round_trips_files_context_and_push_notifications() {
    let python = venv_python();
    let has_sdk = Command::new(&python).args(["-c", "import a2a.client"]).output().is_ok_and(|o| o.status.success());
    if !sr_testing::required(has_sdk, &format!("a2a-sdk in {} (run .ci/setup)", python.display())) {
        return;
    }
    let dir = temp("a2a-sdk-push", &[("gated.sr", GATED), ("keys", KEY)]);
    let mock = MockServer::start().await;
    let args = ["gated.sr", "--api-key-file", "keys", "--push-host", "127.0.0.1"];
    let serve = Serve::start(&dir, &mock, &args).await;
    let passed = python_steps(python, "sdk_files_push.py", &serve, "SDK").await;
    assert_eq!(passed, ["card", "message-id", "context", "files", "push"]);
}

/// The steps `tests/a2a/SCRIPT` passed (its `ok STEP` lines), run by `python`
/// against `serve`; a failing script fails the test with its output and the
/// server's log.
async fn python_steps(python: PathBuf, script: &str, serve: &Serve, who: &str) -> Vec<String> {
    let script = sr_testing::workspace_root().join("crates/sr-cli/tests/a2a").join(script);
    let base = serve.base().to_string();
    let out = tokio::task::spawn_blocking(move || Command::new(&python).arg(script).args([&base, KEY]).output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let passed: Vec<String> = stdout.lines().filter_map(|l| l.strip_prefix("ok ")).map(String::from).collect();
    assert!(
        out.status.success(),
        "the {who} client failed after {passed:?}:\n{}\n--- sr serve's log ---\n{}",
        String::from_utf8_lossy(&out.stderr),
        serve.log()
    );
    passed
}

/// The Python of the venv `.ci/setup` installs Google ADK in.
fn adk_python() -> PathBuf {
    let home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    let venv = std::env::var_os("SR_ADK_VENV").map_or_else(|| home.join(".cache/streetrace/adk-venv"), PathBuf::from);
    venv.join("bin/python")
}

/// ADK's `RemoteA2aAgent` answers a served flow's question with context parts
/// beside the person's "yes" (`tests/a2a/adk_remote.py`).
#[tokio::test(flavor = "multi_thread")]
async fn google_adk_s_remote_agent_answers_a_served_question_with_context_apart() {
    let python = adk_python();
    let import = "from google.adk.agents.remote_a2a_agent import RemoteA2aAgent";
    let has_adk = Command::new(&python).args(["-c", import]).output().is_ok_and(|o| o.status.success());
    if !sr_testing::required(has_adk, &format!("google-adk in {} (run .ci/setup)", python.display())) {
        return;
    }
    let dir = temp("a2a-adk", &[("adk_gate.sr", ADK_GATE), ("keys", KEY)]);
    let mock = MockServer::start().await;
    let serve = Serve::start(&dir, &mock, &["adk_gate.sr", "--api-key-file", "keys"]).await;
    let passed = python_steps(python, "adk_remote.py", &serve, "ADK").await;
    assert_eq!(passed, ["asked", "answered"]);
}

/// Where `tests/a2a/js/setup.sh` installs the JavaScript SDK.
fn js_sdk() -> PathBuf {
    std::env::var_os("SR_A2A_JS").map_or_else(|| sr_testing::workspace_root().join("target/a2a-js"), PathBuf::from)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_javascript_sdk_sends_and_streams() {
    let sdk = js_sdk();
    let installed = sdk.join("node_modules/@a2a-js/sdk/package.json").is_file();
    if !sr_testing::required(installed, &format!("@a2a-js/sdk in {} (run .ci/setup)", sdk.display())) {
        return;
    }
    let dir = temp("a2a-js", &[("hello.sr", HELLO), ("keys", KEY)]);
    let mock = MockServer::start().await;
    for reply in ["Hello, Ada.", "Hi, Bo."] {
        mock.push(MockReply::text(reply));
    }
    let serve = Serve::start(&dir, &mock, &["hello.sr", "--api-key-file", "keys"]).await;
    let script =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/a2a/js/client.mjs")).unwrap();
    let base = serve.base().to_string();
    // Run from the SDK's directory, so that the script's imports resolve there.
    let out = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .args(["--input-type=module", "-e", &script])
            .current_dir(&sdk)
            .env("SR_A2A_BASE", &base)
            .env("SR_A2A_KEY", KEY)
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let passed: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix("ok ")).collect();
    assert!(
        out.status.success(),
        "the SDK client failed after {passed:?}:\n{}\n--- sr serve's log ---\n{}",
        String::from_utf8_lossy(&out.stderr),
        serve.log()
    );
    assert_eq!(passed, ["card", "send", "stream"]);
}
