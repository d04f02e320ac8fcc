// "Preview Prompt": a prompt's body with every `${…}` that is statically
// known resolved (`streetrace.previewPrompt` of the language server), in a
// webview beside the editor that follows the program's changes; the language
// server's "Preview" code lens on every prompt opens it.

import * as vscode from 'vscode';

import { LanguageServer } from './server';
import { LivePanels, escapeHtml, sourceUri } from './webview';

const CSS = `
pre { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); white-space: pre-wrap; }
.unresolved { color: var(--vscode-textLink-foreground); }
`;

export function registerPromptPreview(server: LanguageServer): vscode.Disposable {
  const panels = new LivePanels('streetrace.promptPreview', CSS);
  return vscode.Disposable.from(
    vscode.commands.registerCommand('streetrace.previewPrompt', async (uriArg?: unknown, nameArg?: unknown) => {
      const uri = sourceUri(uriArg);
      if (!uri) {
        void vscode.window.showErrorMessage('Open a StreetRace (.sr) file to preview one of its prompts.');
        return;
      }
      const name = typeof nameArg === 'string' ? nameArg : await choosePrompt(uri);
      if (!name) {
        return;
      }
      await panels.show(`${uri.toString()}#${name}`, `Prompt: ${name}`, async () => {
        const text = await server.execute('streetrace.previewPrompt', [uri.toString(), name]);
        if (typeof text !== 'string') {
          throw new Error(`the server answered ${JSON.stringify(text)} instead of the prompt`);
        }
        return `<p class="source">prompt ${escapeHtml(name)}, \${…} resolved where statically known</p><pre>${highlight(text)}</pre>`;
      });
    }),
  );
}

/** The prompt text, escaped, with what is left of `${…}` marked. */
function highlight(text: string): string {
  return escapeHtml(text).replace(/\$\{[^}]*\}/g, (m) => `<span class="unresolved">${m}</span>`);
}

/** The prompts of a document, from the language server's document symbols. */
async function prompts(uri: vscode.Uri): Promise<vscode.DocumentSymbol[]> {
  const symbols = await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined>(
    'vscode.executeDocumentSymbolProvider',
    uri,
  );
  return (symbols ?? []).filter(
    (s): s is vscode.DocumentSymbol => 'selectionRange' in s && s.kind === vscode.SymbolKind.String,
  );
}

/** The prompt under the cursor, else one the user picks. */
async function choosePrompt(uri: vscode.Uri): Promise<string | undefined> {
  const found = await prompts(uri);
  const editor = vscode.window.activeTextEditor;
  const here =
    editor?.document.uri.toString() === uri.toString()
      ? found.find((p) => p.range.contains(editor.selection.active))
      : undefined;
  if (here) {
    return here.name;
  }
  if (found.length === 0) {
    void vscode.window.showErrorMessage('This file has no prompts to preview.');
    return undefined;
  }
  return vscode.window.showQuickPick(
    found.map((p) => p.name),
    { placeHolder: 'Prompt to preview' },
  );
}

