// The server and the model as VS Code commands: the core's ServerSession (the whole policy: setup checks, start,
// load, Start ChatGLM) with VS Code's progress notifications, prompts and error messages, the lifecycle store and
// the log channel. What stays here is VS Code's own: the settings problems that block a start and the error a
// command shows; the setup checklist and the image build are the SetupController's (setupController.ts).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isSetupProblem, productionParts, ServerSession, switchModel, toSessionSettings, type ModelSwitch } from '../../core/session';
import type { ServerHandle } from '../../core/server';
import { blocksStart } from '../../core/settings/settingsParser';
import { confirmationFor, durationParts, LoadClock, type DestructiveAction } from '../../core/state/confirmation';
import type { TritonClient } from '../../core/triton';
import type { HostToWebview, SetupActionMessage, SetupModelMessage } from '../../protocol';
import { SECTION } from '../../core/settings/settingsSchema';
import { modelDisplayName } from '../../core/models/choice';
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

const LAST_LOAD_KEY = 'tritonChatglm.lastLoadMs';
/** SecretStorage key of the team server's API key (sent as `Authorization: Bearer` in external mode). */
const TEAM_KEY = 'tritonChatglm.teamKey';

/** "2 min 10 s", "45 s", "1 h 2 min". */
function durationText(ms: number): string {
  const { hours, minutes, seconds } = durationParts(ms);
  if (hours > 0) return vscode.l10n.t('{0} h {1} min', hours, minutes);
  if (minutes > 0) return vscode.l10n.t('{0} min {1} s', minutes, seconds);
  return vscode.l10n.t('{0} s', seconds);
}

export class ServerController implements vscode.Disposable {
  private readonly session: ServerSession<TritonClient>;
  /** The setup checklist and the image build, over this controller's session. */
  readonly setup: SetupController;
  private readonly clientEmitter = new vscode.EventEmitter<TritonClient | undefined>();
  private readonly subscriptions: vscode.Disposable[] = [];
  /** Fired when the client changes (connected, reconnected, gone): the status panel re-binds to it. */
  readonly onDidChangeClient = this.clientEmitter.event;
  /** The team key as last read from SecretStorage (the session's settings are read synchronously). */
  private teamKey: string | undefined;
  private readonly secrets: vscode.SecretStorage | undefined;

  constructor(
    private readonly settings: SettingsService,
    private readonly store: LifecycleStore,
    private readonly log: Log,
    paths: ServerPaths,
    /** Where the last load's duration is remembered (the extension's global state). */
    private readonly memory: vscode.Memento,
  ) {
    const repository = { source: path.join(paths.tritonDir, 'model_repository'), destination: paths.repositoryDir };
    this.session = new ServerSession({
      ...productionParts(log),
      state: store,
      settings: () => toSessionSettings(settings.current, repository, undefined, this.teamKey),
      ui: createSessionUi(log, () => modelDisplayName(this.session.modelName)),
      log,
      onClientChanged: (client) => this.clientEmitter.fire(client),
      onSetupChanged: () => this.setup.changed(),
    }, { watch: true, loadProgressIntervalMs: 1_000, unloadTimeoutMs: 300_000, recheckSetup: true });
    this.secrets = paths.secrets;
    const clock = new LoadClock();
    this.subscriptions.push(store.onDidChange((state) => {
      const ms = clock.observe(state, Date.now());
      if (ms !== undefined) void memory.update(LAST_LOAD_KEY, ms);
    }));
    this.setup = new SetupController({ session: this.session, startChatglm: () => this.startChatglm(), settings, store, log, tritonDir: paths.tritonDir, memory, ...(paths.secrets ? { secrets: paths.secrets } : {}) });
  }

  get tritonClient(): TritonClient | undefined {
    return this.session.client;
  }

  /** Triton's name of the model the server serves (the running container's, else the chosen one). */
  get modelName(): string {
    return this.session.modelName;
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

  runSetupModel(message: SetupModelMessage): Promise<void> {
    return this.setup.runModelAction(message);
  }

  // ---- start / stop / load --------------------------------------------------------------------------------------

  /** Extension start-up: attach to our running server, else check the setup (and auto-start when asked to). */
  async activate(): Promise<void> {
    this.teamKey = await this.secrets?.get(TEAM_KEY);
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

  /** ChatGLM: Set Team API Key… (empty removes it). Kept in SecretStorage only; an external server reconnects with it. */
  async setTeamKey(): Promise<void> {
    if (!this.secrets) return;
    const value = await vscode.window.showInputBox({
      title: vscode.l10n.t('Team API Key'),
      prompt: vscode.l10n.t('The key your team admin gave you for the team server (tritonChatglm.externalUrl). It is kept in VS Code\'s secret storage. Leave empty to remove it.'),
      placeHolder: 'tcg_…',
      password: true,
      ignoreFocusOut: true,
    });
    if (value === undefined) return;
    const key = value.trim();
    if (key) await this.secrets.store(TEAM_KEY, key);
    else await this.secrets.delete(TEAM_KEY);
    this.teamKey = key || undefined;
    this.log.info(key ? 'Team API key stored in secret storage' : 'Team API key removed');
    if (this.settings.current.serverMode === 'external') await this.reconnect();
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

  /** The switch our running container needs: another model chosen since it started (undefined: none). */
  get pendingSwitch(): ModelSwitch | undefined {
    return this.session.pendingSwitch;
  }

  /** Unload the served model, restart with the chosen model's weights, load it: one action (asked for first). */
  switchModel(): Promise<void> {
    return this.starting('Switch model', () => switchModel(this.session));
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

  async stop(): Promise<void> {
    if (!(await this.confirm('stop'))) return;
    await this.run('Stop', () => this.session.stop());
  }

  async restart(): Promise<void> {
    if (!(await this.confirm('restart'))) return;
    if (this.store.current.server !== 'stopped') await this.run('Stop', () => this.session.stop());
    await this.start();
  }

  /** `fresh`: unload first even when nothing changed (Reload Model after "the model failed"). */
  load(options: { fresh?: boolean } = {}): Promise<void> {
    return this.run('Load', () => this.session.load(options));
  }

  async unload(): Promise<void> {
    if (!(await this.confirm('unload'))) return;
    await this.run('Unload', () => this.session.unload());
  }

  /** Asks before a loaded model is thrown away (src/core/state/confirmation.ts decides when). */
  private async confirm(action: DestructiveAction): Promise<boolean> {
    const decision = confirmationFor(action, this.store.current, {
      askSetting: this.settings.current.askBeforeUnload,
      lastLoadMs: this.memory.get<number>(LAST_LOAD_KEY),
    });
    if (!decision.ask) return true;
    const question = action === 'unload' ? vscode.l10n.t('Unload {0}?', modelDisplayName(this.session.modelName))
      : action === 'stop' ? vscode.l10n.t('Stop the ChatGLM server?') : vscode.l10n.t('Restart the ChatGLM server?');
    const lost = action === 'unload' ? vscode.l10n.t('The model leaves the GPU.') : vscode.l10n.t('The model is unloaded with it.');
    const took = decision.lastLoadMs === undefined
      ? vscode.l10n.t('Loading it again takes minutes.')
      : vscode.l10n.t('Loading it again took {0} last time.', durationText(decision.lastLoadMs));
    const go = action === 'unload' ? vscode.l10n.t('Unload Model') : action === 'stop' ? vscode.l10n.t('Stop Server') : vscode.l10n.t('Restart Server');
    const never = vscode.l10n.t("Don't Ask Again");
    const picked = await vscode.window.showWarningMessage(question, { modal: true, detail: `${lost} ${took}` }, go, never);
    if (picked === never) {
      await vscode.workspace.getConfiguration(SECTION).update('askBeforeUnload', false, vscode.ConfigurationTarget.Global);
      this.log.info('askBeforeUnload turned off ("Don\'t Ask Again").');
    }
    return picked === go || picked === never;
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
  /** "The model failed: ... reload it" from an answer: the model shows as failed, and Load Model reloads it fresh. */
  reportModelFailure(error: { code: string; message: string }): void {
    this.session.reportModelFailure(error);
  }

  probe(): Promise<void> {
    return this.session.probe();
  }

  /** A request found no server: our container's exit, when that is why (ServerSession.explainFailure). */
  explainFailure(error: unknown): Promise<unknown> {
    return this.session.explainFailure(error);
  }

  /** The running container keeps running: a window reload attaches to it again. */
  async dispose(): Promise<void> {
    for (const d of this.subscriptions) d.dispose();
    this.setup.dispose(); // a running image build is cancelled first
    const closing = this.session.dispose();
    this.clientEmitter.dispose();
    await closing;
  }
}
