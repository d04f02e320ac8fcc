// Generated from crates/sr-api (API v1's wire types): do not edit. After changing
// a wire type, regenerate with `UPDATE_EXPECT=1 cargo test -p sr-api --test drift`.

export type Event = {
  seq: number;
  invocation_id: string;
  /**
   * Producers, outermost first: `flow:main`, `agent:reviewer`, `branch:2`
   * (a `parallel` branch's thread, named as [`thread_name`] names it).
   */
  path: string[];
  /**
   * When it happened, in milliseconds since the Unix epoch: the run's
   * [`Clock`] gives it, and a run served from a journal shows the recorded
   * run's times (the journal keeps them). None only in events stored
   * before events had times.
   */
  at_ms?: number | null;
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

/** A task: one run, in the context of its session. */
export type Task = {
  /** The run's id. */
  id: string;
  /** The run's session. */
  contextId: string;
  status: TaskStatus;
  /** The run's result, once it is done (when asked for). */
  artifacts?: Artifact[] | null;
  /** The message that started the run (when asked for). */
  history?: Message[] | null;
  /** 0.3: `task`. */
  kind?: string | null;
};

export type TaskStatus = {
  /**
   * 1.0: `TASK_STATE_SUBMITTED`, `…_WORKING`, `…_INPUT_REQUIRED`,
   * `…_COMPLETED`, `…_FAILED`, `…_CANCELED`; 0.3: `submitted`, `working`,
   * `input-required`, `completed`, `failed`, `canceled`.
   */
  state: string;
  /** What a paused run asks, or why a run failed or was cancelled. */
  message?: (Message | null);
};

export type Message = {
  messageId: string;
  /** 1.0: `ROLE_USER`, `ROLE_AGENT`; 0.3: `user`, `agent`. */
  role: string;
  /** Text, data and file parts (a file by URL is refused: -32005). */
  parts: Part[];
  taskId?: string | null;
  contextId?: string | null;
  /** 0.3: `message`. */
  kind?: string | null;
};

/**
 * A text part (`text`), a data part (`data`: any JSON, given to a run as
 * its JSON text) or a file part (1.0: `raw`, `filename`, `mediaType`; 0.3:
 * `file`), whose bytes are base64.
 */
export type Part = {
  text?: string | null;
  data?: unknown;
  /** 1.0's file part: the file's bytes, base64. */
  raw?: string | null;
  /**
   * 1.0's file part: the file's name (a path relative to the run's work
   * directory in an artifact).
   */
  filename?: string | null;
  /** 1.0's data part: `application/json`; a file part's type. */
  mediaType?: string | null;
  /** 0.3's file part's file. */
  file?: (FileContent | null);
  /** 0.3: `text`, `data` or `file`. */
  kind?: string | null;
};

/** 0.3's file: its bytes (base64), name and type. */
export type FileContent = {
  bytes: string;
  name?: string | null;
  mimeType?: string | null;
};

/**
 * A run's result (`result`: one text part for text, one data part for
 * anything else) or the files it wrote (`files`: one file part each).
 */
export type Artifact = {
  /** `result` or `files`. */
  artifactId: string;
  name: string;
  parts: Part[];
  /** `{"schema": …}`: the result's JSON schema, when the program declares one. */
  metadata?: unknown;
};

/** A stream's news of a task's status (1.0 wraps it as `statusUpdate`). */
export type TaskStatusUpdate = {
  taskId: string;
  contextId: string;
  status: TaskStatus;
  /** 0.3: `status-update`. */
  kind?: string | null;
  /** 0.3: whether the stream ends after it. */
  final?: boolean | null;
};

/** A stream's news of a task's result (1.0 wraps it as `artifactUpdate`). */
export type TaskArtifactUpdate = {
  taskId: string;
  contextId: string;
  artifact: Artifact;
  lastChunk: boolean;
  /** 0.3: `artifact-update`. */
  kind?: string | null;
  /** 0.3: `false`. */
  append?: boolean | null;
};

/**
 * 1.0's push notification configuration of a task
 * (`CreateTaskPushNotificationConfig`'s params and answer,
 * `SendMessage`'s `configuration.taskPushNotificationConfig`). The webhook
 * is sent `X-A2A-Notification-Token: token` and `Authorization: SCHEME
 * CREDENTIALS`.
 */
export type TaskPushConfig = {
  taskId?: string | null;
  id?: string | null;
  url: string;
  token?: string | null;
  authentication?: (PushAuthentication | null);
};

/** 1.0: `scheme` and `credentials`; 0.3: `schemes` (the first is used) and `credentials`. */
export type PushAuthentication = {
  scheme?: string | null;
  schemes?: string[] | null;
  credentials?: string | null;
};

/**
 * 0.3's push notification configuration of a task
 * (`tasks/pushNotificationConfig/set`'s params and answer); `message/send`'s
 * `configuration.pushNotificationConfig` is its inner object.
 */
export type TaskPushConfigV03 = {
  taskId: string;
  pushNotificationConfig: TaskPushConfig;
};

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
  /** The run and event a fork (`POST /v1/runs/{id}/fork`) was forked from. */
  forked_from?: (ForkedFrom | null);
  /**
   * The OpenTelemetry trace of the run's spans (32 hex digits), one for all
   * its attempts: only on a server started with `--otlp` (none before the
   * run is first claimed).
   */
  trace_id?: string | null;
  /**
   * Where the trace is shown: the server's `--trace-url` with `{trace_id}`
   * replaced (none without a trace id or a `--trace-url`).
   */
  trace_url?: string | null;
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

/** What a fork was forked from: the run, the event, and what it was given there. */
export type ForkedFrom = {
  run: string;
  /** The event of the original the fork went live after. */
  at: number;
  /** The model's reply it was given instead of the recorded one. */
  reply?: string | null;
  /** The variables it was given new values, with those values. */
  set?: {
    [field: string]: unknown;
  };
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
  /** The `parallel` branch the edge's reference is in: the branches of one block run at once. */
  parallel?: (ParallelBranch | null);
  /**
   * A flow's or handler's call: its place among the calls of its flow in source order,
   * from 0 (a flow makes them one after another, a `parallel` block's branches at once).
   */
  order?: number | null;
};

/** A branch of a `parallel` block of the edge's flow or handler. */
export type ParallelBranch = {
  /** The block, numbered within its flow or handler. */
  block: number;
  /** The branch's place in the block, from 0. */
  branch: number;
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
 * `GET /v1/sessions`: every session, the one active last first (its newest
 * run's submission, or its creation); `?q=` keeps those whose id or a run's
 * workload contains it (any case), `?limit=` sessions per page (default 50,
 * up to 500), `?before=` a page's `next`.
 */
export type SessionList = {
  sessions: SessionSummary[];
  /** The cursor of the next page (`?before=`); none on the last page. */
  next?: string | null;
};

export type SessionSummary = {
  id: string;
  /** When it was created (UTC, `YYYY-MM-DDTHH:MM:SS.mmmZ`). */
  created: string;
  /** All its runs. */
  runs: number;
  /**
   * Its newest run, when that was submitted (UTC) and its status; none
   * for a session with no run yet.
   */
  last_run?: string | null;
  last_started?: string | null;
  last_status?: (RunStatus | null);
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
  /** The run and event a fork was forked from. */
  forked_from?: (ForkedFrom | null);
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

/** A run as it was at one of its events, found by replaying its journal. */
export type Moment = {
  run: string;
  /** The event's `seq`. */
  at: number;
  /** The event's type. */
  event: string;
  /**
   * `running` before the run's last event; at it, the run's status (a
   * `run_finished` in the middle of the events, where a run paused and
   * went on, is `paused`).
   */
  status: RunStatus;
  /** Where the replay stopped; none when the run had no step after the event. */
  point?: (StepAt | null);
  /** Each live thread, in the order threads started. */
  scopes: ThreadScope[];
  /** The work directory then. */
  files: WorkFiles;
};

/** A thread's `n`-th step (each statement, model call, model reply and tool call is one). */
export type StepAt = {
  /** The thread, named as the events' paths name it: `main`, or `branch:N`. */
  thread: string;
  n: number;
  /** `statement`, `model_call`, `model_reply` or `tool_call`. */
  kind: string;
};

/** One thread's variables (every flow of a thread shares them) and frames. */
export type ThreadScope = {
  /** `main`, or `branch:N` as the events' paths name the thread. */
  thread: string;
  /** Outermost first. */
  frames: Frame[];
  variables: {
    [field: string]: unknown;
  };
};

export type Frame = {
  kind: FrameKind;
  name: string;
  location?: (Location | null);
};

export type FrameKind = "flow" | "agent" | "handler";

/**
 * A work directory, bounded: at most 500 entries (the rest counted in
 * `omitted`), each UTF-8 file's text up to 64 KiB, 1 MiB in all.
 */
export type WorkFiles = {
  /** Sorted by path. */
  entries: FileEntry[];
  omitted: number;
};

export type FileEntry = {
  /** Relative to the work directory, `/`-separated. */
  path: string;
  kind: FileKind;
  size: number;
  /** The content, when it is UTF-8 and within the bounds. */
  text?: string | null;
  /** The text is the first 64 KiB only (cut at a character). */
  truncated?: boolean;
};

/** Symbolic links are listed, never followed. */
export type FileKind = "file" | "dir" | "symlink";

/**
 * `POST /v1/runs/{id}/fork`: a new run, in a new session, that replays the
 * run up to the first step after event `at` and goes live there.
 */
export type ForkRequest = {
  at: number;
  /**
   * The model's answer instead of the recorded one (only at a
   * `model_request` or `model_response` event).
   */
  reply?: string | null;
  /** Variables given new values at the fork's step; each must exist there. */
  set?: {
    [field: string]: unknown;
  };
};

/** `POST /v1/runs/{id}/fork`'s answer (202): the fork, queued. */
export type Forked = {
  id: string;
  status: RunStatus;
  session: string;
  forked_from: ForkedFrom;
};

/** A request: one object (no batches), with an id (A2A has no notifications). */
export type RpcRequest = {
  /** `2.0`. */
  jsonrpc: string;
  id: RpcId;
  method: RpcMethod;
  /**
   * The method's parameters: `{message, configuration?, metadata?}` for a
   * send (`metadata.skill` picks the entry), `{id}` for a task's.
   */
  params?: {
    [field: string]: unknown;
  } | null;
};

export type RpcId = (string | number);

/**
 * Every method either version defines. The push notification methods answer
 * -32003 unless the server allows webhook hosts (`sr serve --push-host`);
 * the extended card answers -32007.
 */
export type RpcMethod = "SendMessage" | "SendStreamingMessage" | "GetTask" | "ListTasks" | "CancelTask" | "SubscribeToTask" | "CreateTaskPushNotificationConfig" | "GetTaskPushNotificationConfig" | "ListTaskPushNotificationConfigs" | "DeleteTaskPushNotificationConfig" | "GetExtendedAgentCard" | "message/send" | "message/stream" | "tasks/get" | "tasks/cancel" | "tasks/resubscribe" | "tasks/pushNotificationConfig/set" | "tasks/pushNotificationConfig/get" | "tasks/pushNotificationConfig/list" | "tasks/pushNotificationConfig/delete" | "agent/getAuthenticatedExtendedCard";

/**
 * An answer: HTTP 200 with a `result` or an `error`; a streaming method
 * answers Server-Sent Events whose `data:` is one answer each.
 */
export type RpcAnswer = {
  jsonrpc: string;
  /** The request's id; null when the request could not be read. */
  id: unknown;
} & ({
  result: unknown;
} | {
  error: RpcError;
});

/**
 * Codes: -32700 parse, -32600 invalid request, -32601 no such method,
 * -32602 invalid params, -32603 internal, -32001 no such task, -32002 not
 * cancelable, -32003 push notifications not supported, -32004 unsupported
 * operation, -32005 content type not supported, -32007 no extended card,
 * -32009 version not supported.
 */
export type RpcError = {
  code: number;
  message: string;
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
