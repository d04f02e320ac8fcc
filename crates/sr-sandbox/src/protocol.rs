//! The messages between the host and the driver (`driver.py`): one JSON object per
//! line over the bridge socket. Everything the driver says is untrusted: the agent's
//! code runs in the same process and can write to the socket.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::Stream;

pub(crate) const PROTOCOL: u32 = 1;

/// No `Debug`: a hello carries the token.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum DriverMessage {
    Hello { token: String, protocol: u32 },
    Output { stream: Stream, text: String },
    ToolCall { name: String, args: Value },
    Final { value: Value },
    Done { outcome: DriverOutcome, dropped: Dropped },
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum DriverOutcome {
    Ok {
        result: Option<String>,
    },
    Final,
    Syntax {
        message: String,
        line: Option<u32>,
        column: Option<u32>,
    },
    Policy {
        message: String,
        traceback: String,
    },
    ToolError {
        tool: String,
        message: String,
    },
    Error {
        #[serde(rename = "type")]
        kind: String,
        message: String,
        traceback: String,
        line: Option<u32>,
    },
    Timeout,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Dropped {
    pub stdout: u64,
    pub stderr: u64,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum HostMessage<'a> {
    Welcome { config: &'a DriverConfig },
    Refused { reason: &'a str },
    Exec { step: u32, code: &'a str, timeout: f64, replay: bool },
    ToolResult { ok: bool, value: Option<&'a Value>, error: Option<&'a str> },
}

/// What the driver needs to set up the agent's namespace.
#[derive(Debug, Serialize)]
pub(crate) struct DriverConfig {
    pub allow: Vec<String>,
    pub allow_subtrees: Vec<String>,
    pub allow_all: bool,
    pub allow_open: bool,
    /// Python source defining the tool functions.
    pub stubs: String,
    pub functions: Vec<String>,
    /// Bytes of stdout, and of stderr, the driver passes on per step.
    pub max_output: usize,
    /// Largest message the driver may send (tool call, final answer).
    pub max_request: usize,
    /// Largest message the host sends (tool result).
    pub max_reply: usize,
}

impl HostMessage<'_> {
    pub(crate) fn to_line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).expect("host messages serialize");
        line.push(b'\n');
        line
    }
}

pub(crate) enum Line {
    Message(Vec<u8>),
    /// Longer than the limit; the rest of it was discarded.
    TooLong,
    /// The connection closed (a partial last line counts as closed).
    Eof,
}

/// Reads lines of at most `max` bytes without buffering more than that. The partial
/// line lives here, not in the future, so a cancelled read loses nothing.
pub(crate) struct LineReader<R> {
    reader: R,
    max: usize,
    line: Vec<u8>,
    too_long: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, max: usize) -> LineReader<R> {
        LineReader { reader, max, line: Vec::new(), too_long: false }
    }

    pub(crate) fn set_max(&mut self, max: usize) {
        self.max = max;
    }

    pub(crate) async fn next(&mut self) -> std::io::Result<Line> {
        loop {
            let buffer = self.reader.fill_buf().await?;
            if buffer.is_empty() {
                return Ok(Line::Eof);
            }
            let (chunk, end) = match buffer.iter().position(|&byte| byte == b'\n') {
                Some(end) => (&buffer[..end], Some(end + 1)),
                None => (buffer, None),
            };
            if !self.too_long {
                if self.line.len() + chunk.len() > self.max {
                    self.too_long = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            let used = end.unwrap_or(buffer.len());
            self.reader.consume(used);
            if end.is_some() {
                let line = std::mem::take(&mut self.line);
                return Ok(if std::mem::take(&mut self.too_long) { Line::TooLong } else { Line::Message(line) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::BufReader;

    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<String> {
        let mut reader = LineReader::new(BufReader::with_capacity(4, input), max);
        let mut out = Vec::new();
        loop {
            match reader.next().await.unwrap() {
                Line::Message(line) => out.push(String::from_utf8(line).unwrap()),
                Line::TooLong => out.push("<too long>".to_string()),
                Line::Eof => return out,
            }
        }
    }

    #[tokio::test]
    async fn reads_bounded_lines() {
        assert_eq!(lines(b"ab\ncdefgh\n\nxy", 5).await, ["ab", "<too long>", ""]);
        assert_eq!(lines(b"12345\n123456\n", 5).await, ["12345", "<too long>"]);
    }

    #[test]
    fn driver_messages_parse() {
        let done: DriverMessage = serde_json::from_str(
            r#"{"type":"done","outcome":{"kind":"error","type":"ZeroDivisionError","message":"division by zero","traceback":"T","line":2},"dropped":{"stdout":0,"stderr":3}}"#,
        )
        .unwrap();
        assert!(matches!(
            done,
            DriverMessage::Done {
                outcome: DriverOutcome::Error { line: Some(2), .. },
                dropped: Dropped { stderr: 3, .. }
            }
        ));
        assert!(serde_json::from_str::<DriverMessage>(r#"{"type":"exec"}"#).is_err());
    }
}
