// What the webviews share: the file a command is about, a page with a strict
// Content-Security-Policy (no network; styles, and the Try page's one script,
// only with the page's nonce), refreshed while the .sr files it shows change.

import { randomBytes } from 'crypto';
import * as vscode from 'vscode';

import { escapeHtml } from './html';

/**
 * A complete HTML page around `body` (already escaped), styled by `css`,
 * running `script` when given (in a webview with scripts enabled).
 */
export function page(title: string, css: string, body: string, script?: string): string {
  const nonce = randomBytes(16).toString('base64');
  const scriptSrc = script === undefined ? '' : ` script-src 'nonce-${nonce}';`;
  const scriptTag = script === undefined ? '' : `\n<script nonce="${nonce}">${script}</script>`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${nonce}';${scriptSrc}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 16px; }
.error { color: var(--vscode-errorForeground); white-space: pre-wrap; }
.source { color: var(--vscode-descriptionForeground); }
${css}
</style>
</head>
<body>
${body}${scriptTag}
</body>
</html>`;
}

export { escapeHtml } from './html';

/** A message for a failed server command. */
export function failure(error: unknown): string {
  return `<p class="error">${escapeHtml(error instanceof Error ? error.message : String(error))}</p>`;
}

/**
 * Calls `refresh` once the StreetRace documents have been quiet for 300 ms
 * after a change (an imported file changes what a prompt or graph shows).
 */
export function onStreetRaceChange(refresh: () => void): vscode.Disposable {
  let timer: NodeJS.Timeout | undefined;
  const changed = vscode.workspace.onDidChangeTextDocument((event) => {
    if (event.document.languageId !== 'streetrace' || event.contentChanges.length === 0) {
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(refresh, 300);
  });
  return new vscode.Disposable(() => {
    clearTimeout(timer);
    changed.dispose();
  });
}

/**
 * Webview panels beside the editor, one per key, each showing what `render`
 * gives (a failure as a message) and rendered again while the program changes.
 */
export class LivePanels {
  private readonly panels = new Map<string, vscode.WebviewPanel>();

  constructor(
    private readonly viewType: string,
    private readonly css: string,
  ) {}

  /** Shows the panel of `key`: the open one, else a new one. */
  async show(key: string, title: string, render: () => Promise<string>): Promise<void> {
    const open = this.panels.get(key);
    if (open) {
      open.reveal(vscode.ViewColumn.Beside, true);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      this.viewType,
      title,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: false, localResourceRoots: [] },
    );
    this.panels.set(key, panel);
    const draw = async (): Promise<void> => {
      let body: string;
      try {
        body = await render();
      } catch (error) {
        body = failure(error);
      }
      panel.webview.html = page(title, this.css, body);
    };
    const changes = onStreetRaceChange(() => void draw());
    panel.onDidDispose(() => {
      changes.dispose();
      this.panels.delete(key);
    });
    await draw();
  }
}

/** The file a command is about: its URI argument, else the active StreetRace editor's. */
export function sourceUri(arg: unknown): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) {
    return arg;
  }
  if (typeof arg === 'string') {
    return vscode.Uri.parse(arg);
  }
  const editor = vscode.window.activeTextEditor;
  return editor?.document.languageId === 'streetrace' ? editor.document.uri : undefined;
}
