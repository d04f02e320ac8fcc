// Where the `sr` and `sr-lsp` binaries are: the settings, else the binary
// bundled in the extension's `bin/`, else `sr` on PATH.

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';

import { executable } from './settings';

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

  /**
   * A path setting (machine-scoped: your user settings'), resolved by
   * `settings.executable`; a relative path in an untrusted workspace is
   * refused with a warning, and the default is used.
   */
  private configured(key: string): string | undefined {
    const value = vscode.workspace.getConfiguration('streetrace').get<string>(key);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const { command, refused } = executable(value, folder, vscode.workspace.isTrusted, os.homedir());
    if (refused) {
      void vscode.window.showWarningMessage(`StreetRace: streetrace.${key} is not used: ${refused}.`);
    }
    return command;
  }

  private bundled(): string | undefined {
    const candidate = path.join(this.extensionPath, 'bin', process.platform === 'win32' ? 'sr.exe' : 'sr');
    return fs.existsSync(candidate) ? candidate : undefined;
  }
}
