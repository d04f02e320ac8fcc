//! The part of the Debug Adapter Protocol we speak, as plain serde types
//! (<https://microsoft.github.io/debug-adapter-protocol/specification>).
//!
//! Every optional field of the specification is optional here, and unknown
//! fields are ignored, so that any client's dialect deserializes. Arguments
//! are read per command from the request's `arguments` value.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A request from the client.
#[derive(Debug, Clone)]
pub struct Request {
    pub seq: i64,
    pub command: String,
    /// `null` when absent.
    pub arguments: Value,
}

/// Why a message from the client is not a request.
#[derive(Debug, Clone, PartialEq)]
pub enum NotARequest {
    /// Meant as a request but malformed: answered with an error response
    /// (`seq` 0 and `command` empty when the message has no usable one).
    Answer { seq: i64, command: String, message: String },
    /// Nothing that could be answered (not an object, a response or event,
    /// an object without `seq`, `command` or `type`): logged and skipped.
    Skip(String),
}

impl Request {
    /// Reads a client message as a request.
    pub fn from_message(message: Value) -> Result<Request, NotARequest> {
        let Value::Object(mut object) = message else {
            return Err(NotARequest::Skip("a message must be a JSON object".to_string()));
        };
        let kind = object.get("type").and_then(Value::as_str);
        if matches!(kind, Some("response" | "event")) {
            return Err(NotARequest::Skip(format!("a message of type '{}'", kind.unwrap_or_default())));
        }
        let seq = object.get("seq").and_then(Value::as_i64);
        let command = object.get("command").and_then(Value::as_str).map(str::to_string);
        let problem = match (kind, seq, &command) {
            (Some("request"), Some(_), Some(_)) => None,
            (None, None, None) => return Err(NotARequest::Skip("not a DAP message (no type, seq or command)".into())),
            (Some("request") | None, _, None) => Some("a request needs a \"command\" string"),
            (Some("request") | None, None, _) => Some("a request needs an integer \"seq\""),
            _ => Some("a request needs \"type\": \"request\""),
        };
        match problem {
            None => Ok(Request {
                seq: seq.unwrap_or_default(),
                command: command.unwrap_or_default(),
                arguments: object.remove("arguments").unwrap_or(Value::Null),
            }),
            Some(message) => Err(NotARequest::Answer {
                seq: seq.unwrap_or_default(),
                command: command.unwrap_or_default(),
                message: message.to_string(),
            }),
        }
    }
}

/// A message to the client (`seq` is set by the writer).
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    Response(Response),
    Event(Event),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    #[serde(rename = "request_seq")]
    pub request_seq: i64,
    pub success: bool,
    pub command: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    pub event: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
}

impl Event {
    pub fn new(event: &str, body: impl Serialize) -> Event {
        Event { event: event.to_string(), body: serde_json::to_value(body).ok() }
    }

    pub fn bare(event: &str) -> Event {
        Event { event: event.to_string(), body: None }
    }
}

// ---------------------------------------------------------------- arguments

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct InitializeArguments {
    pub client_id: Option<String>,
    pub adapter_id: Option<String>,
    pub lines_start_at1: Option<bool>,
    pub columns_start_at1: Option<bool>,
    pub path_format: Option<String>,
}

/// `launch`: what to run and with which seams.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LaunchArguments {
    /// The `.sr` file (or upstream YAML agent) to run.
    pub program: Option<String>,
    /// The user's message (`$input_prompt`).
    pub prompt: Option<String>,
    /// Model for agents and prompts that name none (`sr run --model`).
    pub model: Option<String>,
    /// Every call goes to this model (`sr run --override-model`).
    pub override_model: Option<String>,
    /// Serve model exchanges and tool results from this recording.
    pub replay: Option<String>,
    /// Directory file tools work in (default: the adapter's current directory).
    pub work_dir: Option<String>,
    pub stop_on_entry: Option<bool>,
    /// Run without the debugger (no breakpoints, logpoints or steps); the output still shows.
    pub no_debug: Option<bool>,
    /// Model turns an agent may take.
    pub max_turns: Option<u32>,
    /// Start at this flow or agent instead of the entry point (`sr run --entry`).
    pub entry: Option<String>,
    /// Let `streetrace.cli.host` tools run commands on the host (`sr run --allow-host-tools`).
    pub allow_host_tools: Option<bool>,
    /// Let coding agents use `backend: unsandboxed` (`sr run --allow-unsandboxed`).
    pub allow_unsandboxed: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RestartArguments {
    /// The launch configuration, possibly edited since the first launch.
    pub arguments: Option<LaunchArguments>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Source {
    pub name: Option<String>,
    pub path: Option<String>,
    pub source_reference: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SetBreakpointsArguments {
    pub source: Source,
    pub breakpoints: Option<Vec<SourceBreakpoint>>,
    /// Deprecated: lines without conditions.
    pub lines: Option<Vec<i64>>,
    pub source_modified: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SourceBreakpoint {
    pub line: i64,
    pub column: Option<i64>,
    pub condition: Option<String>,
    pub hit_condition: Option<String>,
    pub log_message: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SetFunctionBreakpointsArguments {
    pub breakpoints: Vec<FunctionBreakpoint>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FunctionBreakpoint {
    pub name: String,
    pub condition: Option<String>,
    pub hit_condition: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SetExceptionBreakpointsArguments {
    pub filters: Vec<String>,
    pub filter_options: Option<Vec<ExceptionFilterOptions>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExceptionFilterOptions {
    pub filter_id: String,
    pub condition: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BreakpointLocationsArguments {
    pub source: Source,
    pub line: i64,
    pub end_line: Option<i64>,
}

/// `continue`, `next`, `stepIn`, `stepOut`, `pause`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ThreadArguments {
    pub thread_id: Option<i64>,
    pub single_thread: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StackTraceArguments {
    pub thread_id: i64,
    pub start_frame: Option<i64>,
    pub levels: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScopesArguments {
    pub frame_id: i64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VariablesArguments {
    pub variables_reference: i64,
    /// `indexed` or `named`.
    pub filter: Option<String>,
    pub start: Option<i64>,
    pub count: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EvaluateArguments {
    pub expression: String,
    pub frame_id: Option<i64>,
    /// `watch`, `repl`, `hover`, `clipboard`, `variables`.
    pub context: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SetVariableArguments {
    pub variables_reference: i64,
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExceptionInfoArguments {
    pub thread_id: i64,
}

// ---------------------------------------------------------------- bodies

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    pub supports_configuration_done_request: bool,
    pub supports_function_breakpoints: bool,
    pub supports_conditional_breakpoints: bool,
    pub supports_hit_conditional_breakpoints: bool,
    pub supports_evaluate_for_hovers: bool,
    pub exception_breakpoint_filters: Vec<ExceptionBreakpointsFilter>,
    pub supports_set_variable: bool,
    pub supports_restart_request: bool,
    pub supports_exception_info_request: bool,
    pub supports_log_points: bool,
    pub supports_terminate_request: bool,
    pub supports_breakpoint_locations_request: bool,
    pub supports_delayed_stack_trace_loading: bool,
    pub supports_single_thread_execution_requests: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExceptionBreakpointsFilter {
    pub filter: String,
    pub label: String,
    pub description: String,
    pub default: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceBody {
    pub name: String,
    pub path: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Breakpoint {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    pub verified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<i64>,
    /// `pending` (not yet resolvable) or `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BreakpointLocation {
    pub line: i64,
    pub column: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Thread {
    pub id: i64,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StackFrame {
    pub id: i64,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceBody>,
    pub line: i64,
    pub column: i64,
    /// `subtle` for the model and tool calls an agent frame makes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presentation_hint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presentation_hint: Option<String>,
    pub variables_reference: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub named_variables: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_variables: Option<i64>,
    pub expensive: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Variable {
    pub name: String,
    pub value: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub variables_reference: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub named_variables: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_variables: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evaluate_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateResponse {
    pub result: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub variables_reference: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub named_variables: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_variables: Option<i64>,
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

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExceptionInfoResponse {
    pub exception_id: String,
    pub description: String,
    pub break_mode: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(message: Value) -> Result<(i64, String), NotARequest> {
        Request::from_message(message).map(|r| (r.seq, r.command))
    }

    fn answer(seq: i64, command: &str, message: &str) -> Result<(i64, String), NotARequest> {
        Err(NotARequest::Answer { seq, command: command.into(), message: message.into() })
    }

    #[test]
    fn requests_and_what_is_answered_or_skipped() {
        assert_eq!(read(json!({"seq": 1, "type": "request", "command": "threads"})), Ok((1, "threads".into())));
        assert_eq!(
            read(json!({"seq": 2, "command": "threads"})),
            answer(2, "threads", "a request needs \"type\": \"request\"")
        );
        assert_eq!(read(json!({"seq": 3, "type": "request"})), answer(3, "", "a request needs a \"command\" string"));
        assert_eq!(
            read(json!({"type": "request", "command": "x"})),
            answer(0, "x", "a request needs an integer \"seq\"")
        );
        assert_eq!(
            read(json!({"seq": "4", "type": "request", "command": "x"})),
            answer(0, "x", "a request needs an integer \"seq\"")
        );
        assert_eq!(
            read(json!({"seq": 5, "type": "request", "command": 7})),
            answer(5, "", "a request needs a \"command\" string")
        );
        assert_eq!(
            read(json!({"seq": 6, "type": "bogus", "command": "x"})),
            answer(6, "x", "a request needs \"type\": \"request\"")
        );
        for skipped in [
            json!([1]),
            json!("x"),
            json!({}),
            json!({"type": "response", "seq": 1, "command": "x"}),
            json!({"type": "event"}),
        ] {
            assert!(matches!(read(skipped.clone()), Err(NotARequest::Skip(_))), "{skipped}");
        }
    }
}
