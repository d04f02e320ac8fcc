// The page of a Try (see tryItem.ts): the outcome, and a form to type the
// item's inputs and try again, whose script posts them back. Apart from
// `vscode` so that unit tests render it and read its messages.

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
  parts.push('<p><a href="command:streetrace.saveTryCase">Save as eval case</a></p>');
  return parts.join('\n');
}

/** An input the page offers to type: a variable the item reads. */
export interface Field {
  name: string;
  /** What the field starts with: the inputs file's value (JSON when it is not text), else empty. */
  value: string;
  /** The inputs file has the variable. */
  inFile: boolean;
  /** The file's value is not text (a number, a list, a map): typing over it saves text. */
  notText: boolean;
  /** `sr try` stopped because the variable was missing. */
  missing: boolean;
}

/**
 * The fields for the variables `reads`, started from `values` (the inputs
 * file's, as the server read them), those named in `missing` marked.
 */
export function fields(reads: string[], values: Record<string, unknown>, missing: string[]): Field[] {
  return reads.map((name) => {
    const inFile = Object.prototype.hasOwnProperty.call(values, name);
    const given = inFile ? values[name] : undefined;
    const notText = inFile && typeof given !== 'string';
    const value = typeof given === 'string' ? given : given === undefined || given === null ? '' : JSON.stringify(given);
    return { name, value, inFile, notText, missing: missing.includes(name) };
  });
}

/** The variables `sr try` said it lacks: its `missing input 'x'` lines, and an agent's missing message. */
export function missingInputs(stderr: string): string[] {
  const missing = [...stderr.matchAll(/missing input '([^']+)'/g)].map((m) => m[1]);
  if (/needs a message: give --prompt TEXT or `input_prompt:`/.test(stderr)) {
    missing.push('input_prompt');
  }
  return missing;
}

/** Posts the typed values when the form is submitted; the only script the page runs. */
export const FORM_SCRIPT = `
const vscode = acquireVsCodeApi();
const form = document.getElementById('inputs');
form.addEventListener('submit', (event) => {
  event.preventDefault();
  // No prototype: a variable named __proto__ is a key like any other.
  const values = Object.create(null);
  for (const field of form.querySelectorAll('textarea')) values[field.name] = field.value;
  form.querySelector('button').disabled = true;
  vscode.postMessage({ type: 'try', values });
});
`;

/** The inputs form (escaped): one text area per field, missing ones marked, and the button that tries again. */
export function form(inputs: Field[], inputsError?: string): string {
  const parts = ['<h3>inputs</h3>'];
  if (inputsError !== undefined) {
    parts.push(`<p class="error">${escapeHtml(inputsError)}</p>`);
  }
  parts.push('<form id="inputs">');
  if (inputs.length === 0) {
    parts.push('<p class="source">It reads no variables.</p>');
  }
  for (const [index, field] of inputs.entries()) {
    const id = `input-${index}`;
    const mark = field.missing ? ' <span class="missing">missing</span>' : '';
    parts.push(`<label for="${id}">${escapeHtml(field.name)}</label>${mark}`);
    // The newline after the tag is the one an HTML parser drops, so a value's own first newline stays.
    const marked = field.missing ? ' class="missing"' : '';
    const name = escapeHtml(field.name);
    parts.push(`<textarea id="${id}" name="${name}" rows="3"${marked}>\n${escapeHtml(field.value)}</textarea>`);
    if (field.notText) {
      parts.push('<p class="source">not text in the inputs file: a change is saved as text</p>');
    }
  }
  parts.push(
    '<p><button type="submit">Try with these inputs</button> <a href="command:streetrace.editTryInputs">Edit the inputs file</a></p>',
  );
  parts.push('</form>');
  return parts.join('\n');
}

/**
 * The values of a message from the page, or undefined unless it is a
 * `try` message whose values are text, each of a variable the page offered.
 */
export function readTry(message: unknown, offered: readonly string[]): Map<string, string> | undefined {
  if (typeof message !== 'object' || message === null || (message as { type?: unknown }).type !== 'try') {
    return undefined;
  }
  const values = (message as { values?: unknown }).values;
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    return undefined;
  }
  const out = new Map<string, string>();
  for (const [name, value] of Object.entries(values)) {
    if (!offered.includes(name) || typeof value !== 'string') {
      return undefined;
    }
    out.set(name, value);
  }
  return out;
}

/** What a Try with `typed` writes to the inputs file: the fields not in it, and those changed. */
export function toWrite(inputs: Field[], typed: ReadonlyMap<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const field of inputs) {
    const value = typed.get(field.name);
    if (value !== undefined && (!field.inFile || value !== field.value)) {
      out.set(field.name, value);
    }
  }
  return out;
}
