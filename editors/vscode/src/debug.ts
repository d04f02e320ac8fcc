// The `streetrace` debugger: `sr dap` over stdio, a default configuration for
// F5 without a launch.json, "Debug workload", and "Answer the Run's Question"
// for a run stopped on `escalate to human`.

import * as path from 'path';
import * as vscode from 'vscode';

import { Binaries } from './binaries';
import { askPrompt, workload } from './workload';

export function registerDebugger(binaries: Binaries): vscode.Disposable {
  const questions = new Questions();
  return vscode.Disposable.from(
    vscode.debug.registerDebugAdapterDescriptorFactory('streetrace', {
      createDebugAdapterDescriptor: (session) =>
        new vscode.DebugAdapterExecutable(binaries.sr(), ['dap'], { cwd: session.workspaceFolder?.uri.fsPath }),
    }),
    vscode.debug.registerDebugConfigurationProvider('streetrace', { resolveDebugConfiguration }),
    vscode.debug.onDidReceiveDebugSessionCustomEvent((event) => questions.heard(event)),
    vscode.debug.onDidTerminateDebugSession((session) => questions.forget(session)),
    vscode.commands.registerCommand('streetrace.answer', () => questions.answer()),
  );
}

/** A thread waiting for an answer to `escalate to human`. */
interface Question {
  session: vscode.DebugSession;
  threadId: number;
  question: string;
}

/**
 * The questions debugged runs wait on, from the adapter's `streetraceQuestion`
 * events; `streetrace.questionPending` shows the Answer button while there is one.
 * Answering is the adapter's `streetraceAnswer` request: evaluating an
 * expression in the debug console never answers.
 */
class Questions {
  private pending: Question[] = [];

  heard(event: vscode.DebugSessionCustomEvent): void {
    if (event.session.type !== 'streetrace' || event.event !== 'streetraceQuestion') {
      return;
    }
    const { threadId, question } = event.body as { threadId: number; question: string | null };
    this.pending = this.pending.filter((q) => q.session.id !== event.session.id || q.threadId !== threadId);
    if (question !== null) {
      this.pending.push({ session: event.session, threadId, question });
      void vscode.window.showInformationMessage(`The run asks: ${question}`, 'Answer…').then((choice) => {
        if (choice) {
          void this.answer({ session: event.session, threadId, question });
        }
      });
    }
    this.update();
  }

  forget(session: vscode.DebugSession): void {
    this.pending = this.pending.filter((q) => q.session.id !== session.id);
    this.update();
  }

  /** Asks for the answer to `question` (else the active session's first) and sends it. */
  async answer(question?: Question): Promise<void> {
    const active = vscode.debug.activeDebugSession;
    const target = question ?? this.pending.find((q) => q.session.id === active?.id) ?? this.pending[0];
    if (!target) {
      void vscode.window.showInformationMessage('No StreetRace run is waiting for an answer.');
      return;
    }
    const text = await vscode.window.showInputBox({
      title: 'Answer the run',
      prompt: target.question,
      placeHolder: 'The answer, given to the run at the next continue',
    });
    if (text === undefined) {
      return;
    }
    try {
      await target.session.customRequest('streetraceAnswer', { threadId: target.threadId, text });
    } catch (error) {
      void vscode.window.showErrorMessage(`StreetRace: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private update(): void {
    void vscode.commands.executeCommand('setContext', 'streetrace.questionPending', this.pending.length > 0);
  }
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
