//! The real `sr-dap` binary over pipes, for the stdio and torture tests.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;
use sr_wire::{Incoming, Reader};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

pub struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: Reader<BufReader<ChildStdout>>,
}

impl Process {
    /// Starts the adapter in `dir` (default: the test's own directory), with
    /// more environment variables.
    pub fn spawn(dir: Option<&Path>, env: &[(&str, String)]) -> Process {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sr-dap"));
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        command.envs(env.iter().map(|(k, v)| (k, v)));
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = Reader::new(BufReader::new(child.stdout.take().unwrap()));
        Process { child, stdin, stdout }
    }

    pub async fn write_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next message, within 30 s.
    pub async fn next(&mut self) -> Value {
        let read = tokio::time::timeout(Duration::from_secs(30), self.stdout.read()).await;
        match read.expect("the adapter said nothing for 30 s").expect("the adapter's output broke") {
            Some(Incoming::Message(message)) => message,
            other => panic!("expected a message, got {other:?}"),
        }
    }

    /// Closes stdin and waits (10 s at most) for the adapter to exit.
    pub async fn close(self) -> ExitStatus {
        let Process { mut child, stdin, .. } = self;
        drop(stdin);
        tokio::time::timeout(Duration::from_secs(10), child.wait()).await.expect("no exit 10 s after EOF").unwrap()
    }
}
