// The references-count lens's command: the language server sends
// `streetrace.showReferences` with `editor.action.showReferences`' arguments
// as protocol JSON (a URI string, a position, locations), which VS Code's
// command takes only as its own types.

import * as vscode from 'vscode';

interface ProtocolPosition {
  line: number;
  character: number;
}

interface ProtocolLocation {
  uri: string;
  range: { start: ProtocolPosition; end: ProtocolPosition };
}

const position = (p: ProtocolPosition) => new vscode.Position(p.line, p.character);
const location = (l: ProtocolLocation) =>
  new vscode.Location(vscode.Uri.parse(l.uri), new vscode.Range(position(l.range.start), position(l.range.end)));

export function registerShowReferences(): vscode.Disposable {
  return vscode.commands.registerCommand(
    'streetrace.showReferences',
    (uri: string, at: ProtocolPosition, locations: ProtocolLocation[]) =>
      vscode.commands.executeCommand(
        'editor.action.showReferences',
        vscode.Uri.parse(uri),
        position(at),
        locations.map(location),
      ),
  );
}
