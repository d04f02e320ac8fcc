// What "Run" and "Debug" start: the file of a code lens (whose argument is
// `{file, target, entry}`, see crates/sr-lsp/src/handlers.rs) or of the active
// editor, and the message the user gives it.

import * as path from 'path';
import * as vscode from 'vscode';

/** The argument of the server's `streetrace.run` / `streetrace.debug` code lenses. */
export interface Runnable {
  file: string;
  target: string;
  entry: boolean;
}

export interface Workload {
  file: string;
  /** The flow or agent to start, when it is not the entry point. */
  entry?: string;
  /** Where sessions are stored and file tools work: the workspace folder, else the file's directory. */
  cwd: string;
  folder: vscode.WorkspaceFolder | undefined;
}

/**
 * The workload to start, after saving it: a code lens's runnable, a file (from
 * the editor title) or the active editor's; undefined (and the user told why)
 * if there is none.
 */
export async function workload(arg: unknown): Promise<Workload | undefined> {
  const uri = isRunnable(arg) ? vscode.Uri.file(arg.file) : arg instanceof vscode.Uri ? arg : undefined;
  const document = uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
  if (!document || document.languageId !== 'streetrace') {
    void vscode.window.showErrorMessage('Open a StreetRace (.sr) file to run it.');
    return undefined;
  }
  if (document.isDirty && !(await document.save())) {
    return undefined;
  }
  const file = document.uri.fsPath;
  const folder = vscode.workspace.getWorkspaceFolder(document.uri);
  const entry = isRunnable(arg) && !arg.entry ? arg.target : undefined;
  return { file, entry, folder, cwd: folder?.uri.fsPath ?? path.dirname(file) };
}

function isRunnable(arg: unknown): arg is Runnable {
  return typeof arg === 'object' && arg !== null && typeof (arg as Runnable).file === 'string';
}

let lastPrompt = '';

/** Asks for the user's message (`$input_prompt`); undefined if the user cancelled. */
export async function askPrompt(file: string): Promise<string | undefined> {
  const prompt = await vscode.window.showInputBox({
    title: `Run ${path.basename(file)}`,
    prompt: 'The message the workload starts with ($input_prompt)',
    value: lastPrompt,
  });
  if (prompt !== undefined) {
    lastPrompt = prompt;
  }
  return prompt;
}
