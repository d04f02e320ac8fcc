// The status bar item showing the language server's state; clicking it shows
// the server's log.

import * as vscode from 'vscode';

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

const ICONS: Record<ServerState, string> = {
  starting: '$(sync~spin)',
  running: '$(check)',
  stopped: '$(circle-slash)',
  failed: '$(error)',
};

export class StatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('streetrace.server', vscode.StatusBarAlignment.Left);

  constructor() {
    this.item.name = 'StreetRace Language Server';
    this.item.command = 'streetrace.showServerLog';
    this.item.show();
  }

  set(state: ServerState, detail: string): void {
    this.item.text = `${ICONS[state]} sr-lsp`;
    this.item.tooltip = `StreetRace language server: ${detail}\nClick to show the log.`;
    this.item.backgroundColor =
      state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
