// What the extension takes from settings that choose a program to run or
// widen what a run may do, decided without `vscode` so that unit tests can
// call it. A workspace's settings (`.vscode/settings.json`) are the project's,
// and a project can be anyone's: such settings are `machine`-scoped (only your
// user settings set them) or restricted in untrusted workspaces
// (package.json, `capabilities.untrustedWorkspaces`), and what they lead to
// is checked again here.

import * as path from 'path';

/** `sr run` flags that let a workload out of its sandboxes. */
export const OPT_IN_FLAGS = ['--allow-host-tools', '--allow-unsandboxed'];

/** Where a setting's values come from (`WorkspaceConfiguration.inspect`). */
export interface Inspected<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/**
 * The program a path setting names, or undefined to use the default: `~/`
 * is the home directory; a bare name is looked up on PATH; a relative path
 * is taken from the workspace folder, and only in a trusted workspace (a
 * program the project ships is the project's code).
 */
export function executable(
  value: string | undefined,
  folder: string | undefined,
  trusted: boolean,
  home: string,
): { command?: string; refused?: string } {
  const trimmed = value?.trim();
  if (!trimmed) {
    return {};
  }
  const expanded = trimmed.startsWith('~/') ? path.join(home, trimmed.slice(2)) : trimmed;
  if (!expanded.includes(path.sep) || path.isAbsolute(expanded)) {
    return { command: expanded };
  }
  if (!trusted || !folder) {
    return { refused: `${trimmed} is relative to the workspace, which is not trusted` };
  }
  return { command: path.join(folder, expanded) };
}

/**
 * The extra `sr run` arguments: the user's, or a trusted workspace's without
 * the opt-in flags (those only your user settings can add), and the flags
 * left out.
 */
export function runArgs(inspected: Inspected<string[]>, trusted: boolean): { args: string[]; dropped: string[] } {
  const workspace = inspected.workspaceFolderValue ?? inspected.workspaceValue;
  if (!trusted || workspace === undefined) {
    return { args: inspected.globalValue ?? [], dropped: [] };
  }
  const optIn = (arg: string) => OPT_IN_FLAGS.some((flag) => arg === flag || arg.startsWith(`${flag}=`));
  return { args: workspace.filter((arg) => !optIn(arg)), dropped: workspace.filter(optIn) };
}
