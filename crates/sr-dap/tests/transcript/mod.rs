//! DAP transcripts against the real `sr-dap` binary over stdio: the client
//! side of the stdio and travel tests (each test binary uses part of it).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sr_llm::mock::{MOCK_KEY, MockServer};

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

/// The adapter in `dir`, its models answered by `server`.
pub fn adapter(dir: &Path, server: &MockServer) -> Adapter {
    let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", MOCK_KEY.to_string())];
    Adapter::start_in(dir, &env)
}

/// Writes `source` as `name` in `dir`; its canonical path.
pub fn program(dir: &Path, name: &str, source: &str) -> PathBuf {
    std::fs::write(dir.join(name), source).unwrap();
    dir.join(name).canonicalize().unwrap()
}

/// Launches `launch` with breakpoints on `lines` of `program` and waits for the first stop.
pub async fn start(dap: &mut Adapter, launch: Value, program: &Path, lines: &[i64]) -> Value {
    dap.request("initialize", json!({})).await;
    let launched = dap.request("launch", launch).await;
    assert_eq!(launched["success"], true, "{launched}: {}", dap.output("stderr"));
    let breakpoints: Vec<Value> = lines.iter().map(|line| json!({"line": line})).collect();
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": breakpoints})).await;
    dap.request("configurationDone", json!({})).await;
    dap.event("stopped").await
}

/// Sends `command` for thread 1 and waits for the thread to stop again.
pub async fn go(dap: &mut Adapter, command: &str) -> Value {
    let answer = dap.request(command, json!({"threadId": 1})).await;
    assert_eq!(answer["success"], true, "{command}: {answer}");
    dap.event("stopped").await
}

/// Thread 1's top frame: its name and line.
pub async fn top(dap: &mut Adapter) -> (String, i64) {
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let frame = &trace["body"]["stackFrames"][0];
    (frame["name"].as_str().unwrap().to_string(), frame["line"].as_i64().unwrap())
}

/// `expression` evaluated on thread 1's top frame.
pub async fn eval(dap: &mut Adapter, expression: &str) -> Value {
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let result = dap.request("evaluate", json!({"expression": expression, "frameId": frame})).await;
    match result["success"].as_bool() {
        Some(true) => result["body"]["result"].clone(),
        _ => json!(null),
    }
}

/// Sets `name` in the *Variables* scope of thread 1's top frame.
pub async fn set(dap: &mut Adapter, name: &str, value: &str) {
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let scopes = dap.request("scopes", json!({"frameId": frame})).await;
    let scope = scopes["body"]["scopes"].as_array().unwrap().iter().find(|s| s["name"] == "Variables").unwrap();
    let reference = scope["variablesReference"].clone();
    let set = dap.request("setVariable", json!({"variablesReference": reference, "name": name, "value": value})).await;
    assert_eq!(set["success"], true, "{set}");
}

/// The files under `dir` (not the program), each with its text, sorted.
pub fn files(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_none_or(|e| e != "sr" && e != "jsonl") {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                found.push((name, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    found.sort();
    found
}

pub fn file(name: &str, text: &str) -> (String, String) {
    (name.to_string(), text.to_string())
}

/// A flow that writes `$v` to a file named after it, reads it back and asks
/// the model about it (`$v` is set on line 10, written on line 11; line 14
/// returns).
pub const READS_ITS_WRITES: &str = "streetrace v1\n\ntool fs = builtin streetrace.fs\n\nmodel main = openai/gpt-4o-mini\n\n\
                                prompt about: \"\"\"What is ${seen}?\"\"\"\n\nflow main:\n    $v = \"apple\"\n    \
                                fs.write_file(\"${v}.txt\", $v)\n    $seen = fs.read_file(\"${v}.txt\")\n    \
                                $answer = call llm about\n    return $answer\n";

/// The user message of the model server's `index`th request.
pub fn asked(server: &MockServer, index: usize) -> String {
    let body = &server.requests()[index].body;
    let messages = body["messages"].as_array().unwrap();
    messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"].as_str().unwrap().to_string()
}
