//! Time travel and forks: `GET /v1/runs/{id}/at/{seq}` answers a [`Moment`],
//! `POST /v1/runs/{id}/fork` takes a [`ForkRequest`] and answers [`Forked`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Location, RunStatus};

/// A run as it was at one of its events, found by replaying its journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Moment {
    pub run: String,
    /// The event's `seq`.
    pub at: u64,
    /// The event's type.
    pub event: String,
    /// `running` before the run's last event; at it, the run's status (a
    /// `run_finished` in the middle of the events, where a run paused and
    /// went on, is `paused`).
    pub status: RunStatus,
    /// Where the replay stopped; none when the run had no step after the event.
    pub point: Option<StepAt>,
    /// Each live thread, in the order threads started.
    pub scopes: Vec<ThreadScope>,
    /// The work directory then.
    pub files: WorkFiles,
}

/// A thread's `n`-th step (each statement, model call, model reply and tool call is one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepAt {
    /// The thread, named as the events' paths name it: `main`, or `branch:N`.
    pub thread: String,
    pub n: u64,
    /// `statement`, `model_call`, `model_reply` or `tool_call`.
    pub kind: String,
}

/// One thread's variables (every flow of a thread shares them) and frames.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadScope {
    /// `main`, or `branch:N` as the events' paths name the thread.
    pub thread: String,
    /// Outermost first.
    pub frames: Vec<Frame>,
    pub variables: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Frame {
    pub kind: FrameKind,
    pub name: String,
    pub location: Option<Location>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FrameKind {
    Flow,
    Agent,
    Handler,
}

/// A work directory, bounded: at most 500 entries (the rest counted in
/// `omitted`), each UTF-8 file's text up to 64 KiB, 1 MiB in all.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkFiles {
    /// Sorted by path.
    pub entries: Vec<FileEntry>,
    pub omitted: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileEntry {
    /// Relative to the work directory, `/`-separated.
    pub path: String,
    pub kind: FileKind,
    pub size: u64,
    /// The content, when it is UTF-8 and within the bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The text is the first 64 KiB only (cut at a character).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// Symbolic links are listed, never followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    File,
    Dir,
    Symlink,
}

/// `POST /v1/runs/{id}/fork`: a new run, in a new session, that replays the
/// run up to the first step after event `at` and goes live there.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkRequest {
    pub at: u64,
    /// The model's answer instead of the recorded one (only at a
    /// `model_request` or `model_response` event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// Variables given new values at the fork's step; each must exist there.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub set: Map<String, Value>,
}

/// `POST /v1/runs/{id}/fork`'s answer (202): the fork, queued.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Forked {
    pub id: String,
    pub status: RunStatus,
    pub session: String,
    pub forked_from: ForkedFrom,
}

/// What a fork was forked from: the run, the event, and what it was given there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ForkedFrom {
    pub run: String,
    /// The event of the original the fork went live after.
    pub at: u64,
    /// The model's reply it was given instead of the recorded one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// The variables it was given new values, with those values.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub set: Map<String, Value>,
}
