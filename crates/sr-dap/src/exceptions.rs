//! Exception breakpoints. The runtime has no hook point for failures, so they
//! are read from its events: a tool result marked as an error, a model request
//! that got no response (the provider failed), an escalation. The thread stops
//! at its next hook point, or after the run when the failure ended it.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;
use sr_runtime::event::{Event, Payload};
use sr_runtime::value::display;

use crate::protocol::ExceptionBreakpointsFilter;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExceptionKind {
    ToolError,
    LlmError,
    Escalation,
}

impl ExceptionKind {
    const ALL: [ExceptionKind; 3] = [ExceptionKind::ToolError, ExceptionKind::LlmError, ExceptionKind::Escalation];

    pub fn id(self) -> &'static str {
        match self {
            ExceptionKind::ToolError => "tool-error",
            ExceptionKind::LlmError => "llm-error",
            ExceptionKind::Escalation => "escalation",
        }
    }

    pub fn from_id(id: &str) -> Option<ExceptionKind> {
        ExceptionKind::ALL.into_iter().find(|k| k.id() == id)
    }

    /// The filters the client offers.
    pub fn filters() -> Vec<ExceptionBreakpointsFilter> {
        let filter = |kind: ExceptionKind, label: &str, description: &str| ExceptionBreakpointsFilter {
            filter: kind.id().to_string(),
            label: label.to_string(),
            description: description.to_string(),
            default: false,
        };
        vec![
            filter(ExceptionKind::ToolError, "Tool errors", "Stop after a tool call returns an error"),
            filter(ExceptionKind::LlmError, "LLM errors", "Stop after a model call fails"),
            filter(ExceptionKind::Escalation, "Escalations", "Stop after an agent escalates or a flow asks a human"),
        ]
    }
}

/// A failure seen in the events, waiting for its thread's next stop.
#[derive(Debug, Clone, PartialEq)]
pub struct Exception {
    pub kind: ExceptionKind,
    pub description: String,
}

/// Failures per thread (runtime thread ids), for the enabled kinds.
#[derive(Debug, Default)]
pub struct Watch {
    pub enabled: BTreeSet<ExceptionKind>,
    pending: HashMap<u32, Exception>,
    /// Threads with a model request and no response yet.
    open_requests: HashMap<u32, String>,
}

impl Watch {
    pub fn clear(&mut self) {
        self.pending.clear();
        self.open_requests.clear();
    }

    pub fn record(&mut self, event: &Event) {
        let mut thread = thread_of(&event.path);
        let exception = match &event.payload {
            Payload::ModelRequest { model, .. } => {
                self.open_requests.insert(thread, model.clone());
                None
            }
            Payload::ModelResponse { .. } => {
                self.open_requests.remove(&thread);
                None
            }
            // The run's failure is reported at its top; the request may be a branch's.
            Payload::Error { message, .. } => self.open_requests.keys().min().copied().map(|failed| {
                self.open_requests.remove(&failed);
                thread = failed;
                (ExceptionKind::LlmError, message.clone())
            }),
            Payload::ToolResult { tool, result, is_error, .. } if tool_failed(result, *is_error) => {
                let why = result.get("error").unwrap_or(result);
                Some((ExceptionKind::ToolError, format!("tool '{tool}' failed: {}", display(why))))
            }
            Payload::Escalation { agent_name, result, condition_op, condition_value } => Some((
                ExceptionKind::Escalation,
                format!("agent '{agent_name}' escalated: {} {condition_op} \"{condition_value}\"", display(result)),
            )),
            Payload::HumanInputRequested { message } => {
                Some((ExceptionKind::Escalation, format!("escalate to human: {message}")))
            }
            _ => None,
        };
        if let Some((kind, description)) = exception
            && self.enabled.contains(&kind)
        {
            self.pending.insert(thread, Exception { kind, description });
        }
    }

    /// The failure a thread met since its last hook point. A request still
    /// open at a hook point failed (a response is always emitted before the
    /// next one); `$error` says why when an `on failure:` block caught it.
    pub fn take(&mut self, thread: u32, error: Option<&Value>) -> Option<Exception> {
        if let Some(model) = self.open_requests.remove(&thread)
            && self.enabled.contains(&ExceptionKind::LlmError)
        {
            let why = error.map(display).unwrap_or_else(|| "no response".to_string());
            return Some(Exception { kind: ExceptionKind::LlmError, description: format!("model {model}: {why}") });
        }
        self.pending.remove(&thread)
    }

    /// After the run: the failure that ended it, if any, and its thread.
    pub fn take_any(&mut self) -> Option<(u32, Exception)> {
        let thread = self.open_requests.keys().chain(self.pending.keys()).min().copied()?;
        self.take(thread, None).map(|e| (thread, e))
    }
}

/// Whether a tool result is a failure: an error result, or a builtin tool's
/// `{"result": "failure", "error": …}` answer.
pub fn tool_failed(result: &Value, is_error: bool) -> bool {
    is_error || result.get("result").and_then(Value::as_str) == Some("failure")
}

/// The runtime thread an event comes from: its innermost `branch:N`.
pub fn thread_of(path: &[String]) -> u32 {
    path.iter().rev().find_map(|segment| segment.strip_prefix("branch:")?.parse().ok()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(path: &[&str], payload: Payload) -> Event {
        Event { seq: 1, invocation_id: "i".into(), path: path.iter().map(|s| s.to_string()).collect(), payload }
    }

    fn watch(kinds: &[ExceptionKind]) -> Watch {
        Watch { enabled: kinds.iter().copied().collect(), ..Watch::default() }
    }

    #[test]
    fn tool_errors_are_pending_on_their_thread_when_enabled() {
        let mut w = watch(&[ExceptionKind::ToolError]);
        let failed =
            Payload::ToolResult { call_id: "c".into(), tool: "t".into(), result: json!("boom"), is_error: true };
        w.record(&event(&["flow:main", "branch:3", "agent:a"], failed.clone()));
        assert_eq!(w.take(0, None), None);
        assert_eq!(
            w.take(3, None),
            Some(Exception { kind: ExceptionKind::ToolError, description: "tool 't' failed: boom".into() })
        );
        assert_eq!(w.take(3, None), None, "taken once");
        let mut off = watch(&[]);
        off.record(&event(&[], failed));
        assert_eq!(off.take(0, None), None);
    }

    #[test]
    fn a_request_without_response_is_an_llm_error() {
        let mut w = watch(&[ExceptionKind::LlmError]);
        let request = Payload::ModelRequest { model: "m".into(), messages: 1, tools: vec![] };
        w.record(&event(&[], request.clone()));
        w.record(&event(
            &[],
            Payload::ModelResponse {
                model: "m".into(),
                text: "ok".into(),
                tool_calls: vec![],
                finish_reason: "stop".into(),
                usage: Default::default(),
            },
        ));
        assert_eq!(w.take(0, None), None);
        w.record(&event(&[], request));
        let e = w.take(0, Some(&json!("model m: 500"))).unwrap();
        assert_eq!((e.kind, e.description.as_str()), (ExceptionKind::LlmError, "model m: model m: 500"));
    }

    #[test]
    fn escalations_and_the_run_ending_failure() {
        let mut w = watch(&[ExceptionKind::Escalation, ExceptionKind::LlmError]);
        w.record(&event(&["branch:2"], Payload::HumanInputRequested { message: "approve?".into() }));
        assert_eq!(w.take_any().map(|(t, e)| (t, e.description)), Some((2, "escalate to human: approve?".into())));
        w.record(&event(&[], Payload::ModelRequest { model: "m".into(), messages: 1, tools: vec![] }));
        w.record(&event(&[], Payload::Error { message: "model m: refused".into(), location: None }));
        assert_eq!(
            w.take_any().map(|(t, e)| (t, e.kind, e.description)),
            Some((0, ExceptionKind::LlmError, "model m: refused".into()))
        );
    }
}
