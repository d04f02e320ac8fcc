// The StreetRace extension: language server, run, debug, syntax tree, graph
// view, prompt preview, Try and the references-count lens's command.

import * as vscode from 'vscode';

import { Binaries } from './binaries';
import { debugWorkload, registerDebugger } from './debug';
import { registerGraphView } from './graphView';
import { registerPromptPreview } from './preview';
import { registerShowReferences } from './references';
import { Runner } from './run';
import { LanguageServer } from './server';
import { registerSyntaxTree } from './syntaxTree';
import { registerTry } from './tryItem';

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const binaries = new Binaries(context.extensionPath);
  const server = new LanguageServer(binaries, context.extension.packageJSON.version);
  const runner = new Runner(binaries);
  context.subscriptions.push(
    server,
    runner,
    vscode.commands.registerCommand('streetrace.restartServer', () => server.restart()),
    vscode.commands.registerCommand('streetrace.showServerLog', () => server.showLog()),
    vscode.commands.registerCommand('streetrace.run', (runnable) => runner.run(runnable)),
    vscode.commands.registerCommand('streetrace.debug', (runnable) => debugWorkload(runnable)),
    registerSyntaxTree(binaries),
    registerDebugger(binaries),
    registerGraphView(server),
    registerPromptPreview(server),
    registerTry(server, binaries),
    registerShowReferences(),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('streetrace.path') || event.affectsConfiguration('streetrace.server.path')) {
        void server.restart();
      }
    }),
  );
  await server.start();
}
