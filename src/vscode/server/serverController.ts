// The server and the model as VS Code commands: the core's ServerSession (the whole policy) with VS Code's
// progress notifications, prompts and error messages, the lifecycle store and the log channel. What stays here is
// VS Code's own: the settings problems that block a start, the image build's prompt and its building flag.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isCancellation, productionParts, ServerSession, toSessionSettings } from '../../core/session';
import type { ServerHandle } from '../../core/server';
import { blocksStart } from '../../core/settings/settingsParser';
import { SECTION } from '../../core/settings/settingsSchema';
import type { TritonClient } from '../../core/triton';
import { COMMANDS, VSCODE_COMMANDS } from '../commandIds';
import type { SettingsService } from '../config/settingsService';
import { showError } from '../errors/presentError';
import type { Log } from '../log';
import type { LifecycleStore } from '../state/lifecycleStore';
import { withElapsedProgress } from '../util/progress';
import { createSessionUi } from './sessionUi';

export interface ServerPaths {
  /** The packaged triton/ directory (model repository source, Dockerfile). */
  tritonDir: string;
  /** Where the rendered repository lives (global storage): mounted read-only as /models. */
  repositoryDir: string;
}

export class ServerController implements vscode.Disposable {
  private readonly session: ServerSession<TritonClient>;
  private readonly clientEmitter = new vscode.EventEmitter<TritonClient | undefined>();
  /** Fired when the client changes (connected, reconnected, gone): the status panel re-binds to it. */
  readonly onDidChangeClient = this.clientEmitter.event;
  private buildAbort: AbortController | undefined;

  constructor(
    private readonly settings: SettingsService,
    private readonly store: LifecycleStore,
    private readonly log: Log,
    private readonly paths: ServerPaths,
  ) {
    const repository = { source: path.join(paths.tritonDir, 'model_repository'), destination: paths.repositoryDir };
    this.session = new ServerSession({
      ...productionParts(log),
      state: store,
      settings: () => toSessionSettings(settings.current, repository),
      ui: createSessionUi(log),
      log,
      onClientChanged: (client) => this.clientEmitter.fire(client),
    }, { watch: true, loadProgressIntervalMs: 1_000, unloadTimeoutMs: 300_000 });
  }

  get tritonClient(): TritonClient | undefined {
    return this.session.client;
  }

  /** The managed container we are connected to (undefined in external mode or when stopped). */
  get serverHandle(): ServerHandle | undefined {
    return this.session.serverHandle;
  }

  /** Re-attaches to our running container (managed) or probes the configured server (external); never starts one. */
  async attach(): Promise<void> {
    await this.session.attach().catch((e: unknown) => this.attachFailed(e));
  }

  /** Server mode or URL changed: drop the old connection and look again. */
  async reconnect(): Promise<void> {
    await this.session.reconnect().catch((e: unknown) => this.attachFailed(e));
  }

  private attachFailed(e: unknown): void {
    // Docker missing or the daemon down at startup is not worth a popup: the status bar shows "stopped" and
    // Start reports the real error with its fix.
    this.log.warn(`Could not look for a running container: ${e instanceof Error ? e.message : String(e)}`);
  }

  async start(): Promise<void> {
    if (this.settings.current.serverMode !== 'managed') return;
    const conflict = blocksStart(this.settings.problems);
    if (conflict) {
      const key = `${SECTION}.${conflict.key}`;
      this.log.warn(`Start refused: ${conflict.key} equals another port.`);
      const open = vscode.l10n.t('Open Settings');
      const picked = await vscode.window.showErrorMessage(vscode.l10n.t('The HTTP, gRPC and metrics ports must be different. Change {0} in the settings.', key), open);
      if (picked === open) await vscode.commands.executeCommand(VSCODE_COMMANDS.openSettings, key);
      return;
    }
    await this.run('Start', () => this.session.start());
  }

  stop(): Promise<void> {
    return this.run('Stop', () => this.session.stop());
  }

  async restart(): Promise<void> {
    if (this.store.current.server !== 'stopped') await this.stop();
    await this.start();
  }

  load(): Promise<void> {
    return this.run('Load', () => this.session.load());
  }

  unload(): Promise<void> {
    return this.run('Unload', () => this.session.unload());
  }

  private async run(context: string, operation: () => Promise<unknown>): Promise<void> {
    try {
      await operation();
    } catch (e) {
      await showError(this.log, context, e);
    }
  }

  async buildImage(): Promise<void> {
    if (this.store.actionContext.building) return;
    const image = this.settings.current.image;
    this.store.setBuilding(true);
    const op = new AbortController();
    this.buildAbort = op;
    try {
      await withElapsedProgress({ title: vscode.l10n.t('Building the serving image {0}', image), cancellable: true, signal: op.signal }, async (report, signal) => {
        report.step(vscode.l10n.t('Running docker build (the first build downloads several GB)'));
        await this.session.buildImage(this.paths.tritonDir, (line) => {
          this.log.info(`[build] ${line}`);
          report.detail(line);
        }, signal);
      });
      const start = vscode.l10n.t('Start Server');
      const picked = await vscode.window.showInformationMessage(vscode.l10n.t('The serving image {0} is ready.', image), start);
      if (picked === start) await vscode.commands.executeCommand(COMMANDS.startServer);
    } catch (e) {
      if (op.signal.aborted || isCancellation(e)) this.log.info('Image build cancelled.');
      else await showError(this.log, 'Build image', e);
    } finally {
      this.buildAbort = undefined;
      this.store.setBuilding(false);
    }
  }

  cancelBuild(): void {
    this.buildAbort?.abort();
  }

  /** Counts a request (chat answer, explanation) while it runs; meanwhile the server's health is polled. */
  track<T>(request: Promise<T>): Promise<T> {
    return this.session.track(request);
  }

  /** Asks the server what it is doing and adopts it. */
  probe(): Promise<void> {
    return this.session.probe();
  }

  /** The running container keeps running: a window reload attaches to it again. */
  async dispose(): Promise<void> {
    this.buildAbort?.abort();
    const closing = this.session.dispose();
    this.clientEmitter.dispose();
    await closing;
  }
}
