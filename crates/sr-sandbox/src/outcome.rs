//! What a step did, as data: the runtime turns it into events and the observation
//! the model reads. They serialize, so that a run's journal can serve a step
//! without running it again.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::policy::Violation;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    /// The code ran to the end; `result` is the `repr` of a final expression statement.
    Success {
        result: Option<String>,
    },
    /// `final_answer(value)` was called.
    FinalAnswer {
        value: Value,
    },
    SyntaxError {
        message: String,
        line: Option<u32>,
        column: Option<u32>,
    },
    /// Refused before running (`violations`, with positions) or while running (a
    /// forbidden import or operation, described in `message`).
    PolicyViolation {
        message: String,
        violations: Vec<Violation>,
    },
    /// An uncaught exception. `traceback` starts at the agent's code.
    RuntimeError {
        exception: String,
        message: String,
        traceback: String,
        line: Option<u32>,
    },
    /// The step ran out of time. `restarted`: it did not stop when interrupted, so the
    /// sandbox was killed; the next step recreates it and replays earlier steps.
    Timeout {
        limit: Duration,
        restarted: bool,
    },
    /// A tool call failed and the code did not catch the `ToolError`.
    ToolError {
        tool: String,
        message: String,
    },
    /// The interpreter died (memory limit, signal, protocol violation); the next step
    /// recreates the sandbox and replays earlier steps.
    Crashed {
        reason: String,
    },
}

impl Outcome {
    /// Whether this counts against the consecutive-error budget.
    pub fn is_error(&self) -> bool {
        !matches!(self, Outcome::Success { .. } | Outcome::FinalAnswer { .. })
    }

    /// A short label for events and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Success { .. } => "success",
            Outcome::FinalAnswer { .. } => "final_answer",
            Outcome::SyntaxError { .. } => "syntax_error",
            Outcome::PolicyViolation { .. } => "policy_violation",
            Outcome::RuntimeError { .. } => "runtime_error",
            Outcome::Timeout { .. } => "timeout",
            Outcome::ToolError { .. } => "tool_error",
            Outcome::Crashed { .. } => "crashed",
        }
    }
}

/// One tool call made by a step, with what it returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// `step.n`, unique within a session.
    pub id: String,
    pub tool: String,
    pub args: Value,
    pub result: Result<Value, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    pub step: u32,
    pub outcome: Outcome,
    /// Captured output, each cut at the session's `max_output_bytes`.
    pub stdout: String,
    pub stderr: String,
    /// Bytes left out of `stdout` and `stderr`.
    pub truncated: u64,
    pub tool_calls: Vec<ToolCall>,
    pub duration: Duration,
}
