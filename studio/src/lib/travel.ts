// The fork form's body (`POST /v1/runs/ID/fork`), built from what the user typed.

import type { ForkRequest } from "./api";

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
