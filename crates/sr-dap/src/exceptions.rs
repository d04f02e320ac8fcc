//! Exception breakpoints. The runtime reports failures to the step hook
//! where they happen (a statement that failed, a model call that failed for
//! good, a tool call whose result is an error), so the thread stops there,
//! before anything unwinds. Agents' escalations are read from the events and
//! stop the thread at its next point. A failure nothing handles stops by
//! default (the `uncaught` filter), as does `escalate to human`, which is not
//! a filter: the debugger is the human who answers.

use std::collections::{BTreeSet, HashMap};

use sr_runtime::event::{Event, Payload, thread_of};
use sr_runtime::hook::{Failure, StepPoint};
use sr_runtime::value::display;

use crate::protocol::ExceptionBreakpointsFilter;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExceptionKind {
    /// A failure no `on failure:` block handles: the run ends with it.
    Uncaught,
    /// A failure an `on failure:` block handles.
    Caught,
    ToolError,
    LlmError,
    Escalation,
    /// `escalate to human`: always a stop, answered from the debug console.
    Human,
}

impl ExceptionKind {
    const FILTERS: [ExceptionKind; 5] = [
        ExceptionKind::Uncaught,
        ExceptionKind::Caught,
        ExceptionKind::ToolError,
        ExceptionKind::LlmError,
        ExceptionKind::Escalation,
    ];

    pub fn id(self) -> &'static str {
        match self {
            ExceptionKind::Uncaught => "uncaught",
            ExceptionKind::Caught => "caught",
            ExceptionKind::ToolError => "tool-error",
            ExceptionKind::LlmError => "llm-error",
            ExceptionKind::Escalation => "escalation",
            ExceptionKind::Human => "human",
        }
    }

    /// The kind of a filter the client can set.
    pub fn from_id(id: &str) -> Option<ExceptionKind> {
        ExceptionKind::FILTERS.into_iter().find(|k| k.id() == id)
    }

    /// The filters the client offers.
    pub fn filters() -> Vec<ExceptionBreakpointsFilter> {
        let filter = |kind: ExceptionKind, label: &str, description: &str| ExceptionBreakpointsFilter {
            filter: kind.id().to_string(),
            label: label.to_string(),
            description: description.to_string(),
            default: kind == ExceptionKind::Uncaught,
        };
        vec![
            filter(ExceptionKind::Uncaught, "Uncaught failures", "Stop where a failure nothing handles happens"),
            filter(
                ExceptionKind::Caught,
                "Caught failures",
                "Stop where a failure an `on failure:` block handles happens",
            ),
            filter(ExceptionKind::ToolError, "Tool errors", "Stop at a tool call whose result is an error"),
            filter(ExceptionKind::LlmError, "LLM errors", "Stop at a model call that failed (after its retries)"),
            filter(ExceptionKind::Escalation, "Escalations", "Stop after an agent escalates"),
        ]
    }
}

/// Why a thread stopped on an exception.
#[derive(Debug, Clone, PartialEq)]
pub struct Exception {
    pub kind: ExceptionKind,
    pub description: String,
    /// Nothing handles it: the run ends once the thread goes on.
    pub unhandled: bool,
}

/// The enabled filters, and agents' escalations waiting for their thread's
/// next point (runtime thread ids).
#[derive(Debug)]
pub struct Watch {
    pub enabled: BTreeSet<ExceptionKind>,
    pending: HashMap<u32, Exception>,
}

impl Default for Watch {
    /// Uncaught failures stop until the client says otherwise.
    fn default() -> Watch {
        Watch { enabled: [ExceptionKind::Uncaught].into_iter().collect(), pending: HashMap::new() }
    }
}

impl Watch {
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    pub fn record(&mut self, event: &Event) {
        if let Payload::Escalation { agent_name, result, condition_op, condition_value } = &event.payload
            && self.enabled.contains(&ExceptionKind::Escalation)
        {
            let description =
                format!("agent '{agent_name}' escalated: {} {condition_op} \"{condition_value}\"", display(result));
            let exception = Exception { kind: ExceptionKind::Escalation, description, unhandled: false };
            self.pending.insert(thread_of(&event.path), exception);
        }
    }

    /// The escalation a thread met since its last point.
    pub fn take(&mut self, thread: u32) -> Option<Exception> {
        self.pending.remove(&thread)
    }

    /// Whether a failure reported at `point` stops, and as what.
    pub fn failure(&self, point: &StepPoint<'_>, failure: Failure<'_>) -> Option<Exception> {
        let on = |kind| self.enabled.contains(&kind);
        let unhandled = !failure.caught;
        let (kind, description) = match point {
            StepPoint::ToolCall { tool, .. } if on(ExceptionKind::ToolError) => {
                (ExceptionKind::ToolError, format!("tool '{tool}' failed: {}", failure.message))
            }
            StepPoint::ToolCall { .. } => return None,
            StepPoint::ModelCall { .. } | StepPoint::ModelReply { .. } | StepPoint::ModelStreaming { .. }
                if on(ExceptionKind::LlmError) || unhandled && on(ExceptionKind::Uncaught) =>
            {
                (ExceptionKind::LlmError, failure.message.to_string())
            }
            StepPoint::ModelCall { .. } | StepPoint::ModelReply { .. } | StepPoint::ModelStreaming { .. } => {
                return None;
            }
            StepPoint::Statement { .. } if unhandled && on(ExceptionKind::Uncaught) => {
                (ExceptionKind::Uncaught, failure.message.to_string())
            }
            StepPoint::Statement { .. } if failure.caught && on(ExceptionKind::Caught) => {
                (ExceptionKind::Caught, failure.message.to_string())
            }
            StepPoint::Statement { .. } => return None,
        };
        Some(Exception { kind, description, unhandled })
    }
}

/// Whether a tool result is a failure: an error result, or a builtin tool's
/// `{"result": "failure", "error": …}` answer.
pub fn tool_failed(result: &serde_json::Value, is_error: bool) -> bool {
    is_error || result.get("result").and_then(serde_json::Value::as_str) == Some("failure")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn watch(kinds: &[ExceptionKind]) -> Watch {
        Watch { enabled: kinds.iter().copied().collect(), ..Watch::default() }
    }

    fn kind_at(w: &Watch, point: &StepPoint<'_>, caught: bool) -> Option<ExceptionKind> {
        w.failure(point, Failure { message: "boom", caught }).map(|e| e.kind)
    }

    #[test]
    fn failures_stop_by_filter_and_by_whether_anything_handles_them() {
        let args = json!({});
        let request = sr_llm::ChatRequest::new("m", vec![]);
        let tool = StepPoint::ToolCall { tool: "t", args: &args };
        let model = StepPoint::ModelCall { agent: "a", request: &request };
        let default = Watch::default();
        assert_eq!(kind_at(&default, &tool, true), None, "tool errors are the model's business by default");
        assert_eq!(kind_at(&default, &model, true), None);
        assert_eq!(kind_at(&default, &model, false), Some(ExceptionKind::LlmError), "uncaught");
        let all = watch(&[ExceptionKind::ToolError, ExceptionKind::LlmError, ExceptionKind::Caught]);
        assert_eq!(
            all.failure(&tool, Failure { message: "boom", caught: true }),
            Some(Exception {
                kind: ExceptionKind::ToolError,
                description: "tool 't' failed: boom".into(),
                unhandled: false
            })
        );
        assert_eq!(kind_at(&all, &model, true), Some(ExceptionKind::LlmError));
        assert_eq!(kind_at(&watch(&[]), &model, false), None, "every filter off");
    }

    #[test]
    fn escalations_wait_for_their_thread_and_filters_are_known_by_id() {
        let mut w = watch(&[ExceptionKind::Escalation]);
        let payload = Payload::Escalation {
            agent_name: "a".into(),
            result: json!("help"),
            condition_op: "==".into(),
            condition_value: "help".into(),
        };
        let path = ["flow:main", "branch:3", "agent:a"].map(String::from).to_vec();
        w.record(&Event { seq: 1, invocation_id: "i".into(), path, at_ms: None, payload });
        assert_eq!(w.take(0), None);
        assert_eq!(w.take(3).map(|e| e.description), Some("agent 'a' escalated: help == \"help\"".into()));
        assert_eq!(w.take(3), None, "taken once");
        assert_eq!(ExceptionKind::from_id("human"), None, "not a filter");
        assert_eq!(ExceptionKind::filters().iter().filter(|f| f.default).count(), 1);
    }
}
