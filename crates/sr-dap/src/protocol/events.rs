//! The events we send, a closed set, and their bodies.

use serde::Serialize;
use serde_json::Value;

use super::{Breakpoint, SourceBody};

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Initialized,
    Stopped(StoppedEvent),
    Continued(ContinuedEvent),
    Output(OutputEvent),
    Thread(ThreadEvent),
    Breakpoint(BreakpointEvent),
    Exited(ExitedEvent),
    Terminated,
    /// Ours: a thread waits for an answer to `escalate to human`, or no longer does.
    Question(QuestionEvent),
}

impl Event {
    /// The `event` field.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Initialized => "initialized",
            Event::Stopped(_) => "stopped",
            Event::Continued(_) => "continued",
            Event::Output(_) => "output",
            Event::Thread(_) => "thread",
            Event::Breakpoint(_) => "breakpoint",
            Event::Exited(_) => "exited",
            Event::Terminated => "terminated",
            Event::Question(_) => "streetraceQuestion",
        }
    }

    /// The `body` field, absent for events without one.
    pub fn body(&self) -> Option<Value> {
        let body = match self {
            Event::Initialized | Event::Terminated => return None,
            Event::Stopped(body) => serde_json::to_value(body),
            Event::Continued(body) => serde_json::to_value(body),
            Event::Output(body) => serde_json::to_value(body),
            Event::Thread(body) => serde_json::to_value(body),
            Event::Breakpoint(body) => serde_json::to_value(body),
            Event::Exited(body) => serde_json::to_value(body),
            Event::Question(body) => serde_json::to_value(body),
        };
        body.ok()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoppedEvent {
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub thread_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub all_threads_stopped: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hit_breakpoint_ids: Vec<i64>,
    /// A thread stopped again where it was (going back in time on another
    /// thread): the client keeps its focus where it is.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub preserve_focus_hint: bool,
}

/// A thread runs on that the request resuming it did not name.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinuedEvent {
    pub thread_id: i64,
    pub all_threads_continued: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputEvent {
    pub category: String,
    pub output: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<i64>,
}

/// A parallel branch started or exited.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadEvent {
    /// `started` or `exited`.
    pub reason: &'static str,
    pub thread_id: i64,
}

/// A breakpoint's state changed (the program was loaded again).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BreakpointEvent {
    pub reason: &'static str,
    pub breakpoint: Breakpoint,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExitedEvent {
    pub exit_code: i64,
}

/// `streetraceQuestion`: `question` is what thread `threadId` waits for an
/// answer to (`streetraceAnswer`), or `null` once it no longer waits.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionEvent {
    pub thread_id: i64,
    pub question: Option<String>,
}
