//! What a stopped thread shows: its frames and variables copied out of the run, the
//! call it is about to make, and the frames as the client sees them. Shared by the hook,
//! which captures it, and the debugger, which keeps it while the thread is parked.

use serde_json::{Value, json};
use sr_runtime::eval::Vars;
use sr_runtime::hook::{Frame, Step, StepPoint};

use crate::variables::Root;

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
}

impl Snapshot {
    pub fn capture(step: &Step<'_>) -> Snapshot {
        let call = match step.point {
            StepPoint::Statement { .. } => None,
            StepPoint::ModelCall { agent, request } => {
                let mut details = serde_json::to_value(request).unwrap_or_else(|_| json!({}));
                details["caller"] = json!(agent);
                Some(Call { name: format!("model {}", request.model), details })
            }
            StepPoint::ModelStreaming { agent, request, partial } => {
                let mut details = serde_json::to_value(request).unwrap_or_else(|_| json!({}));
                details["caller"] = json!(agent);
                details["reply so far"] = json!(partial);
                Some(Call { name: format!("model {} (replying)", request.model), details })
            }
            StepPoint::ToolCall { tool, args } => {
                Some(Call { name: format!("tool {tool}"), details: json!({"tool": tool, "args": args}) })
            }
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
