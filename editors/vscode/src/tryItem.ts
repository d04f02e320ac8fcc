// "Try": the server's Try lens on an agent or a prompt runs `sr try FILE ITEM
// --format json` (the server's `streetrace.try` command line, then
// `streetrace.try.args`) and shows the rendered prompt, the reply and the
// tokens and cost in a webview beside the file. The run is recorded (unless
// the arguments replay one), so "Save as eval case" saves that very run:
// `sr try … --replay RECORDING --save-case FILE` (temporary recordings:
// `tryRecording.ts`). Missing inputs open the inputs file (`ITEM.inputs.yaml`
// beside the file) with a line for each.

import { spawn } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';

import { Binaries } from './binaries';
import { LanguageServer } from './server';
import { runArgs } from './settings';
import { TryRecordings } from './tryRecording';
import { Outcome, render } from './tryView';
import { page } from './webview';

/** What the server answers for `streetrace.try`. */
interface TryLine {
  command: string;
  args: string[];
  cwd: string;
  inputs: string;
}

const CSS = `
pre { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); white-space: pre-wrap; }
h3 { margin-bottom: 4px; }
`;

/** The last Try: its command line and the recording that holds its run. */
let last: { line: TryLine; recording: string } | undefined;

export function registerTry(server: LanguageServer, binaries: Binaries): vscode.Disposable {
  let panel: vscode.WebviewPanel | undefined;
  const recordings = new TryRecordings();
  return vscode.Disposable.from(
    { dispose: () => recordings.dispose() },
    vscode.commands.registerCommand('streetrace.try', async (lens: unknown) => {
      // A run calls models and the item's tools: only in a trusted workspace.
      if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage('StreetRace: Try runs only in a trusted workspace.');
        return;
      }
      const line = (await server.execute('streetrace.try', [lens])) as TryLine;
      const inspected = vscode.workspace.getConfiguration('streetrace').inspect<string[]>('try.args') ?? {};
      const extra = runArgs(inspected, vscode.workspace.isTrusted).args;
      const replayAt = extra.indexOf('--replay');
      const recording =
        replayAt >= 0 && extra[replayAt + 1]
          ? path.resolve(line.cwd, extra[replayAt + 1])
          : recordings.fresh();
      const record = replayAt >= 0 ? [] : ['--record', recording];
      const { code, stdout, stderr } = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Trying ${line.args[2]}` },
        () => sr(binaries, line, [...extra, ...record]),
      );
      const outcome = parse(stdout);
      if (!outcome) {
        recordings.discard(recording);
        const missing = [...stderr.matchAll(/missing input '([^']+)'/g)].map((m) => m[1]);
        void vscode.window.showErrorMessage(`StreetRace: ${stderr.trim() || `sr try exited ${code}`}`);
        if (missing.length > 0) {
          await openInputs(line.inputs, missing);
        }
        return;
      }
      recordings.keep(recording);
      last = { line, recording };
      if (!panel) {
        panel = vscode.window.createWebviewPanel(
          'streetrace.try',
          `Try: ${outcome.item}`,
          { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
          // No scripts: the page's two links are command URIs of these commands only.
          { enableScripts: false, enableCommandUris: ['streetrace.saveTryCase', 'streetrace.editTryInputs'] },
        );
        panel.onDidDispose(() => (panel = undefined));
      }
      panel.title = `Try: ${outcome.item}`;
      panel.webview.html = page(`Try: ${outcome.item}`, CSS, render(outcome));
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
      if (last) {
        await openInputs(last.line.inputs, []);
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

/** Opens the inputs file beside the editor; a new one gets a line `NAME: ` for each missing input. */
async function openInputs(file: string, missing: string[]): Promise<void> {
  const uri = vscode.Uri.file(file);
  const exists = await vscode.workspace.fs.stat(uri).then(
    () => true,
    () => false,
  );
  const document = await vscode.workspace.openTextDocument(exists ? uri : uri.with({ scheme: 'untitled' }));
  const editor = await vscode.window.showTextDocument(document, vscode.ViewColumn.Beside);
  if (!exists && document.getText() === '' && missing.length > 0) {
    await editor.edit((edit) => edit.insert(new vscode.Position(0, 0), missing.map((name) => `${name}: \n`).join('')));
  }
}
