// The client of `sr serve`'s API v1: same origin only, the API key (when the server
// wants one) from this browser's local storage, errors as the server's `{error}`.

import type * as wire from "./wire";

// API v1's shapes are generated from the server's own types (crates/sr-api) into
// wire.ts; these are the names the pages use.
export type RunStatus = wire.RunStatus;
/** `GET /v1/runs/ID`. */
export type Run = wire.Run;
/** A run in `GET /v1/runs`: when it started, how long it took, its tokens and cost. */
export type RunSummary = wire.RunSummary;
export type Entry = wire.EntryPoint;
export type GraphNode = wire.GraphNode;
export type GraphEdge = wire.GraphEdge;
export type Diagnostic = wire.Diagnostic;
export type Workload = wire.Workload;
export type SessionSummary = wire.SessionSummary;

export const TERMINAL: ReadonlySet<string> = new Set<RunStatus>(["done", "failed", "cancelled"]);

/**
 * One event as the page reads it: `wire.Event`'s envelope with its payload's fields
 * loose, since a newer server may send kinds (or a hostile one, shapes) this build
 * does not know, and the timeline shows those too.
 */
export interface RunEvent {
  seq: number;
  invocation_id?: string;
  path: string[];
  type: string;
  [field: string]: unknown;
}

/** A part of a session's message, as the runtime stores it (`wire.Session` leaves the transcript untyped). */
export type Part =
  | { type: "text"; text: string }
  | { type: "tool_call"; id: string; name: string; arguments: unknown }
  | { type: "tool_result"; [field: string]: unknown };

export interface Session extends Omit<wire.Session, "transcript"> {
  /** The session's messages across its runs, oldest first. */
  transcript: { role: string; content: Part[] }[];
}

/** A file of the run's work directory at an event (`text` for small UTF-8 files). */
export type FileEntry = wire.FileEntry;
/** A run as it was at one of its events (`GET /v1/runs/ID/at/SEQ`), from a replay of its journal. */
export type Moment = wire.Moment;
export type ForkRequest = wire.ForkRequest;

const KEY_STORAGE = "sr-studio-api-key";

export function apiKey(): string {
  return localStorage.getItem(KEY_STORAGE) ?? "";
}

export function setApiKey(key: string) {
  if (key) localStorage.setItem(KEY_STORAGE, key);
  else localStorage.removeItem(KEY_STORAGE);
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const key = apiKey();
  return key ? { ...extra, authorization: `Bearer ${key}` } : extra;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { "content-type": "application/json" }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const error = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? String(response.status),
      error?.message ?? (text.slice(0, 200) || response.statusText),
    );
  }
  return json as T;
}

/**
 * What went wrong, for a person: what could not be done, why, and what to do. A
 * network failure says the server is unreachable (never "Failed to fetch"); the
 * server's own messages already name the field at fault.
 */
export function explain(error: unknown, doing: string): string {
  if (error instanceof ApiError) {
    if (error.status === 401) return `Could not ${doing}: the server wants an API key. Enter it above and save it.`;
    return `Could not ${doing}: ${error.message}`;
  }
  if (error instanceof TypeError) {
    return `Could not ${doing}: the server did not answer. Check that \`sr serve\` is still running, then reload.`;
  }
  return `Could not ${doing}: ${String((error as Error)?.message ?? error)}`;
}

export const api = {
  /** Creates session `id` unless it exists. */
  ensureSession: async (id: string) => {
    try {
      await request<wire.SessionCreated>("POST", "/v1/sessions", { id } satisfies wire.NewSession);
    } catch (e) {
      if (!(e instanceof ApiError && e.code === "session_exists")) throw e;
    }
  },
  /** A page of sessions, the one active last first; `before` is the previous page's `next`. */
  sessions: (q: string, before?: string) => {
    const query = new URLSearchParams();
    if (q) query.set("q", q);
    if (before) query.set("before", before);
    return request<wire.SessionList>("GET", `/v1/sessions${query.size ? `?${query}` : ""}`);
  },
  createSession: () => request<wire.SessionCreated>("POST", "/v1/sessions", {} satisfies wire.NewSession),
  workloads: () => request<wire.WorkloadList>("GET", "/v1/workloads").then((answer) => answer.workloads),
  runs: () => request<wire.RunList>("GET", "/v1/runs").then((answer) => answer.runs),
  run: (id: string) => request<Run>("GET", `/v1/runs/${encodeURIComponent(id)}`),
  start: (body: wire.RunRequest) => request<wire.RunAccepted>("POST", "/v1/runs", body),
  input: (id: string, text: string) =>
    request<wire.RunAccepted>("POST", `/v1/runs/${encodeURIComponent(id)}/input`, { text } satisfies wire.InputRequest),
  cancel: (id: string) => request<wire.CancelAnswer>("POST", `/v1/runs/${encodeURIComponent(id)}/cancel`, {}),
  session: (id: string) => request<Session>("GET", `/v1/sessions/${encodeURIComponent(id)}`),
  at: (id: string, seq: number) => request<Moment>("GET", `/v1/runs/${encodeURIComponent(id)}/at/${seq}`),
  fork: (id: string, body: ForkRequest) =>
    request<wire.Forked>("POST", `/v1/runs/${encodeURIComponent(id)}/fork`, body),
};

/**
 * Follows a run's events (Server-Sent Events over `fetch`, so the API key can be sent;
 * lines end in `\n`, as `sr serve` writes them), reconnecting after a dropped connection
 * with `Last-Event-ID`: no gap, no duplicate. Events arrive in batches, one per frame.
 * Returns the function that stops following.
 */
export function followEvents(
  id: string,
  onEvents: (events: RunEvent[]) => void,
  onError: (message: string) => void,
): () => void {
  const controller = new AbortController();
  let last = -1;
  let retry = 500;
  let finished = false;
  // Events are handed over once per animation frame, however many network chunks
  // brought them: a 10,000-event journal is drawn once or twice, not per chunk.
  let pending: RunEvent[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending.length || controller.signal.aborted) return;
    const batch = pending;
    pending = [];
    onEvents(batch);
  };
  const flushSoon = () => {
    if (scheduled || !pending.length) return;
    scheduled = true;
    requestAnimationFrame(flush);
  };
  const loop = async () => {
    while (!controller.signal.aborted) {
      try {
        const extra: Record<string, string> = { accept: "text/event-stream" };
        if (last >= 0) extra["last-event-id"] = String(last);
        const response = await fetch(`/v1/runs/${encodeURIComponent(id)}/events`, {
          headers: headers(extra),
          signal: controller.signal,
        });
        if (!response.ok || !response.body) {
          const text = await response.text();
          let message = `${response.status} ${response.statusText}`;
          try {
            message = JSON.parse(text).error.message ?? message;
          } catch {
            /* not the server's JSON error */
          }
          onError(message);
          if (response.status >= 400 && response.status < 500) return;
        } else {
          retry = 500;
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += value;
            let start = 0;
            let end: number;
            while ((end = buffer.indexOf("\n\n", start)) >= 0) {
              const event = parseBlock(buffer.slice(start, end));
              start = end + 2;
              if (event && event.seq > last) {
                last = event.seq;
                // A run paused for a human ends with `run_finished` too, and goes on.
                finished ||= event.type === "run_finished" && event.status !== "paused";
                pending.push(event);
              }
            }
            buffer = buffer.slice(start);
            flushSoon();
          }
          // The server ends the stream after a run's last event; a paused run's
          // stream stays open, so an end before `run_finished` is a dropped connection.
          if (finished) return;
        }
      } catch (error) {
        if (controller.signal.aborted) return;
        onError(error instanceof TypeError ? "the server did not answer" : String(error));
      }
      await new Promise((resolve) => setTimeout(resolve, retry));
      retry = Math.min(retry * 2, 10_000);
    }
  };
  void loop();
  return () => controller.abort();
}

function parseBlock(block: string): RunEvent | undefined {
  let data = "";
  let id: string | undefined;
  for (const line of block.split("\n")) {
    if (line.startsWith("data:")) data += (data ? "\n" : "") + line.slice(5).replace(/^ /, "");
    else if (line.startsWith("id:")) id = line.slice(3).trim();
  }
  if (!data) return undefined;
  try {
    const event = JSON.parse(data) as RunEvent;
    if (typeof event.seq !== "number" && id !== undefined) event.seq = Number(id);
    if (!Array.isArray(event.path)) event.path = [];
    return event;
  } catch {
    return undefined;
  }
}
