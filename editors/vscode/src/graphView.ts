// "Show Graph": the agents and flows of a file's program and how they call
// each other (`streetrace.showGraph` of the language server, the data of
// `sr graph`), drawn in a webview beside the editor and redrawn as the
// program changes.

import * as path from 'path';
import * as vscode from 'vscode';

import { parseMermaid, renderSvg } from './graphLayout';
import { LanguageServer } from './server';
import { LivePanels, sourceUri } from './webview';

const CSS = `
svg { margin: 8px 0 60px; overflow: visible; }
.node rect, .node polygon { stroke: var(--vscode-foreground); stroke-width: 1.2; fill: var(--vscode-editor-background); }
.node.flow rect { fill: var(--vscode-charts-blue); fill-opacity: 0.25; }
.node.agent rect { fill: var(--vscode-charts-green); fill-opacity: 0.25; }
.node.handler polygon { fill: var(--vscode-charts-orange); fill-opacity: 0.25; }
.node.prompt polygon { fill: var(--vscode-charts-purple); fill-opacity: 0.25; }
.node.entry rect, .node.entry polygon { stroke-width: 3; }
.node text { fill: var(--vscode-foreground); text-anchor: middle; dominant-baseline: central; font-size: 13px; }
.edge path { stroke: var(--vscode-descriptionForeground); stroke-width: 1.2; fill: none; }
.edge.tie path { stroke-dasharray: 4 3; }
.edge text { fill: var(--vscode-descriptionForeground); text-anchor: middle; font-size: 11px; }
.arrow { fill: var(--vscode-descriptionForeground); }
.legend span { margin-right: 12px; }
`;

const LEGEND =
  '<p class="legend source"><span>( ) flow</span><span>[ ] agent</span><span>{ } handler</span><span>/ / prompt</span><span>thick: the entry point</span><span>dashed: a handler of its agent</span></p>';

export function registerGraphView(server: LanguageServer): vscode.Disposable {
  const panels = new LivePanels('streetrace.graph', CSS);
  return vscode.commands.registerCommand('streetrace.showGraph', async (arg?: unknown) => {
    const uri = sourceUri(arg);
    if (!uri) {
      void vscode.window.showErrorMessage('Open a StreetRace (.sr) file to show its graph.');
      return;
    }
    const key = uri.toString();
    await panels.show(key, `Graph: ${path.basename(uri.path)}`, async () => {
      const mermaid = await server.execute('streetrace.showGraph', [key]);
      if (typeof mermaid !== 'string') {
        throw new Error(`the server answered ${JSON.stringify(mermaid)} instead of the graph`);
      }
      return renderSvg(parseMermaid(mermaid)) + LEGEND;
    });
  });
}
