// "Show syntax tree": the lossless tree of the current file (`sr dump syntax`)
// in a read-only document beside it, refreshed as the file changes.

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';

import { Binaries } from './binaries';

const SCHEME = 'streetrace-syntax';

export function registerSyntaxTree(binaries: Binaries): vscode.Disposable {
  const provider = new SyntaxTreeProvider(binaries);
  return vscode.Disposable.from(
    provider,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, provider),
    vscode.commands.registerCommand('streetrace.showSyntaxTree', async () => {
      const source = vscode.window.activeTextEditor?.document;
      if (source?.languageId !== 'streetrace') {
        void vscode.window.showErrorMessage('Open a StreetRace (.sr) file to show its syntax tree.');
        return;
      }
      const tree = await vscode.workspace.openTextDocument(treeUri(source.uri));
      await vscode.window.showTextDocument(tree, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
    }),
  );
}

/** The tree document of a source: `streetrace-syntax:/path/file.sr.tree?<source uri>`. */
function treeUri(source: vscode.Uri): vscode.Uri {
  return vscode.Uri.from({ scheme: SCHEME, path: `${source.path}.tree`, query: source.toString() });
}

class SyntaxTreeProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'streetrace-syntax-'));
  private readonly watch = vscode.workspace.onDidChangeTextDocument(({ document }) => {
    const tree = treeUri(document.uri);
    if (vscode.workspace.textDocuments.some((open) => open.uri.toString() === tree.toString())) {
      this.changed.fire(tree);
    }
  });

  constructor(private readonly binaries: Binaries) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const source = vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri.query);
    if (!source) {
      return `${uri.query} is not open.`;
    }
    // `sr dump syntax` reads a file: hand it the editor's text, saved or not.
    const file = path.join(this.scratch, path.basename(source.uri.fsPath) || 'untitled.sr');
    await fs.promises.writeFile(file, source.getText());
    return new Promise((resolve) => {
      execFile(this.binaries.sr(), ['dump', 'syntax', file], { maxBuffer: 64 << 20 }, (error, stdout, stderr) =>
        resolve(error ? `sr dump syntax failed: ${stderr || error.message}` : stdout),
      );
    });
  }

  dispose(): void {
    this.watch.dispose();
    this.changed.dispose();
    fs.rmSync(this.scratch, { recursive: true, force: true });
  }
}
