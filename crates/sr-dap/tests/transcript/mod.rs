//! DAP transcripts against the real `sr-dap` binary over stdio: the client
//! side of the stdio and travel tests (each test binary uses part of it).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::common;

pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The adapter, and every message it sent.
pub struct Adapter {
    process: common::Process,
    seq: i64,
    pub transcript: Vec<Value>,
}

impl Adapter {
    pub fn start() -> Adapter {
        Adapter::start_in(&fixtures(), &[])
    }

    pub fn start_in(dir: &Path, env: &[(&str, String)]) -> Adapter {
        Adapter { process: common::Process::spawn(Some(dir), env), seq: 0, transcript: Vec::new() }
    }

    pub async fn write_raw(&mut self, bytes: &[u8]) {
        self.process.write_raw(bytes).await;
    }

    /// Sends a request; `arguments: None` leaves the field out.
    pub async fn send(&mut self, command: &str, arguments: Option<Value>) -> i64 {
        self.seq += 1;
        let mut request = json!({"seq": self.seq, "type": "request", "command": command});
        if let Some(arguments) = arguments {
            request["arguments"] = arguments;
        }
        let mut frame = Vec::new();
        sr_wire::write(&mut frame, &request).await.unwrap();
        self.write_raw(&frame).await;
        self.seq
    }

    pub async fn next(&mut self) -> Value {
        let message = self.process.next().await;
        self.transcript.push(message.clone());
        message
    }

    /// Messages up to the response to `seq`, which is returned.
    pub async fn response(&mut self, seq: i64) -> Value {
        loop {
            let message = self.next().await;
            if message["type"] == "response" && message["request_seq"] == seq {
                return message;
            }
        }
    }

    pub async fn request(&mut self, command: &str, arguments: Value) -> Value {
        let seq = self.send(command, Some(arguments)).await;
        self.response(seq).await
    }

    /// Messages up to the event `name`, which is returned.
    pub async fn event(&mut self, name: &str) -> Value {
        loop {
            let message = self.next().await;
            if message["type"] == "event" && message["event"] == name {
                return message;
            }
        }
    }

    /// The transcript without output events, as `response command` / `event name`.
    pub fn outline(&self) -> Vec<String> {
        self.transcript
            .iter()
            .filter(|m| m["event"] != "output")
            .map(|m| match m["type"].as_str() {
                Some("response") => format!("response {} {}", m["command"].as_str().unwrap(), m["success"]),
                _ => format!("event {}", m["event"].as_str().unwrap()),
            })
            .collect()
    }

    pub fn output(&self, category: &str) -> String {
        self.transcript
            .iter()
            .filter(|m| m["event"] == "output" && m["body"]["category"] == category)
            .map(|m| m["body"]["output"].as_str().unwrap().to_string())
            .collect()
    }

    pub async fn exit_code(self) -> Option<i32> {
        self.process.close().await.code()
    }

    /// `disconnect`, answered, and the adapter exits with 0.
    pub async fn disconnect(mut self) {
        let seq = self.send("disconnect", None).await;
        self.response(seq).await;
        assert_eq!(self.exit_code().await, Some(0));
    }
}

pub fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-dap-stdio-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
