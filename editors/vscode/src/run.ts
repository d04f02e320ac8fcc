// "Run workload": `sr run FILE --prompt …` with its live transcript and result
// streamed to an output channel; cancellable from the progress notification.

import { spawn } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';

import { Binaries } from './binaries';
import { runArgs } from './settings';
import { askPrompt, workload } from './workload';

/** `sr run` exit codes (see README.md). */
const OUTCOMES: Record<number, string> = { 0: 'done', 1: 'failed', 2: 'cannot load', 3: 'paused for a human' };

export class Runner implements vscode.Disposable {
  private readonly output = vscode.window.createOutputChannel('StreetRace Run');

  constructor(private readonly binaries: Binaries) {}

  /** Runs a code lens's workload, a file or the active file. */
  async run(arg?: unknown): Promise<void> {
    const target = await workload(arg);
    const prompt = target && (await askPrompt(target.file));
    if (!target || prompt === undefined) {
      return;
    }
    // A workload runs its tool servers' commands: only a trusted workspace's.
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('StreetRace: workloads run only in a trusted workspace.');
      return;
    }
    const sr = this.binaries.sr();
    const inspected = vscode.workspace.getConfiguration('streetrace').inspect<string[]>('run.args') ?? {};
    const { args: extra, dropped } = runArgs(inspected, vscode.workspace.isTrusted);
    if (dropped.length > 0) {
      void vscode.window.showWarningMessage(
        `StreetRace: ${dropped.join(' ')} in the workspace's streetrace.run.args is not used: only your user settings can add it.`,
      );
    }
    const entry = target.entry ? ['--entry', target.entry] : [];
    const args = ['run', target.file, '--prompt', prompt, ...entry, ...extra];
    this.output.clear();
    this.output.show(true);
    this.output.appendLine(`$ ${sr} ${args.map(quote).join(' ')}`);
    await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Running ${path.basename(target.file)}`,
        cancellable: true,
      },
      (_, token) =>
        new Promise<void>((resolve) => {
          const child = spawn(sr, args, { cwd: target.cwd, env: { ...process.env, NO_COLOR: '1' } });
          token.onCancellationRequested(() => child.kill('SIGINT'));
          child.stdout.on('data', (chunk: Buffer) => this.output.append(chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => this.output.append(chunk.toString()));
          child.on('error', (error) => {
            this.output.appendLine(`cannot run ${sr}: ${error.message}`);
            resolve();
          });
          child.on('close', (code, signal) => {
            const outcome = code === null ? `stopped (${signal})` : `exit ${code}: ${OUTCOMES[code] ?? 'error'}`;
            this.output.appendLine(`\n[${outcome}]`);
            resolve();
          });
        }),
    );
  }

  dispose(): void {
    this.output.dispose();
  }
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
