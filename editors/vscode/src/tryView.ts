// The page of a Try (see tryItem.ts), apart from `vscode` so that unit tests
// render it.

import { escapeHtml } from './html';

/** `sr try --format json`'s outcome (crates/sr-cli/src/playground.rs). */
export interface Outcome {
  item: string;
  kind: string;
  model: string | null;
  message: string;
  rendered: string | null;
  reply: unknown;
  tool_calls: string[];
  usage: { input_tokens: number; output_tokens: number; cost_usd?: number };
  status: string;
  error: string | null;
  saved_case: string | null;
}

/** The outcome as the page's body (escaped). */
export function render(outcome: Outcome): string {
  const model = outcome.model ? ` (${escapeHtml(outcome.model)})` : '';
  const parts = [`<h3>${escapeHtml(outcome.kind)} ${escapeHtml(outcome.item)}${model}</h3>`];
  if (outcome.kind === 'agent') {
    parts.push(`<p class="source">message: ${escapeHtml(outcome.message)}</p>`);
  }
  if (outcome.rendered !== null) {
    parts.push(`<pre>${escapeHtml(outcome.rendered)}</pre>`);
  }
  if (outcome.tool_calls.length > 0) {
    parts.push(`<p class="source">tool calls: ${escapeHtml(outcome.tool_calls.join(', '))}</p>`);
  }
  parts.push('<h3>reply</h3>');
  const reply = outcome.reply;
  if (reply === null || reply === undefined) {
    parts.push(`<p class="error">${escapeHtml(outcome.error ?? outcome.status)}</p>`);
  } else {
    parts.push(`<pre>${escapeHtml(typeof reply === 'string' ? reply : JSON.stringify(reply, null, 2))}</pre>`);
  }
  const { input_tokens, output_tokens, cost_usd } = outcome.usage;
  const cost = cost_usd === undefined ? '' : `, $${cost_usd.toFixed(6)}`;
  parts.push(`<p class="source">${input_tokens} input + ${output_tokens} output tokens${cost}</p>`);
  parts.push(
    '<p><a href="command:streetrace.saveTryCase">Save as eval case</a> · <a href="command:streetrace.editTryInputs">Edit inputs</a></p>',
  );
  return parts.join('\n');
}
