// The `streetrace` debugger: `sr dap` over stdio, a default configuration for
// F5 without a launch.json, "Debug workload", "Answer the Run's Question" for a
// run stopped on `escalate to human`, "Run Live from Here" and "Go to a Fork…"
// for the forks going back in time makes.

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
    vscode.commands.registerCommand('streetrace.runLiveFrom', () => runLiveFrom()),
    vscode.commands.registerCommand('streetrace.forks', () => goToFork()),
  );
}

/** The active StreetRace debug session, or undefined with a message. */
function streetraceSession(): vscode.DebugSession | undefined {
  const session = vscode.debug.activeDebugSession;
  if (session?.type !== 'streetrace') {
    void vscode.window.showInformationMessage('No StreetRace run is being debugged.');
    return undefined;
  }
  return session;
}

function showError(error: unknown): void {
  void vscode.window.showErrorMessage(`StreetRace: ${error instanceof Error ? error.message : String(error)}`);
}

/**
 * `streetraceRunLiveFrom`: the thread that stopped last goes live where it
 * is, so that its next model and tool calls are made for real when it
 * resumes (a tool retried after fixing its cause) instead of served from the
 * recording; where the run had gone further, that is a new fork.
 */
async function runLiveFrom(): Promise<void> {
  const session = streetraceSession();
  if (!session) {
    return;
  }
  try {
    const body = (await session.customRequest('streetraceRunLiveFrom', {})) as { threadId: number };
    void vscode.window.showInformationMessage(
      `Thread ${body.threadId} goes live when it resumes: continue or step.`,
    );
  } catch (error) {
    showError(error);
  }
}

/** One fork as `streetraceForks` lists it. */
interface Fork {
  id: number;
  label: string;
  parent?: number;
  current: boolean;
}

/** A quick pick of the run's forks; the one chosen is gone to (`streetraceSwitchFork`). */
async function goToFork(): Promise<void> {
  const session = streetraceSession();
  if (!session) {
    return;
  }
  try {
    const body = (await session.customRequest('streetraceForks', {})) as { forks: Fork[] };
    const items = body.forks.map((fork) => ({
      label: `${fork.current ? '$(check) ' : ''}Fork ${fork.id}`,
      description: fork.label,
      detail: fork.parent === undefined ? undefined : `from fork ${fork.parent}`,
      fork,
    }));
    const choice = await vscode.window.showQuickPick(items, {
      title: 'Go to a fork of the run',
      placeHolder: 'The run stops where the fork parts from the one it is in, with that fork\'s files',
    });
    if (choice && !choice.fork.current) {
      await session.customRequest('streetraceSwitchFork', { id: choice.fork.id });
    }
  } catch (error) {
    showError(error);
  }
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
      showError(error);
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
