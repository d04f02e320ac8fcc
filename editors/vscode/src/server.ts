// The language client: starts `sr lsp` (or the configured `sr-lsp`), keeps the
// status bar item in step with it, and warns when the server was built for
// another version of the extension.

import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';

import { Binaries } from './binaries';
import { StatusItem } from './status';

/** The `experimental.streetrace.protocolVersion` this extension speaks. */
const PROTOCOL_VERSION = 1;

/** Server commands the extension registers under the same names. */
const CLIENT_COMMANDS = [
  'streetrace.run',
  'streetrace.debug',
  'streetrace.showGraph',
  'streetrace.previewPrompt',
  'streetrace.try',
];

export class LanguageServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly log = vscode.window.createOutputChannel('StreetRace Language Server');
  private readonly status = new StatusItem();

  constructor(
    private readonly binaries: Binaries,
    private readonly extensionVersion: string,
  ) {}

  async start(): Promise<void> {
    const { command, args } = this.binaries.server();
    if (!Binaries.exists(command)) {
      this.status.set('failed', `${command} not found`);
      void this.reportMissing(command);
      return;
    }
    const serverOptions: ServerOptions = { command, args };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ language: 'streetrace' }],
      // The extension registers these commands itself (running, debugging,
      // webviews): the server must not advertise them, or the client would
      // register them a second time.
      initializationOptions: { streetrace: { ...serverSettings(), clientCommands: CLIENT_COMMANDS } },
      synchronize: { configurationSection: 'streetrace' },
      outputChannel: this.log,
    };
    const client = new LanguageClient('streetrace', 'StreetRace Language Server', serverOptions, clientOptions);
    client.onDidChangeState(({ newState }) => {
      if (newState === State.Starting) {
        this.status.set('starting', `starting ${command} ${args.join(' ')}`.trim());
      } else if (newState === State.Running) {
        const info = client.initializeResult?.serverInfo;
        this.status.set('running', `${info?.name ?? command} ${info?.version ?? ''}`.trim());
      } else {
        this.status.set('stopped', 'stopped');
      }
    });
    this.client = client;
    try {
      await client.start();
    } catch {
      // The client has shown the error and logged it.
      this.status.set('failed', `cannot start ${command}`);
      return;
    }
    this.checkVersion();
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Runs a server command (`workspace/executeCommand`) and returns its result. */
  async execute(command: string, args: unknown[]): Promise<unknown> {
    const client = this.client;
    if (!client?.isRunning()) {
      throw new Error('the StreetRace language server is not running');
    }
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  }

  showLog(): void {
    this.log.show(true);
  }

  async dispose(): Promise<void> {
    await this.stop();
    this.status.dispose();
    this.log.dispose();
  }

  private async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client?.needsStop()) {
      await client.stop();
    }
    await client?.dispose();
  }

  private async reportMissing(command: string): Promise<void> {
    const action = await vscode.window.showErrorMessage(
      `Cannot find \`${command}\` for the StreetRace language server: install \`sr\` on your PATH or set "streetrace.path".`,
      'Open Settings',
      'Show Log',
    );
    if (action === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'streetrace.path');
    } else if (action === 'Show Log') {
      this.showLog();
    }
  }

  private checkVersion(): void {
    const result = this.client?.initializeResult;
    const version = result?.serverInfo?.version;
    const protocol = result?.capabilities.experimental?.streetrace?.protocolVersion;
    const problems: string[] = [];
    if (protocol !== PROTOCOL_VERSION) {
      problems.push(`speaks protocol ${protocol ?? 'unknown'}, the extension ${PROTOCOL_VERSION}`);
    }
    if (version !== this.extensionVersion) {
      problems.push(`is version ${version ?? 'unknown'}, the extension ${this.extensionVersion}`);
    }
    if (problems.length > 0) {
      const message = `The StreetRace language server ${problems.join(' and ')}: some features may not work. Update \`sr\` or the extension.`;
      this.log.appendLine(message);
      void vscode.window.showWarningMessage(message);
    }
  }
}

/** The settings the server reads (see crates/sr-lsp/src/config.rs). */
function serverSettings(): object {
  const config = vscode.workspace.getConfiguration('streetrace');
  return {
    diagnostics: { mode: config.get('diagnostics.mode') },
    debounceMs: config.get('debounceMs'),
    inlayHints: config.get('inlayHints'),
    codeLens: config.get('codeLens'),
  };
}
