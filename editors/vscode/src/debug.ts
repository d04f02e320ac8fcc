// The `streetrace` debugger: `sr dap` over stdio, a default configuration for
// F5 without a launch.json, and "Debug workload".

import * as path from 'path';
import * as vscode from 'vscode';

import { Binaries } from './binaries';
import { askPrompt, workload } from './workload';

export function registerDebugger(binaries: Binaries): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.debug.registerDebugAdapterDescriptorFactory('streetrace', {
      createDebugAdapterDescriptor: (session) =>
        new vscode.DebugAdapterExecutable(binaries.sr(), ['dap'], { cwd: session.workspaceFolder?.uri.fsPath }),
    }),
    vscode.debug.registerDebugConfigurationProvider('streetrace', { resolveDebugConfiguration }),
  );
}

/** Starts debugging a code lens's workload, a file or the active file. */
export async function debugWorkload(arg?: unknown): Promise<void> {
  const target = await workload(arg);
  if (target) {
    await vscode.debug.startDebugging(target.folder, {
      type: 'streetrace',
      request: 'launch',
      name: `Debug ${path.basename(target.file)}`,
      program: target.file,
      workDir: target.cwd,
      ...(target.entry ? { entry: target.entry } : {}),
    });
  }
}

/** Fills in F5 without a launch.json and asks for a prompt the configuration lacks. */
async function resolveDebugConfiguration(
  _folder: vscode.WorkspaceFolder | undefined,
  config: vscode.DebugConfiguration,
): Promise<vscode.DebugConfiguration | undefined> {
  if (!config.type && !config.request && !config.name) {
    const target = await workload(undefined);
    if (!target) {
      return undefined;
    }
    Object.assign(config, {
      type: 'streetrace',
      request: 'launch',
      name: `Debug ${path.basename(target.file)}`,
      program: target.file,
      workDir: target.cwd,
      stopOnEntry: true,
    });
  }
  if (!config.program) {
    void vscode.window.showErrorMessage('The StreetRace launch configuration needs a "program" (a .sr file).');
    return undefined;
  }
  if (config.prompt === undefined) {
    const prompt = await askPrompt(config.program);
    if (prompt === undefined) {
      return undefined;
    }
    config.prompt = prompt;
  }
  return config;
}
