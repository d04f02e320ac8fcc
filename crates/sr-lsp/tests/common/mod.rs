//! Driving the real `sr-lsp` binary: framing, reading what it writes, waiting
//! for it to exit.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

pub fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Reads framed messages until the stream ends.
pub fn read_messages(stdout: impl Read + Send + 'static) -> mpsc::Receiver<Value> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut length = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(value) = line.strip_prefix("Content-Length: ") {
                    length = value.parse::<usize>().ok();
                }
            }
            let mut body = vec![0; length.expect("a Content-Length header")];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            if tx.send(serde_json::from_slice(&body).expect("a JSON body")).is_err() {
                return;
            }
        }
    });
    rx
}

/// Waits up to 10 s for the server to exit; kills it and fails otherwise.
pub fn wait_child(child: &mut std::process::Child) -> std::process::ExitStatus {
    for _ in 0..200 {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("sr-lsp did not exit within 10 s");
}

/// A running `sr-lsp` with its input and what it wrote.
pub struct Server {
    pub child: std::process::Child,
    stdin: std::process::ChildStdin,
    messages: mpsc::Receiver<Value>,
    /// The response to `initialize`.
    pub initialized: Value,
}

impl Server {
    /// Starts the server and completes `initialize`/`initialized`.
    pub fn start(initialize: Value) -> Server {
        Server::start_binary(env!("CARGO_BIN_EXE_sr-lsp").as_ref(), initialize)
    }

    /// [`Server::start`] of another build of the server.
    pub fn start_binary(binary: &std::path::Path, initialize: Value) -> Server {
        let mut child = std::process::Command::new(binary)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("cannot start sr-lsp");
        let stdin = child.stdin.take().unwrap();
        let messages = read_messages(child.stdout.take().unwrap());
        let mut server = Server { child, stdin, messages, initialized: Value::Null };
        server.send(&serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize}));
        server.initialized = server.response(0);
        server.send(&serde_json::json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        server
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        use std::io::Write;
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: &Value) {
        self.send_raw(&frame(message));
    }

    /// The next message that `matches`, skipping others; fails after 30 s.
    pub fn wait_for(&mut self, matches: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.messages.recv_timeout(Duration::from_secs(30)).expect("the server went quiet");
            if matches(&message) {
                return message;
            }
        }
    }

    /// Everything the server writes within `quiet` of its last message.
    #[allow(dead_code)] // Not every test binary that includes `common` drains.
    pub fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        std::iter::from_fn(|| self.messages.recv_timeout(quiet).ok()).collect()
    }

    /// The response with `id`.
    pub fn response(&mut self, id: impl Into<Value>) -> Value {
        let id = id.into();
        self.wait_for(|m| m["id"] == id && m.get("method").is_none())
    }

    /// Closes the server's input.
    pub fn close_input(self) -> std::process::Child {
        drop(self.stdin);
        self.child
    }
}
