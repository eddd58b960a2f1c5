// The server and the model as VS Code commands: the core's ServerSession (the whole policy: setup checks, start,
// load, Start ChatGLM) with VS Code's progress notifications, prompts and error messages, the lifecycle store and
// the log channel. What stays here is VS Code's own: the settings problems that block a start and the error a
// command shows; the setup checklist and the image build are the SetupController's (setupController.ts).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isSetupProblem, productionParts, ServerSession, toSessionSettings } from '../../core/session';
import type { ServerHandle } from '../../core/server';
import { blocksStart } from '../../core/settings/settingsParser';
import type { TritonClient } from '../../core/triton';
import type { HostToWebview, SetupActionMessage } from '../../protocol';
import { SettingsService } from '../config/settingsService';
import { showError } from '../errors/presentError';
import type { Log } from '../log';
import type { LifecycleStore } from '../state/lifecycleStore';
import { createSessionUi } from './sessionUi';
import { SetupController } from './setupController';

export interface ServerPaths {
  /** The packaged triton/ directory (model repository source, Dockerfile). */
  tritonDir: string;
  /** Where the rendered repository lives (global storage): mounted read-only as /models. */
  repositoryDir: string;
  /** The extension's SecretStorage (the Hugging Face token of Download Weights). */
  secrets?: vscode.SecretStorage;
}

export class ServerController implements vscode.Disposable {
  private readonly session: ServerSession<TritonClient>;
  /** The setup checklist and the image build, over this controller's session. */
  readonly setup: SetupController;
  private readonly clientEmitter = new vscode.EventEmitter<TritonClient | undefined>();
  /** Fired when the client changes (connected, reconnected, gone): the status panel re-binds to it. */
  readonly onDidChangeClient = this.clientEmitter.event;

  constructor(
    private readonly settings: SettingsService,
    private readonly store: LifecycleStore,
    private readonly log: Log,
    paths: ServerPaths,
  ) {
    const repository = { source: path.join(paths.tritonDir, 'model_repository'), destination: paths.repositoryDir };
    this.session = new ServerSession({
      ...productionParts(log),
      state: store,
      settings: () => toSessionSettings(settings.current, repository),
      ui: createSessionUi(log),
      log,
      onClientChanged: (client) => this.clientEmitter.fire(client),
      onSetupChanged: () => this.setup.changed(),
    }, { watch: true, loadProgressIntervalMs: 1_000, unloadTimeoutMs: 300_000, recheckSetup: true });
    this.setup = new SetupController({ session: this.session, startChatglm: () => this.startChatglm(), settings, store, log, tritonDir: paths.tritonDir, ...(paths.secrets ? { secrets: paths.secrets } : {}) });
  }

  get tritonClient(): TritonClient | undefined {
    return this.session.client;
  }

  /** The managed container we are connected to (undefined in external mode or when stopped). */
  get serverHandle(): ServerHandle | undefined {
    return this.session.serverHandle;
  }

  // The chat view reaches the checklist through here until it takes the SetupController itself.
  get onDidChangeSetup(): vscode.Event<void> {
    return this.setup.onDidChange;
  }

  setupMessage(): HostToWebview {
    return this.setup.message();
  }

  runSetupAction(message: SetupActionMessage): Promise<void> {
    return this.setup.runAction(message);
  }

  // ---- start / stop / load --------------------------------------------------------------------------------------

  /** Extension start-up: attach to our running server, else check the setup (and auto-start when asked to). */
  async activate(): Promise<void> {
    try {
      await this.session.activate();
    } catch (e) {
      await this.startFailed('Auto-start', e);
    }
  }

  /** Re-attaches to our running container (managed) or probes the configured server (external); never starts one. */
  async attach(): Promise<void> {
    await this.session.attach().catch((e: unknown) => this.attachFailed(e));
  }

  /** Server mode or URL changed: drop the old connection and look again. */
  async reconnect(): Promise<void> {
    await this.session.reconnect().catch((e: unknown) => this.attachFailed(e));
    await this.session.checkSetup().catch((e: unknown) => this.attachFailed(e));
  }

  private attachFailed(e: unknown): void {
    // Docker missing or the daemon down is no reason for a popup: the setup checklist says so with its fix.
    this.log.warn(`Could not look for a running container: ${e instanceof Error ? e.message : String(e)}`);
  }

  /** The one action: start the server when none runs, then load the model. */
  startChatglm(): Promise<void> {
    return this.starting('Start ChatGLM', () => this.session.startChatglm());
  }

  start(): Promise<void> {
    return this.starting('Start', () => this.session.start());
  }

  private async starting(context: string, operation: () => Promise<unknown>): Promise<void> {
    if (!(await this.startAllowed())) return;
    try {
      await operation();
    } catch (e) {
      await this.startFailed(context, e);
    }
  }

  /** Settings problems VS Code knows of that would make any start fail (two equal ports). */
  private async startAllowed(): Promise<boolean> {
    if (this.settings.current.serverMode !== 'managed') return true;
    const conflict = blocksStart(this.settings.problems);
    if (!conflict) return true;
    const key = `tritonChatglm.${conflict.key}`;
    this.log.warn(`Start refused: ${conflict.key} equals another port.`);
    const open = vscode.l10n.t('Open Settings');
    const picked = await vscode.window.showErrorMessage(vscode.l10n.t('The HTTP, gRPC and metrics ports must be different. Change {0} in the settings.', key), open);
    if (picked === open) await SettingsService.open(conflict.key);
    return false;
  }

  /** A missing prerequisite is "setup needed" (the checklist's notice); anything else is an error with its fix. */
  private async startFailed(context: string, e: unknown): Promise<void> {
    if (isSetupProblem(e)) this.setup.notifyNeeded(context, e);
    else await showError(this.log, context, e);
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

  /** Counts a request (chat answer, explanation) while it runs; meanwhile the server's health is polled. */
  track<T>(request: Promise<T>): Promise<T> {
    return this.session.track(request).then((result) => {
      this.setup.markAnswered();
      return result;
    });
  }

  /** Asks the server what it is doing and adopts it. */
  probe(): Promise<void> {
    return this.session.probe();
  }

  /** The running container keeps running: a window reload attaches to it again. */
  async dispose(): Promise<void> {
    this.setup.dispose(); // a running image build is cancelled first
    const closing = this.session.dispose();
    this.clientEmitter.dispose();
    await closing;
  }
}
