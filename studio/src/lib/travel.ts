// The fork form's body (`POST /v1/runs/ID/fork`), built from what the user typed, and
// what a fork says of where it came from.

import type { ForkRequest } from "./api";
import type { ForkedFrom } from "./wire";

/** The events whose model reply a fork may replace: the call's request and its response. */
export const REPLY_EVENTS: ReadonlySet<string> = new Set(["model_request", "model_response"]);

/**
 * The fork of event `at`: `reply` replaces the model's reply when not blank; `variable`
 * (when chosen) is set to `value` read as JSON, or as the text itself when it is not JSON.
 */
export function forkBody(at: number, reply: string, variable: string, value: string): ForkRequest {
  const body: ForkRequest = { at };
  if (reply.trim()) body.reply = reply;
  if (variable) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      parsed = value;
    }
    body.set = { [variable]: parsed };
  }
  return body;
}

/**
 * What a fork was given at its fork point, in words: the replaced reply (shortened) and
 * each variable set, or that it went on unchanged.
 */
export function forkChanges(from: ForkedFrom): string {
  const changes: string[] = [];
  if (from.reply != null) {
    const reply = from.reply.length > 80 ? `${from.reply.slice(0, 80)}…` : from.reply;
    changes.push(`the model's reply replaced by “${reply}”`);
  }
  for (const [name, value] of Object.entries(from.set ?? {})) {
    const text = JSON.stringify(value) ?? "null";
    changes.push(`$${name} set to ${text.length > 80 ? `${text.slice(0, 80)}…` : text}`);
  }
  return changes.length ? changes.join("; ") : "nothing replaced";
}

/** The fork form's value box for `variable` at the moment: its value there, as JSON. */
export function prefill(variables: Record<string, unknown>, variable: string): string {
  return variable in variables ? (JSON.stringify(variables[variable]) ?? "") : "";
}

/** What a fork was given, in a few words for the runs list: `reply replaced, $x set`. */
export function forkBrief(from: ForkedFrom): string {
  const changes = [
    ...(from.reply != null ? ["reply replaced"] : []),
    ...Object.keys(from.set ?? {}).map((name) => `$${name} set`),
  ];
  return changes.length ? changes.join(", ") : "nothing replaced";
}
