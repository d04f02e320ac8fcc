//! Events streamed while steps run, so the runtime can forward them as they happen
//! (the UI never waits for a single final event).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Outcome;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Stdout,
    Stderr,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A model reply (from the coding loop only).
    Reply {
        iteration: u32,
        text: String,
    },
    /// A step starts with this code.
    Code {
        step: u32,
        code: String,
    },
    Output {
        step: u32,
        stream: Stream,
        text: String,
    },
    ToolCall {
        step: u32,
        id: String,
        tool: String,
        args: Value,
    },
    ToolResult {
        step: u32,
        id: String,
        tool: String,
        result: Result<Value, String>,
    },
    /// The sandbox was recreated after a crash or a kill and `replayed` earlier steps
    /// were run again with recorded tool results; `diverged` of them did not repeat.
    Restarted {
        replayed: usize,
        diverged: usize,
    },
    /// The step's end.
    Outcome {
        step: u32,
        outcome: Outcome,
    },
}
