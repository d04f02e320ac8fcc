// Journal events as timeline rows: one row per event, except that consecutive
// `text_delta`s of one producer are one row of streamed text.

import type { RunEvent } from "./api";

export interface Row {
  seq: number;
  /** Nesting: how many flows, agents and branches the event is inside. */
  depth: number;
  producer: string;
  type: string;
  summary: string;
  tone: "" | "error" | "warning" | "question" | "state" | "tool";
  event: RunEvent;
  text?: string;
}

export interface Totals {
  input: number;
  output: number;
  cost: number | null;
}

const MAX_SUMMARY = 300;

function short(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? "null";
  return text.length > MAX_SUMMARY ? `${text.slice(0, MAX_SUMMARY)}…` : text;
}

export function summary(event: RunEvent): Pick<Row, "summary" | "tone"> {
  const e = event as Record<string, unknown>;
  switch (event.type) {
    case "run_started":
      return { summary: `${e.workload} ${e.entry}: ${short(e.input)}`, tone: "" };
    case "run_finished":
      return {
        summary: `${e.status}${e.error ? `: ${short(e.error)}` : e.result !== undefined ? ` → ${short(e.result)}` : ""}`,
        tone: e.status === "failed" ? "error" : "",
      };
    case "flow_started":
      return { summary: `flow ${e.flow}`, tone: "" };
    case "flow_finished":
      return { summary: `flow ${e.flow} → ${e.error ? short(e.error) : short(e.result)}`, tone: e.error ? "error" : "" };
    case "agent_started":
      return { summary: `agent ${e.agent} (${e.model}): ${short(e.input)}`, tone: "" };
    case "agent_finished":
      return { summary: `agent ${e.agent} → ${e.error ? short(e.error) : short(e.output)}`, tone: e.error ? "error" : "" };
    case "model_request":
      return { summary: `${e.model}: ${e.messages} messages`, tone: "" };
    case "model_response":
      return { summary: `${e.model}: ${short(e.text)} (${e.finish_reason})`, tone: "" };
    case "tool_call":
      return { summary: `${e.tool}(${short(e.args)})`, tone: "tool" };
    case "tool_result":
      return { summary: `${e.tool} → ${short(e.result)}`, tone: e.is_error ? "error" : "tool" };
    case "tool_in_doubt":
      return { summary: `in doubt: ${e.tool}(${short(e.args)}) was cut off; retry, skip or fail?`, tone: "question" };
    case "remote_update":
      return { summary: `${e.tool} (remote task ${e.state})${e.text ? `: ${short(e.text)}` : ""}`, tone: "tool" };
    case "transfer":
      return { summary: `${e.from} → ${e.to}`, tone: "" };
    case "state_change":
      return { summary: `${e.variable} = ${short(e.value)}`, tone: "state" };
    case "error":
      return { summary: short(e.message), tone: "error" };
    case "warning":
      return { summary: short(e.message), tone: "warning" };
    case "human_input_requested":
      return { summary: short(e.message), tone: "question" };
    case "log":
    case "notify":
      return { summary: short(e.message), tone: "" };
    case "code_started":
      return { summary: `step ${e.step}: ${short(e.code)}`, tone: "" };
    case "code_output":
      return { summary: `${e.stream}: ${short(e.text)}`, tone: e.stream === "stderr" ? "warning" : "" };
    case "code_finished":
      return { summary: `step ${e.step}: ${e.outcome}`, tone: e.is_error ? "error" : "" };
    default: {
      const { seq: _s, invocation_id: _i, path: _p, type: _t, ...rest } = event;
      return { summary: short(rest), tone: "" };
    }
  }
}

/** Appends `events` to `rows` (in place) and returns it. */
export function append(rows: Row[], events: RunEvent[]): Row[] {
  for (const event of events) {
    const producer = event.path.at(-1) ?? "run";
    const last = rows.at(-1);
    if (event.type === "text_delta") {
      const text = String((event as { text?: unknown }).text ?? "");
      if (last && last.type === "text" && last.producer === producer) {
        // A new object: the list redraws a row whose object changed, not one mutated.
        const grown = (last.text ?? "") + text;
        rows[rows.length - 1] = { ...last, text: grown, summary: short(grown) };
        continue;
      }
      rows.push({ seq: event.seq, depth: event.path.length, producer, type: "text", summary: short(text), tone: "", event, text });
      continue;
    }
    rows.push({ seq: event.seq, depth: event.path.length, producer, type: event.type, event, ...summary(event) });
  }
  return rows;
}

/**
 * Tokens and cost of the run's model calls so far: the sum of its model responses, or
 * what its last `run_finished` says where that is more (a run paused for a human ends
 * with one too, so an earlier one is not the total).
 */
export function totals(events: RunEvent[]): Totals {
  type Usage = { input_tokens?: number; output_tokens?: number; cost_usd?: number };
  const sum: Totals = { input: 0, output: 0, cost: null };
  let finished: Usage | undefined;
  for (const event of events) {
    const usage = (event as { usage?: Usage }).usage;
    if (!usage || typeof usage !== "object") continue;
    if (event.type === "run_finished") finished = usage;
    if (event.type !== "model_response") continue;
    sum.input += usage.input_tokens ?? 0;
    sum.output += usage.output_tokens ?? 0;
    if (usage.cost_usd != null) sum.cost = (sum.cost ?? 0) + usage.cost_usd;
  }
  if (finished) {
    sum.input = Math.max(sum.input, finished.input_tokens ?? 0);
    sum.output = Math.max(sum.output, finished.output_tokens ?? 0);
    if (finished.cost_usd != null) sum.cost = Math.max(sum.cost ?? 0, finished.cost_usd);
  }
  return sum;
}

export interface Moment {
  /** Each variable's value after the event, from the `state_change`s up to it. */
  variables: [string, unknown][];
  /** Tokens and cost of the model calls up to the event. */
  usage: Totals;
}

/** The run as it was right after the event `seq`, from its events alone. */
export function momentAt(events: RunEvent[], seq: number): Moment {
  const variables = new Map<string, unknown>();
  const upTo: RunEvent[] = [];
  for (const event of events) {
    if (event.seq > seq) break;
    upTo.push(event);
    if (event.type === "state_change") {
      const { variable, value } = event as { variable?: unknown; value?: unknown };
      variables.set(String(variable), value);
    }
  }
  return { variables: [...variables], usage: totals(upTo) };
}
