//! API v1 of `sr serve` on the wire, written once: every request, answer and
//! event as a serde type. sr-serve's handlers answer with them, `sr eval
//! --server` reads them, the studio's fixture server serves them, and the
//! OpenAPI document ([`openapi::document`]) and the studio's TypeScript types
//! ([`typescript::module`]) are generated from their JSON Schemas, so a shape
//! changed here without regenerating fails the drift tests (`tests/drift.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use sr_runtime::event::{Event, Location, Payload, RunStatus as RunEnd, Usage};
pub use sr_runtime::in_doubt::Question;
pub use sr_runtime::served::RunStatus;

pub mod a2a;
pub mod openapi;
pub mod travel;
pub mod typescript;

/// `GET /healthz` (`ok`) and `GET /readyz` (`ready`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Health {
    pub status: String,
}

/// Every refusal: `{"error": {"code", "message"}}` with the HTTP status that fits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorAnswer {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorDetail {
    /// Stable, for programs: `invalid_request`, `not_found`, `session_busy`, …
    pub code: String,
    /// For a person: what was wrong and, where it helps, what to do.
    pub message: String,
}

/// `GET /v1/workloads`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkloadList {
    pub workloads: Vec<Workload>,
}

/// A workload the server runs, named by its file stem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Workload {
    pub name: String,
    /// The entry a run starts at when it names none (`flow main`), if any.
    pub entry: Option<String>,
    /// Every flow and agent a run may start at.
    pub entries: Vec<EntryPoint>,
    /// What each way of giving a run its input means.
    pub input: InputHelp,
    pub graph: Graph,
    /// What `sr check` warns of in the workload.
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EntryPoint {
    pub name: String,
    pub kind: EntryKind,
    /// How the entry takes its input: `prompt` (the run's message).
    pub input: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    Flow,
    Agent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InputHelp {
    pub prompt: String,
    pub input: String,
}

/// The graph `sr graph` draws: nodes named `KIND NAME` (`agent reviewer`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Graph {
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GraphNode {
    pub id: String,
    /// `agent`, `flow`, `prompt`, `handler`, `remote_agent` or `item`.
    pub kind: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GraphEdge {
    pub from: String,
    pub to: String,
    /// `handler`, `delegate`, `use`, `run_agent`, `run_flow`, `call_llm` or `instruction`.
    pub kind: String,
    /// The `parallel` branch the edge's reference is in: the branches of one block run at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<ParallelBranch>,
    /// A flow's or handler's call: its place among the calls of its flow in source order,
    /// from 0 (a flow makes them one after another, a `parallel` block's branches at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<u32>,
}

/// A branch of a `parallel` block of the edge's flow or handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ParallelBranch {
    /// The block, numbered within its flow or handler.
    pub block: u32,
    /// The branch's place in the block, from 0.
    pub branch: u32,
}

/// A diagnostic at its span: 1-based lines and columns in characters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnostic {
    pub severity: String,
    pub code: String,
    pub message: String,
    pub file: String,
    pub line: u32,
    pub column: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
}

/// `POST /v1/sessions`: a session with this id, or a new UUID.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSession {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// `POST /v1/sessions`' answer (201).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionCreated {
    pub id: String,
}

/// `GET /v1/sessions/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Session {
    pub id: String,
    /// The session's messages across its runs, oldest first, as the runtime stores them.
    pub transcript: Vec<Value>,
    pub runs: Vec<Run>,
}

/// `GET /v1/sessions`: every session, the one active last first (its newest
/// run's submission, or its creation); `?q=` keeps those whose id or a run's
/// workload contains it (any case), `?limit=` sessions per page (default 50,
/// up to 500), `?before=` a page's `next`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionList {
    pub sessions: Vec<SessionSummary>,
    /// The cursor of the next page (`?before=`); none on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionSummary {
    pub id: String,
    /// When it was created (UTC, `YYYY-MM-DDTHH:MM:SS.mmmZ`).
    pub created: String,
    /// All its runs.
    pub runs: u32,
    /// Its newest run, when that was submitted (UTC) and its status; none
    /// for a session with no run yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_started: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status: Option<RunStatus>,
    /// The workloads its runs ran, each once, newest first.
    pub workloads: Vec<String>,
}

/// What a submit does while the session has a run in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnConflict {
    /// Refuse it: 409 `session_busy`.
    #[default]
    Reject,
    /// Queue it after the run in progress.
    Enqueue,
}

/// `POST /v1/runs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// A served workload's name.
    pub workload: String,
    /// The flow or agent to start at; the workload's default without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// The run's message (or give `input`, not both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Any JSON value: the run's message as JSON text (a string as itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// An existing session (`POST /v1/sessions`); a new one without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The model for this run (`openai/gpt-4o`), instead of the workload's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Answer once the run has ended or paused (200 with the run), not at once (202).
    #[serde(default)]
    pub wait: bool,
    #[serde(default)]
    pub on_conflict: OnConflict,
}

/// A run accepted (202): submitted, or answered and queued again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunAccepted {
    pub id: String,
    pub status: RunStatus,
}

/// `GET /v1/runs/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Run {
    pub id: String,
    pub session: String,
    pub workload: String,
    /// The entry the run was asked to start at (none: the workload's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    pub status: RunStatus,
    /// The run's message (`prompt`, or `input` as JSON text) as its
    /// `run_started` event shows it, secrets replaced; none before it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What a run that is `done` returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What a run `in_doubt` asks about the tool call a crash cut off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<Question>,
    /// The run and event a fork (`POST /v1/runs/{id}/fork`) was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<travel::ForkedFrom>,
    /// The OpenTelemetry trace of the run's spans (32 hex digits), one for all
    /// its attempts: only on a server started with `--otlp` (none before the
    /// run is first claimed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// Where the trace is shown: the server's `--trace-url` with `{trace_id}`
    /// replaced (none without a trace id or a `--trace-url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_url: Option<String>,
}

/// `GET /v1/runs`: the newest runs first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunList {
    pub runs: Vec<RunSummary>,
}

/// A run in the list, with when it started and, once it ended, its duration and usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunSummary {
    pub id: String,
    pub session: String,
    pub workload: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    pub status: RunStatus,
    /// UTC, `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub started: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// From the run's `run_finished` event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// From the run's `run_finished` event, when the server has a price for its model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The run and event a fork was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<travel::ForkedFrom>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
}

/// `POST /v1/runs/{id}/cancel`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CancelAnswer {
    pub id: String,
    pub status: CancelStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CancelStatus {
    /// The run was not running: it is cancelled now.
    Cancelled,
    /// The run's task is being stopped; its status becomes `cancelled` then.
    Cancelling,
}

/// `POST /v1/runs/{id}/input`: an answer to `escalate to human` (`text`), or a
/// decision about a tool call in doubt (`decision`: `retry`, `skip` or `fail`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
}
