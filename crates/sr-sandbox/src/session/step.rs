//! One step on a live driver: send the code, then serve the driver's messages (output,
//! tool calls, the final answer) until it reports the step done, dies, misbehaves or
//! overruns the hard deadline.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Live, SessionConfig};
use crate::bridge::Received;
use crate::protocol::{DriverMessage, DriverOutcome, HostMessage};
use crate::tools::{Invalid, Toolbox};
use crate::{Event, Stream, ToolCall, ToolHost};

/// Why a tool call of the code gives no value. Its text (cut to [`MAX_ERROR`]) is
/// what the code is told and what the step's record keeps.
#[derive(Debug, thiserror::Error)]
enum CallError {
    #[error("there is no tool named '{0}'")]
    NoTool(String),
    /// The schema's complaints, each at its place in the arguments.
    #[error("invalid arguments for {name}: {}", problems.join("; "))]
    InvalidArguments { name: String, problems: Vec<String> },
    #[error("{name} timed out after {seconds} s")]
    TimedOut { name: String, seconds: f64 },
    /// The host's tool failed: what it said.
    #[error("{0}")]
    Failed(String),
    #[error("the result of {name} is {size} bytes, over the limit of {limit}")]
    TooLarge { name: String, size: usize, limit: usize },
    /// A replayed step's call, recorded as failed: the recorded text.
    #[error("{0}")]
    Recorded(String),
    #[error("replay diverged: the step now calls {name}, it called {before} before")]
    OtherTool { name: String, before: String },
    #[error("replay diverged: {0} was not called before the restart")]
    NotCalledBefore(String),
}

/// Tool error messages sent back to the driver are cut to this (schema errors quote
/// the arguments).
const MAX_ERROR: usize = 4096;

pub(super) struct Context<'a> {
    pub toolbox: &'a Toolbox,
    pub host: &'a dyn ToolHost,
    pub config: &'a SessionConfig,
}

pub(super) enum Mode<'a> {
    Live,
    /// Re-running a recorded step after a restart: tool calls are answered from the
    /// recording, never by the host, and nothing is emitted.
    Replay(&'a [ToolCall]),
}

pub(super) enum Ending {
    Done(DriverOutcome),
    /// The connection closed: the interpreter died.
    Died,
    /// The driver broke the protocol and can no longer be trusted.
    Violation(String),
    /// The step did not stop when interrupted.
    HardTimeout,
}

pub(super) struct Executed {
    pub ending: Ending,
    pub stdout: Capture,
    pub stderr: Capture,
    pub calls: Vec<ToolCall>,
    pub final_value: Option<Value>,
    /// A replayed step made calls that differ from its recording.
    pub diverged: bool,
    pub duration: Duration,
}

pub(super) async fn execute(
    live: &mut Live,
    cx: &Context<'_>,
    step: u32,
    code: &str,
    mode: Mode<'_>,
    events: &mut (dyn FnMut(Event) + Send),
) -> Executed {
    let started = Instant::now();
    let limit = cx.config.max_output_bytes;
    let mut run = Executed {
        ending: Ending::Died,
        stdout: Capture::new(limit),
        stderr: Capture::new(limit),
        calls: Vec::new(),
        final_value: None,
        diverged: false,
        duration: Duration::ZERO,
    };
    let replay = match mode {
        Mode::Live => None,
        Mode::Replay(calls) => Some(calls),
    };
    let mut emit = |event: Event| {
        if replay.is_none() {
            events(event)
        }
    };
    let exec =
        HostMessage::Exec { step, code, timeout: cx.config.step_timeout.as_secs_f64(), replay: replay.is_some() };
    if live.connection.send(&exec).await.is_err() {
        run.ending = Ending::Died;
        run.duration = started.elapsed();
        return run;
    }
    let mut deadline = tokio::time::Instant::now() + cx.config.step_timeout + cx.config.kill_grace;
    run.ending = loop {
        let Ok(received) = tokio::time::timeout_at(deadline, live.connection.recv()).await else {
            break Ending::HardTimeout;
        };
        let message = match received {
            Received::Message(message) => message,
            Received::Closed => break Ending::Died,
            Received::Violation(reason) => break Ending::Violation(reason),
        };
        match message {
            DriverMessage::Output { stream, text } => {
                let capture = match stream {
                    Stream::Stdout => &mut run.stdout,
                    Stream::Stderr => &mut run.stderr,
                };
                let kept = capture.push(&text);
                if !kept.is_empty() {
                    emit(Event::Output { step, stream, text: kept.to_string() });
                }
            }
            DriverMessage::ToolCall { name, args } => {
                let id = format!("{step}.{}", run.calls.len() + 1);
                emit(Event::ToolCall { step, id: id.clone(), tool: name.clone(), args: args.clone() });
                let paused = Instant::now();
                let result = match replay {
                    Some(recorded) => {
                        let result = replayed(recorded.get(run.calls.len()), &name, &args);
                        run.diverged |= result.is_err();
                        result
                    }
                    None => serve(cx, &name, args.clone()).await,
                }
                .map_err(|error| truncate(&error.to_string(), MAX_ERROR).to_string());
                // Time in tools is limited per call, not charged to the step.
                deadline += paused.elapsed();
                emit(Event::ToolResult { step, id: id.clone(), tool: name.clone(), result: result.clone() });
                let reply = match &result {
                    Ok(value) => HostMessage::ToolResult { ok: true, value: Some(value), error: None },
                    Err(error) => HostMessage::ToolResult { ok: false, value: None, error: Some(error) },
                };
                let sent = live.connection.send(&reply).await;
                run.calls.push(ToolCall { id, tool: name, args, result });
                if sent.is_err() {
                    break Ending::Died;
                }
            }
            DriverMessage::Final { value } => {
                run.final_value.get_or_insert(value);
            }
            DriverMessage::Done { outcome, dropped } => {
                run.stdout.dropped += dropped.stdout;
                run.stderr.dropped += dropped.stderr;
                break Ending::Done(outcome);
            }
            DriverMessage::Hello { .. } => break Ending::Violation("unexpected hello from the driver".to_string()),
        }
    };
    if let Some(recorded) = replay {
        run.diverged |= run.calls.len() != recorded.len();
    }
    run.duration = started.elapsed();
    run
}

/// A recorded result, if the replayed call is the one that was recorded.
fn replayed(recorded: Option<&ToolCall>, name: &str, args: &Value) -> Result<Value, CallError> {
    match recorded {
        Some(call) if call.tool == name && &call.args == args => call.result.clone().map_err(CallError::Recorded),
        Some(call) => Err(CallError::OtherTool { name: name.to_string(), before: call.tool.clone() }),
        None => Err(CallError::NotCalledBefore(name.to_string())),
    }
}

async fn serve(cx: &Context<'_>, name: &str, args: Value) -> Result<Value, CallError> {
    cx.toolbox.validate(name, &args).map_err(|problem| match problem {
        Invalid::NoTool => CallError::NoTool(name.to_string()),
        Invalid::Arguments(problems) => CallError::InvalidArguments { name: name.to_string(), problems },
    })?;
    let limit = cx.config.tool_timeout;
    match tokio::time::timeout(limit, cx.host.call(name, args)).await {
        Err(_) => Err(CallError::TimedOut { name: name.to_string(), seconds: limit.as_secs_f64() }),
        Ok(Err(error)) => Err(CallError::Failed(error.0)),
        Ok(Ok(value)) => {
            let size = serde_json::to_vec(&value).map_or(usize::MAX, |bytes| bytes.len());
            let limit = cx.config.max_result_bytes;
            if size > limit { Err(CallError::TooLarge { name: name.to_string(), size, limit }) } else { Ok(value) }
        }
    }
}

/// Output kept up to a limit; the rest is counted.
#[derive(Debug)]
pub(super) struct Capture {
    pub text: String,
    pub dropped: u64,
    limit: usize,
}

impl Capture {
    fn new(limit: usize) -> Capture {
        Capture { text: String::new(), dropped: 0, limit }
    }

    /// Appends what fits and returns it. After a cut nothing more is kept, so the
    /// text never has holes.
    pub(super) fn push(&mut self, text: &str) -> &str {
        let room = if self.dropped > 0 { 0 } else { self.limit.saturating_sub(self.text.len()) };
        let kept = truncate(text, room);
        self.dropped += (text.len() - kept.len()) as u64;
        let start = self.text.len();
        self.text.push_str(kept);
        &self.text[start..]
    }
}

fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_whole_characters_up_to_the_limit() {
        let mut capture = Capture::new(5);
        assert_eq!(capture.push("abc"), "abc");
        assert_eq!(capture.push("dé!"), "d");
        assert_eq!(capture.push("more"), "");
        assert_eq!(capture.text, "abcd");
        assert_eq!(capture.dropped, 3 + 4);
    }
}
