// A run's trace from its events' times (`at_ms`): each agent run, model call and tool
// call as a span from its start event to its end event, with its duration and, for a
// model call, its tokens and cost.

import type { RunEvent } from "./api";

export interface Span {
  kind: "agent" | "model" | "tool";
  label: string;
  /** Where it ran: its producer's path. */
  path: string[];
  /** The `seq` of the event that started it (its row in the timeline). */
  seq: number;
  /** Milliseconds since the run's first event. */
  start: number;
  /** Undefined while it has not ended. */
  duration?: number;
  tokens?: { input: number; output: number };
  cost?: number;
}

type Fields = Record<string, unknown>;

/** What opens a span, and what closes the span it opened. */
const OPENS: Record<string, { kind: Span["kind"]; closedBy: string; key: (e: Fields) => string; label: (e: Fields) => string }> = {
  agent_started: { kind: "agent", closedBy: "agent_finished", key: (e) => String(e.agent), label: (e) => `agent ${e.agent}` },
  model_request: { kind: "model", closedBy: "model_response", key: () => "", label: (e) => `model ${e.model}` },
  tool_call: { kind: "tool", closedBy: "tool_result", key: (e) => String(e.call_id), label: (e) => `tool ${e.tool}` },
};

const CLOSES: Record<string, { opener: string; key: (e: Fields) => string }> = {
  agent_finished: { opener: "agent_started", key: (e) => String(e.agent) },
  model_response: { opener: "model_request", key: () => "" },
  tool_result: { opener: "tool_call", key: (e) => String(e.call_id) },
};

/** The spans of `events` in the order they started; events without a time are left out. */
export function spans(events: RunEvent[]): Span[] {
  const first = events.find((e) => typeof e.at_ms === "number")?.at_ms as number | undefined;
  if (first === undefined) return [];
  const out: Span[] = [];
  const open = new Map<string, Span>();
  const where = (event: RunEvent, opener: string, key: string) => `${event.path.join("/")}|${opener}|${key}`;
  for (const event of events) {
    const at = event.at_ms;
    if (typeof at !== "number") continue;
    const fields = event as Fields;
    const opens = OPENS[event.type];
    if (opens) {
      const span: Span = { kind: opens.kind, label: opens.label(fields), path: event.path, seq: event.seq, start: at - first };
      open.set(where(event, event.type, opens.key(fields)), span);
      out.push(span);
      continue;
    }
    const closes = CLOSES[event.type];
    if (!closes) continue;
    const key = where(event, closes.opener, closes.key(fields));
    const span = open.get(key);
    if (!span) continue;
    open.delete(key);
    span.duration = Math.max(0, at - first - span.start);
    const usage = fields.usage as { input_tokens?: number; output_tokens?: number; cost_usd?: number } | undefined;
    if (span.kind !== "tool" && usage && typeof usage === "object") {
      span.tokens = { input: usage.input_tokens ?? 0, output: usage.output_tokens ?? 0 };
      if (typeof usage.cost_usd === "number") span.cost = usage.cost_usd;
    }
  }
  return out;
}

/**
 * The step (model call or tool call) that took longest among those that ended, if any
 * ended: an agent's span holds its steps, so it is never the one to look at first.
 */
export function slowest(all: Span[]): Span | undefined {
  let worst: Span | undefined;
  for (const span of all) {
    if (span.kind === "agent" || span.duration === undefined) continue;
    if (worst?.duration === undefined || span.duration > worst.duration) worst = span;
  }
  return worst;
}
