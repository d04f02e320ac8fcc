// Generated from crates/sr-api (API v1's wire types): do not edit. After changing
// a wire type, regenerate with `UPDATE_EXPECT=1 cargo test -p sr-api --test drift`.

export type Event = {
  seq: number;
  invocation_id: string;
  /** Producers, outermost first: `flow:main`, `agent:reviewer`, `branch:2`. */
  path: string[];
} & Payload;

/** How a run ended (or paused): `run_finished`'s `status`. */
export type RunEnd = ("completed" | "failed" | "paused" | "cancelled");

/**
 * Tokens a model call took, or a total of several; the cost in USD when the
 * run has a price table (`sr run --prices`) with a price for the model.
 */
export type Usage = {
  input_tokens: number;
  output_tokens: number;
  cost_usd?: number | null;
};

/** A 1-based position in a source file. */
export type Location = {
  /** Shared with the compiled program: every statement's step carries one. */
  file: string;
  line: number;
  column: number;
};

export type Payload = ({
  type: "run_started";
  workload: string;
  entry: string;
  input: string;
} | {
  type: "run_finished";
  status: RunEnd;
  result?: unknown;
  error?: string | null;
  /** Every model call of the run. */
  usage: Usage;
} | {
  type: "flow_started";
  flow: string;
} | {
  type: "flow_finished";
  flow: string;
  result: unknown;
  error?: string | null;
} | {
  type: "agent_started";
  agent: string;
  model: string;
  input: string;
} | {
  type: "agent_finished";
  agent: string;
  output: unknown;
  /** The agent's model calls, its sub-agents' included. */
  usage: Usage;
  error?: string | null;
} | {
  type: "model_request";
  model: string;
  messages: number;
  tools: string[];
} | {
  type: "text_delta";
  text: string;
} | {
  type: "model_response";
  model: string;
  text: string;
  tool_calls: string[];
  /**
   * Why the model stopped: `stop`, `length`, `tool_calls`, `content_filter`
   * or the provider's own word.
   */
  finish_reason: string;
  usage: Usage;
} | {
  type: "tool_call";
  call_id: string;
  tool: string;
  args: unknown;
} | {
  type: "tool_result";
  call_id: string;
  tool: string;
  result: unknown;
  is_error: boolean;
} | {
  type: "remote_update";
  call_id: string;
  tool: string;
  task_id: string;
  /** The A2A task state, 0.3's spelling (`working`, `completed`, …). */
  state: string;
  text: string;
} | {
  type: "transfer";
  from: string;
  to: string;
} | {
  type: "state_change";
  variable: string;
  value: unknown;
} | {
  type: "log";
  message: string;
} | {
  type: "notify";
  message: string;
} | {
  type: "warning";
  message: string;
} | {
  type: "error";
  message: string;
  location?: (Location | null);
} | {
  type: "code_started";
  step: number;
  code: string;
} | {
  type: "code_output";
  step: number;
  stream: string;
  text: string;
} | {
  type: "code_finished";
  step: number;
  outcome: string;
  is_error: boolean;
  message?: string | null;
} | {
  type: "human_input_requested";
  message: string;
} | {
  type: "tool_in_doubt";
  tool: string;
  args: unknown;
  idempotency_key: string;
} | {
  type: "llm_call";
  prompt_name: string;
  model: string;
  prompt_text: string;
} | {
  type: "llm_response";
  prompt_name: string;
  content: string;
  is_final: boolean;
} | {
  type: "flow_result";
  result: unknown;
} | {
  type: "escalation";
  agent_name: string;
  result: unknown;
  condition_op: string;
  condition_value: string;
} | {
  type: "history_compaction";
  strategy: string;
  original_tokens: number;
  compacted_tokens: number;
  messages_removed: number;
});

/** Every refusal: `{"error": {"code", "message"}}` with the HTTP status that fits. */
export type ErrorAnswer = {
  error: ErrorDetail;
};

export type ErrorDetail = {
  /** Stable, for programs: `invalid_request`, `not_found`, `session_busy`, … */
  code: string;
  /** For a person: what was wrong and, where it helps, what to do. */
  message: string;
};

/** `GET /healthz` (`ok`) and `GET /readyz` (`ready`). */
export type Health = {
  status: string;
};

/** `GET /v1/runs/{id}`. */
export type Run = {
  id: string;
  session: string;
  workload: string;
  /** The entry the run was asked to start at (none: the workload's default). */
  entry?: string | null;
  status: RunStatus;
  /**
   * The run's message (`prompt`, or `input` as JSON text) as its
   * `run_started` event shows it, secrets replaced; none before it started.
   */
  message?: string | null;
  /** What a run that is `done` returned. */
  result?: unknown;
  error?: string | null;
  /** What a run `in_doubt` asks about the tool call a crash cut off. */
  question?: (Question | null);
};

/**
 * Where a served run is: waiting in the queue, running, waiting for a human
 * (`paused`, `in_doubt`), or ended (`done`, `failed`, `cancelled`).
 */
export type RunStatus = ("queued" | "running" | "done" | "failed" | "cancelled" | "paused" | "in_doubt");

/** A call in doubt, as it is put to whoever decides. */
export type Question = {
  tool: string;
  args: unknown;
  /** The key the call was made with, and is made with again on `retry`. */
  idempotency_key: string;
};

/** A run accepted (202): submitted, or answered and queued again. */
export type RunAccepted = {
  id: string;
  status: RunStatus;
};

/** `GET /v1/workloads`. */
export type WorkloadList = {
  workloads: Workload[];
};

/** A workload the server runs, named by its file stem. */
export type Workload = {
  name: string;
  /** The entry a run starts at when it names none (`flow main`), if any. */
  entry?: string | null;
  /** Every flow and agent a run may start at. */
  entries: EntryPoint[];
  /** What each way of giving a run its input means. */
  input: InputHelp;
  graph: Graph;
  /** What `sr check` warns of in the workload. */
  diagnostics: Diagnostic[];
};

export type EntryPoint = {
  name: string;
  kind: EntryKind;
  /** How the entry takes its input: `prompt` (the run's message). */
  input: string;
};

export type EntryKind = "flow" | "agent";

export type InputHelp = {
  prompt: string;
  input: string;
};

/** The graph `sr graph` draws: nodes named `KIND NAME` (`agent reviewer`). */
export type Graph = {
  nodes: GraphNode[];
  edges: GraphEdge[];
};

export type GraphNode = {
  id: string;
  /** `agent`, `flow`, `prompt`, `handler`, `remote_agent` or `item`. */
  kind: string;
  label: string;
};

export type GraphEdge = {
  from: string;
  to: string;
  /** `handler`, `delegate`, `use`, `run_agent`, `run_flow`, `call_llm` or `instruction`. */
  kind: string;
};

/** A diagnostic at its span: 1-based lines and columns in characters. */
export type Diagnostic = {
  severity: string;
  code: string;
  message: string;
  file: string;
  line: number;
  column: number;
  end_line?: number | null;
  end_column?: number | null;
};

/**
 * `GET /v1/sessions`: the sessions of the newest runs (`?limit=` runs, default
 * 500), the session of the newest run first; `?q=` keeps those whose id or a
 * run's workload contains it. A session without runs is not listed.
 */
export type SessionList = {
  sessions: SessionSummary[];
};

export type SessionSummary = {
  id: string;
  /** Its runs among the newest runs read. */
  runs: number;
  /** Its newest run, and when that started (UTC, `YYYY-MM-DDTHH:MM:SS.mmmZ`). */
  last_run: string;
  last_started: string;
  last_status: RunStatus;
  /** The workloads its runs ran, each once, newest first. */
  workloads: string[];
};

/** `POST /v1/sessions`: a session with this id, or a new UUID. */
export type NewSession = {
  id?: string | null;
};

/** `POST /v1/sessions`' answer (201). */
export type SessionCreated = {
  id: string;
};

/** `GET /v1/sessions/{id}`. */
export type Session = {
  id: string;
  /** The session's messages across its runs, oldest first, as the runtime stores them. */
  transcript: unknown[];
  runs: Run[];
};

/** `GET /v1/runs`: the newest runs first. */
export type RunList = {
  runs: RunSummary[];
};

/** A run in the list, with when it started and, once it ended, its duration and usage. */
export type RunSummary = {
  id: string;
  session: string;
  workload: string;
  entry?: string | null;
  status: RunStatus;
  /** UTC, `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
  started: string;
  error?: string | null;
  duration_ms?: number | null;
  /** From the run's `run_finished` event. */
  tokens?: (Tokens | null);
  /** From the run's `run_finished` event, when the server has a price for its model. */
  cost_usd?: number | null;
};

export type Tokens = {
  input: number;
  output: number;
};

/** `POST /v1/runs`. */
export type RunRequest = {
  /** A served workload's name. */
  workload: string;
  /** The flow or agent to start at; the workload's default without it. */
  entry?: string | null;
  /** The run's message (or give `input`, not both). */
  prompt?: string | null;
  /** Any JSON value: the run's message as JSON text (a string as itself). */
  input?: unknown;
  /** An existing session (`POST /v1/sessions`); a new one without it. */
  session?: string | null;
  /** The model for this run (`openai/gpt-4o`), instead of the workload's. */
  model?: string | null;
  /** Answer once the run has ended or paused (200 with the run), not at once (202). */
  wait?: boolean;
  on_conflict?: OnConflict;
};

/** What a submit does while the session has a run in progress. */
export type OnConflict = ("reject" | "enqueue");

/** `POST /v1/runs/{id}/cancel`'s answer. */
export type CancelAnswer = {
  id: string;
  status: CancelStatus;
};

export type CancelStatus = ("cancelled" | "cancelling");

/**
 * `POST /v1/runs/{id}/input`: an answer to `escalate to human` (`text`), or a
 * decision about a tool call in doubt (`decision`: `retry`, `skip` or `fail`).
 */
export type InputRequest = {
  text?: string | null;
  decision?: string | null;
};

/** Every event `type` the runtime emits, in the order `Payload` declares them. */
export const EVENT_KINDS = [
  "run_started",
  "run_finished",
  "flow_started",
  "flow_finished",
  "agent_started",
  "agent_finished",
  "model_request",
  "text_delta",
  "model_response",
  "tool_call",
  "tool_result",
  "remote_update",
  "transfer",
  "state_change",
  "log",
  "notify",
  "warning",
  "error",
  "code_started",
  "code_output",
  "code_finished",
  "human_input_requested",
  "tool_in_doubt",
  "llm_call",
  "llm_response",
  "flow_result",
  "escalation",
  "history_compaction",
] as const;
