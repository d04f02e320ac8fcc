// "Try": the server's Try lens on an agent or a prompt runs `sr try FILE ITEM
// --format json` (the server's `streetrace.try` command line, then
// `streetrace.try.args`) and shows the rendered prompt, the reply and the
// tokens and cost in a webview beside the file, with a form of the variables
// the item reads (the server's `reads`, started from the inputs file's
// values). Trying again with the form writes what was typed to the inputs
// file (`ITEM.inputs.yaml` beside the file, which `sr try` reads) and runs it
// again; a run stopped by missing inputs shows the form with those marked.
// The run is recorded (unless the arguments replay one), so "Save as eval
// case" saves that very run: `sr try … --replay RECORDING --save-case FILE`
// (temporary recordings: `tryRecording.ts`).

import { spawn } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';

import { Binaries } from './binaries';
import { LanguageServer } from './server';
import { runArgs } from './settings';
import { TryRecordings } from './tryRecording';
import { FORM_SCRIPT, Field, Outcome, fields, form, missingInputs, readTry, render, toWrite } from './tryView';
import { escapeHtml, page } from './webview';
import { setInputs } from './yamlInputs';

/** What the server answers for `streetrace.try`. */
interface TryLine {
  command: string;
  args: string[];
  cwd: string;
  inputs: string;
  /** The variables the item reads. */
  reads?: string[];
  /** The inputs file's values of those. */
  values?: Record<string, unknown>;
  /** Why the inputs file could not be read. */
  inputs_error?: string;
}

const CSS = `
pre { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); white-space: pre-wrap; }
h3 { margin-bottom: 4px; }
label { display: block; margin-top: 8px; font-family: var(--vscode-editor-font-family); }
textarea { width: 100%; box-sizing: border-box; font-family: var(--vscode-editor-font-family); color: var(--vscode-input-foreground); background: var(--vscode-input-background); border: 1px solid var(--vscode-input-border, transparent); }
textarea.missing { border-color: var(--vscode-inputValidation-errorBorder); }
span.missing { color: var(--vscode-errorForeground); }
button { color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; padding: 4px 12px; }
`;

/** The last successful Try: its command line and the recording that holds its run. */
let last: { line: TryLine; recording: string } | undefined;

/** What the page shows: the Try's lens (to try again), command line, outcome and form. */
interface Shown {
  lens: unknown;
  line: TryLine;
  /** The outcome, or the failure, as HTML. */
  head: string;
  fields: Field[];
}

export function registerTry(server: LanguageServer, binaries: Binaries): vscode.Disposable {
  let panel: vscode.WebviewPanel | undefined;
  let shown: Shown | undefined;
  let running = false;
  const recordings = new TryRecordings();

  const draw = (error?: string): void => {
    if (!shown) {
      return;
    }
    const title = `Try: ${itemOf(shown.line)}`;
    if (!panel) {
      panel = vscode.window.createWebviewPanel(
        'streetrace.try',
        title,
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        // The page's one script posts the form (checked by `tryAgain`); its
        // two links are command URIs of these commands only.
        {
          enableScripts: true,
          localResourceRoots: [],
          enableCommandUris: ['streetrace.saveTryCase', 'streetrace.editTryInputs'],
        },
      );
      panel.webview.onDidReceiveMessage((message: unknown) => void tryAgain(message));
      panel.onDidDispose(() => (panel = undefined));
    }
    panel.title = title;
    const body = `${shown.head}\n${form(shown.fields, error ?? shown.line.inputs_error)}`;
    panel.webview.html = page(title, CSS, body, FORM_SCRIPT);
  };

  const tryItem = async (lens: unknown): Promise<void> => {
    const line = (await server.execute('streetrace.try', [lens])) as TryLine;
    const inspected = vscode.workspace.getConfiguration('streetrace').inspect<string[]>('try.args') ?? {};
    const extra = runArgs(inspected, vscode.workspace.isTrusted).args;
    const replayAt = extra.indexOf('--replay');
    const recording =
      replayAt >= 0 && extra[replayAt + 1] ? path.resolve(line.cwd, extra[replayAt + 1]) : recordings.fresh();
    const record = replayAt >= 0 ? [] : ['--record', recording];
    const { code, stdout, stderr } = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Trying ${itemOf(line)}` },
      () => sr(binaries, line, [...extra, ...record]),
    );
    const outcome = parse(stdout);
    let head: string;
    let missing: string[] = [];
    if (outcome) {
      recordings.keep(recording);
      last = { line, recording };
      head = render(outcome);
    } else {
      recordings.discard(recording);
      missing = missingInputs(stderr);
      const why = stderr.trim() || `sr try exited ${code}`;
      head = `<h3>${escapeHtml(itemOf(line))}</h3>\n<p class="error">${escapeHtml(why)}</p>`;
    }
    const reads = Array.isArray(line.reads) ? line.reads.filter((name) => typeof name === 'string') : [];
    shown = { lens, line, head, fields: fields(reads, line.values ?? {}, missing) };
    draw();
  };

  /** The page's "Try with these inputs": what was typed, written to the inputs file, then the item tried again. */
  const tryAgain = async (message: unknown): Promise<void> => {
    const typed = shown && readTry(message, shown.fields.map((field) => field.name));
    if (!shown || !typed || running) {
      return;
    }
    running = true;
    try {
      const error = await writeInputs(shown.line.inputs, toWrite(shown.fields, typed));
      if (error !== undefined) {
        draw(error);
        return;
      }
      await tryItem(shown.lens);
    } finally {
      running = false;
    }
  };

  return vscode.Disposable.from(
    { dispose: () => recordings.dispose() },
    vscode.commands.registerCommand('streetrace.try', async (lens: unknown) => {
      // A run calls models and the item's tools: only in a trusted workspace.
      if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage('StreetRace: Try runs only in a trusted workspace.');
        return;
      }
      running = true;
      try {
        await tryItem(lens);
      } finally {
        running = false;
      }
    }),
    vscode.commands.registerCommand('streetrace.saveTryCase', async () => {
      if (!last) {
        void vscode.window.showWarningMessage('StreetRace: no Try has run yet.');
        return;
      }
      const folder = vscode.Uri.file(last.line.cwd);
      const target = await vscode.window.showSaveDialog({
        defaultUri: vscode.Uri.joinPath(folder, 'cases.jsonl'),
        filters: { 'sr eval dataset': ['jsonl', 'yaml', 'yml'] },
        saveLabel: 'Add the case',
      });
      if (!target) {
        return;
      }
      const args = ['--replay', last.recording, '--save-case', target.fsPath];
      const { stdout, stderr } = await sr(binaries, last.line, args);
      const outcome = parse(stdout);
      if (outcome?.saved_case) {
        void vscode.window.showInformationMessage(`StreetRace: saved as case ${outcome.saved_case} in ${target.fsPath}`);
      } else {
        void vscode.window.showErrorMessage(`StreetRace: ${stderr.trim()}`);
      }
    }),
    vscode.commands.registerCommand('streetrace.editTryInputs', async () => {
      if (shown) {
        await openInputs(shown.line.inputs);
      }
    }),
  );
}

/** Runs `sr` with the server's `sr try` arguments and `extra`. */
function sr(binaries: Binaries, line: TryLine, extra: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(binaries.sr(), [...line.args, ...extra], { cwd: line.cwd, env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error) => resolve({ code: null, stdout, stderr: `cannot run sr: ${error.message}` }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function parse(stdout: string): Outcome | undefined {
  try {
    const outcome = JSON.parse(stdout) as Outcome;
    return typeof outcome === 'object' && outcome !== null && 'item' in outcome ? outcome : undefined;
  } catch {
    return undefined;
  }
}

/** Opens the inputs file beside the editor (a new one when there is none). */
async function openInputs(file: string): Promise<void> {
  const uri = vscode.Uri.file(file);
  const exists = await vscode.workspace.fs.stat(uri).then(
    () => true,
    () => false,
  );
  const document = await vscode.workspace.openTextDocument(exists ? uri : uri.with({ scheme: 'untitled' }));
  await vscode.window.showTextDocument(document, vscode.ViewColumn.Beside);
}

/** Sets `values` in the inputs file (see `setInputs`); why not, when it cannot. */
async function writeInputs(file: string, values: ReadonlyMap<string, string>): Promise<string | undefined> {
  if (values.size === 0) {
    return undefined;
  }
  const uri = vscode.Uri.file(file);
  const name = path.basename(file);
  const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === uri.fsPath);
  if (open?.isDirty) {
    return `${name} has unsaved changes: save or revert them, then try again`;
  }
  let text = '';
  try {
    text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch (error) {
    if (!(error instanceof vscode.FileSystemError && error.code === 'FileNotFound')) {
      return `cannot read ${name}: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  try {
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(setInputs(text, values)));
  } catch (error) {
    return `cannot write ${name}: ${error instanceof Error ? error.message : String(error)}`;
  }
  return undefined;
}

/** The item the command line tries, as `prompt greet` (the line says `prompt:greet`). */
function itemOf(line: TryLine): string {
  return line.args[2].replace(':', ' ');
}
