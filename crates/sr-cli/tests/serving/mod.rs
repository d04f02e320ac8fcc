//! Running `sr serve` for a test and speaking HTTP to it.
#![allow(clippy::unwrap_used, dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use sr_llm::mock::MockServer;

pub mod record;

pub const KEY: &str = "test-key-1234";

/// A fresh directory holding `files`, unique to `name` and this process.
pub fn temp(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (path, text) in files {
        std::fs::write(dir.join(path), text).unwrap();
    }
    dir
}

fn mock_env(command: &mut Command, mock: &MockServer) {
    command.env("OPENAI_BASE_URL", format!("{}/v1", mock.url())).env("OPENAI_API_KEY", KEY).env("NO_COLOR", "1");
}

/// `sr run ARGS` against the mock: its stdout (the run must succeed).
pub fn sr_run(dir: &Path, mock: &MockServer, args: &[&str]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sr"));
    command.arg("run").args(args).arg("--state-dir").arg("run-state").current_dir(dir);
    mock_env(&mut command, mock);
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `sr ARGS` with no model: (exit code, stdout, stderr).
pub fn sr_plain(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sr")).args(args).current_dir(dir).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// A running `sr serve` (killed when dropped) and a client for it.
pub struct Serve {
    child: Child,
    base: String,
    log: Arc<Mutex<String>>,
    client: reqwest::Client,
}

impl Serve {
    /// `sr serve ARGS --bind 127.0.0.1:0 --state-dir state` in `dir`, its
    /// model the mock; returns once it listens.
    pub async fn start(dir: &Path, mock: &MockServer, args: &[&str]) -> Serve {
        Serve::start_with(dir, mock, args, &[]).await
    }

    /// [`Serve::start`] with the variables `env` set too.
    pub async fn start_with(dir: &Path, mock: &MockServer, args: &[&str], env: &[(&str, &str)]) -> Serve {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sr"));
        command.envs(env.iter().copied());
        command
            .arg("serve")
            .args(args)
            .args(["--bind", "127.0.0.1:0", "--state-dir", "state"])
            .args(if args.contains(&"--drain-timeout") { &[][..] } else { &["--drain-timeout", "20"][..] })
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        mock_env(&mut command, mock);
        let mut child = command.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("sr serve: listening on ") {
                    let _ = tx.send(url.to_string());
                }
                let mut log = lines.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let base = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(60))).await.unwrap();
        let base = base.unwrap_or_else(|_| panic!("sr serve did not start: {}", log.lock().unwrap()));
        Serve { child, base, log, client: reqwest::Client::new() }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    async fn answer(response: reqwest::Response) -> (u16, Value) {
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.post_raw(path, body.to_string().into_bytes()).await
    }

    pub async fn post_raw(&self, path: &str, body: Vec<u8>) -> (u16, Value) {
        let request = self.client.post(format!("{}{path}", self.base)).header("content-type", "application/json");
        Self::answer(request.body(body).send().await.unwrap()).await
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        Self::answer(self.client.get(format!("{}{path}", self.base)).send().await.unwrap()).await
    }

    pub async fn get_with(&self, path: &str, header: &str, value: &str) -> (u16, Value) {
        Self::answer(self.client.get(format!("{}{path}", self.base)).header(header, value).send().await.unwrap()).await
    }

    pub async fn get_keyed(&self, path: &str, key: Option<&str>) -> (u16, Value) {
        let mut request = self.client.get(format!("{}{path}", self.base));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        Self::answer(request.send().await.unwrap()).await
    }

    /// The whole body (a finished run's event stream ends).
    pub async fn get_text(&self, path: &str) -> String {
        let response = self.client.get(format!("{}{path}", self.base)).send();
        let text = async { response.await.unwrap().text().await.unwrap() };
        tokio::time::timeout(Duration::from_secs(60), text).await.expect("the stream did not end")
    }

    /// What the body says within `time` (a stream that stays open).
    pub async fn get_text_for(&self, path: &str, time: Duration) -> String {
        let response = self.client.get(format!("{}{path}", self.base)).send().await.unwrap();
        let mut body = response.bytes_stream();
        let mut text = Vec::new();
        let _ = tokio::time::timeout(time, async {
            while let Some(Ok(chunk)) = body.next().await {
                text.extend_from_slice(&chunk);
            }
        })
        .await;
        String::from_utf8(text).unwrap()
    }

    pub async fn get_events_after_header(&self, run: &str, after: u64) -> Vec<(u64, Value)> {
        let response = self
            .client
            .get(format!("{}/v1/runs/{run}/events", self.base))
            .header("Last-Event-ID", after.to_string())
            .send()
            .await
            .unwrap();
        events_of(&response.text().await.unwrap())
    }

    pub fn signal(&mut self, signal: i32) {
        // SAFETY: signalling our own child by its pid.
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }

    /// The exit code once it exits within `time` (`None`: killed by a signal).
    pub fn wait_exit(&mut self, time: Duration) -> Option<i32> {
        let deadline = std::time::Instant::now() + time;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(std::time::Instant::now() < deadline, "sr serve did not exit: {}", self.log());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The events of a Server-Sent Events body: (id, data as JSON).
pub fn events_of(text: &str) -> Vec<(u64, Value)> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut id = None;
        let mut data = String::new();
        for line in block.lines() {
            if let Some(value) = line.strip_prefix("id:") {
                id = Some(value.trim().parse().unwrap());
            } else if let Some(value) = line.strip_prefix("data:") {
                data.push_str(value.strip_prefix(' ').unwrap_or(value));
            }
        }
        if let Some(id) = id {
            out.push((id, serde_json::from_str(&data).unwrap()));
        }
    }
    out
}

/// An event without what differs between two runs of the same workload
/// (its invocation id, its time).
pub fn normalized(event: &Value) -> Value {
    let mut event = event.clone();
    event["invocation_id"] = Value::String("*".into());
    if let Some(object) = event.as_object_mut() {
        object.remove("at_ms");
    }
    event
}

/// Polls `probe` until it gives a value, failing after `time`.
pub async fn wait_until<T, F, Fut>(time: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + time;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
