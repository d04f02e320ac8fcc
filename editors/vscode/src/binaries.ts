// Where the `sr` and `sr-lsp` binaries are: the settings, else the binary
// bundled in the extension's `bin/`, else `sr` on PATH.

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';

export interface Command {
  command: string;
  args: string[];
}

export class Binaries {
  constructor(private readonly extensionPath: string) {}

  /** The `sr` binary. */
  sr(): string {
    return this.configured('path') ?? this.bundled() ?? 'sr';
  }

  /** The language server: `streetrace.server.path`, else `sr lsp`. */
  server(): Command {
    const serverPath = this.configured('server.path');
    return serverPath ? { command: serverPath, args: [] } : { command: this.sr(), args: ['lsp'] };
  }

  /** Whether `command` names an existing file, directly or on PATH. */
  static exists(command: string): boolean {
    if (command.includes(path.sep)) {
      return fs.existsSync(command);
    }
    const extensions = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
    return (process.env.PATH ?? '')
      .split(path.delimiter)
      .some((dir) => dir && extensions.some((ext) => fs.existsSync(path.join(dir, command + ext))));
  }

  private configured(key: string): string | undefined {
    const value = vscode.workspace.getConfiguration('streetrace').get<string>(key)?.trim();
    if (!value) {
      return undefined;
    }
    const expanded = value.startsWith('~/') ? path.join(os.homedir(), value.slice(2)) : value;
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    // A bare command name is looked up on PATH; a relative path is taken from the workspace.
    return folder && expanded.includes(path.sep) && !path.isAbsolute(expanded) ? path.join(folder, expanded) : expanded;
  }

  private bundled(): string | undefined {
    const candidate = path.join(this.extensionPath, 'bin', process.platform === 'win32' ? 'sr.exe' : 'sr');
    return fs.existsSync(candidate) ? candidate : undefined;
  }
}
