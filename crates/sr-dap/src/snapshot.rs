//! What a stopped thread shows: its frames and variables copied out of the run, the
//! call it is about to make (a model call's request can be edited before it
//! goes), and the frames as the client sees them. Shared by the hook,
//! which captures it, and the debugger, which keeps it while the thread is parked.

use serde_json::{Value, json};
use sr_runtime::eval::Vars;
use sr_runtime::hook::{Frame, Step, StepPoint};

use crate::variables::{EditError, Root};

/// A stopped thread's state, copied out of the run.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub frames: Vec<Frame>,
    pub vars: Vars,
    /// The model or tool call about to be made.
    pub call: Option<Call>,
}

#[derive(Debug, Clone)]
pub struct Call {
    pub name: String,
    pub details: Value,
    /// What `setVariable` may change: a model call's request before it is
    /// sent, its reply before the agent sees it.
    pub editable: Option<Editable>,
    /// `details` were changed and are what the call sends or gives back.
    pub edited: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Editable {
    Request,
    Reply,
}

/// An edited call, for the run.
#[derive(Debug, Clone)]
pub enum Edit {
    Request(Box<sr_llm::ChatRequest>),
    Reply(Box<sr_llm::ChatResponse>),
}

impl Call {
    /// What `details` make of the call; an error when they would not be a
    /// valid request or reply.
    pub fn parse(kind: Editable, details: &Value) -> Result<Edit, EditError> {
        match kind {
            Editable::Request => serde_json::from_value(details.clone())
                .map(|r| Edit::Request(Box::new(r)))
                .map_err(|e| EditError::InvalidRequest(e.to_string())),
            Editable::Reply => serde_json::from_value(details.clone())
                .map(|r| Edit::Reply(Box::new(r)))
                .map_err(|e| EditError::InvalidReply(e.to_string())),
        }
    }

    /// The edit to hand to the run, if the user made one.
    pub fn edit(&self) -> Option<Edit> {
        let kind = self.editable.filter(|_| self.edited)?;
        Call::parse(kind, &self.details).ok()
    }
}

/// A request as the *Call* scope shows it: every setting present (absent
/// ones as `null`, no tools as `[]`) so that each can be set, and the caller.
fn request_details(agent: &str, request: &sr_llm::ChatRequest) -> Value {
    let mut details = serde_json::to_value(request).unwrap_or_else(|_| json!({}));
    if let Some(fields) = details.as_object_mut() {
        for (key, empty) in [
            ("system", Value::Null),
            ("tools", json!([])),
            ("response_schema", Value::Null),
            ("temperature", Value::Null),
            ("max_tokens", Value::Null),
        ] {
            fields.entry(key).or_insert(empty);
        }
    }
    details["caller"] = json!(agent);
    details
}

impl Snapshot {
    pub fn capture(step: &Step<'_>) -> Snapshot {
        let call = match step.point {
            StepPoint::Statement { .. } => None,
            StepPoint::ModelCall { agent, request } => Some(Call {
                name: format!("model {}", request.model),
                details: request_details(agent, request),
                editable: Some(Editable::Request),
                edited: false,
            }),
            StepPoint::ModelReply { agent, request, response } => {
                let mut details = serde_json::to_value(response).unwrap_or_else(|_| json!({}));
                details["caller"] = json!(agent);
                Some(Call {
                    name: format!("model {} (replied)", request.model),
                    details,
                    editable: Some(Editable::Reply),
                    edited: false,
                })
            }
            StepPoint::ModelStreaming { agent, request, partial } => {
                let mut details = request_details(agent, request);
                details["reply so far"] = json!(partial);
                Some(Call {
                    name: format!("model {} (replying)", request.model),
                    details,
                    editable: None,
                    edited: false,
                })
            }
            StepPoint::ToolCall { tool, args } => Some(Call {
                name: format!("tool {tool}"),
                details: json!({"tool": tool, "args": args}),
                editable: None,
                edited: false,
            }),
        };
        Snapshot { frames: step.frames.to_vec(), vars: step.vars.clone(), call }
    }
}

/// A frame as the client sees it.
#[derive(Debug, Clone)]
pub struct Shown {
    pub id: i64,
    pub name: String,
    pub file: Option<usize>,
    pub line: u32,
    pub column: u32,
    /// A model or tool call, shown above the frame that makes it.
    pub subtle: bool,
    pub scopes: Vec<ScopeSpec>,
}

#[derive(Debug, Clone)]
pub struct ScopeSpec {
    pub name: &'static str,
    pub hint: Option<&'static str>,
    pub root: Root,
}
