// The server and the model as VS Code commands: the core's ServerSession (the whole policy: setup checks, start,
// load, Start ChatGLM) with VS Code's progress notifications, prompts and error messages, the lifecycle store and
// the log channel. What stays here is VS Code's own: the settings problems that block a start, the folder
// picker, the image build's progress and building flag, the setup checklist's words and its context keys.
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  CHECK_SETTINGS, isCancellation, isSetupLink, isSetupProblem, productionParts, ServerSession, SETUP_CONTEXT_KEYS, SETUP_LINKS, setupContextValues,
  setupModel, toSessionSettings, type SetupModel,
} from '../../core/session';
import type { ServerHandle } from '../../core/server';
import { blocksStart } from '../../core/settings/settingsParser';
import type { LifecycleState } from '../../core/state/lifecycle';
import type { TritonClient } from '../../core/triton';
import type { HostToWebview, SetupActionMessage } from '../../protocol';
import { COMMANDS, VSCODE_COMMANDS } from '../commandIds';
import { SettingsService } from '../config/settingsService';
import { errorText, presentError, showError } from '../errors/presentError';
import type { Log } from '../log';
import type { LifecycleStore } from '../state/lifecycleStore';
import { showNotice, type NoticeAction } from '../util/notice';
import { withElapsedProgress } from '../util/progress';
import { createSessionUi } from './sessionUi';
import { setupMessage } from './setupView';
import { chooseWeightsFolder } from './weightsPicker';

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
  private readonly setupEmitter = new vscode.EventEmitter<void>();
  /** Fired when the setup checklist changes (a check ran, the lifecycle moved, a build began or ended). */
  readonly onDidChangeSetup = this.setupEmitter.event;
  private readonly subscriptions: vscode.Disposable[] = [];
  private buildAbort: AbortController | undefined;
  private setupKeys = '';
  /** The walkthrough's last step ("ask a question") is done once something was answered. */
  private answered = false;

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
      onSetupChanged: () => this.setupChanged(),
    }, { watch: true, loadProgressIntervalMs: 1_000, unloadTimeoutMs: 300_000, recheckSetup: true });
    this.subscriptions.push(this.clientEmitter, this.setupEmitter, store.onDidChange(() => this.setupChanged()));
    this.setupChanged();
  }

  get tritonClient(): TritonClient | undefined {
    return this.session.client;
  }

  /** The managed container we are connected to (undefined in external mode or when stopped). */
  get serverHandle(): ServerHandle | undefined {
    return this.session.serverHandle;
  }

  // ---- setup ----------------------------------------------------------------------------------------------------

  /** What the setup checklist shows now. */
  get setup(): SetupModel {
    return setupModel({ state: this.store.current, ...this.session.setup, building: this.store.actionContext.building });
  }

  /** The chat view's `setup` message. */
  setupMessage(): HostToWebview {
    return setupMessage(this.setup, this.store.current);
  }

  private setupChanged(): void {
    // Walkthrough steps complete on these context keys; set them only when they change.
    const values = setupContextValues(this.store.current, this.session.setup.report);
    const key = JSON.stringify(values);
    if (key !== this.setupKeys) {
      this.setupKeys = key;
      for (const [name, value] of Object.entries(values)) void vscode.commands.executeCommand(VSCODE_COMMANDS.setContext, name, value);
    }
    this.setupEmitter.fire();
  }

  /** Extension start-up: attach to our running server, else check the setup (and auto-start when asked to). */
  async activate(): Promise<void> {
    try {
      await this.session.activate();
    } catch (e) {
      await this.startFailed('Auto-start', e);
    }
  }

  /** Runs every setup check again (Re-check). */
  async recheckSetup(): Promise<void> {
    try {
      await this.session.checkSetup();
    } catch (e) {
      await showError(this.log, 'Setup check', e);
    }
  }

  async chooseWeightsFolder(): Promise<void> {
    // The settings change re-runs the checks (settingsReactions), so the checklist turns green by itself.
    await chooseWeightsFolder(this.settings, this.log);
  }

  /** A click in the setup checklist: only what the checklist offers now is done. */
  async runSetupAction(message: SetupActionMessage): Promise<void> {
    const { action, check } = message;
    const model = this.setup;
    if (action === 'startChatglm' || action === 'recheck') {
      if (model.primary !== action && !(action === 'recheck' && model.phase === 'ready')) {
        this.log.warn(`setup: ignored ${action}; the checklist offers ${model.primary ?? 'nothing'}`);
        return;
      }
      await (action === 'startChatglm' ? this.startChatglm() : this.recheckSetup());
      return;
    }
    const item = model.items.find((i) => i.id === check);
    if (!item?.fixes.includes(action)) {
      this.log.warn(`setup: ignored ${action} for ${check ?? 'no check'}; it is not offered`);
      return;
    }
    if (isSetupLink(action)) {
      await vscode.env.openExternal(vscode.Uri.parse(SETUP_LINKS[action]));
      return;
    }
    switch (action) {
      case 'chooseWeights': await this.chooseWeightsFolder(); return;
      case 'buildImage': await this.buildImage(); return;
      case 'cancelBuild': this.cancelBuild(); return;
      case 'openSettings': await SettingsService.open(CHECK_SETTINGS[item.id]); return;
      case 'showLogs': this.log.show(); return;
    }
  }

  // ---- start / stop / load --------------------------------------------------------------------------------------

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

  /**
   * A missing prerequisite is "setup needed": the checklist lists every check; the notice names the first problem
   * and closes itself once the setup is no longer needed. Anything else is an error with its fix.
   */
  private async startFailed(context: string, e: unknown): Promise<void> {
    if (!isSetupProblem(e)) {
      await showError(this.log, context, e);
      return;
    }
    this.log.warn(`${context} [${e.code}]: setup needed: ${e.message}`);
    const others = Math.max(0, this.setup.attention - 1);
    const text = [
      vscode.l10n.t('ChatGLM3 needs setup.'),
      errorText(presentError(e)),
      others > 0 ? (others === 1 ? vscode.l10n.t('1 more check needs attention.') : vscode.l10n.t('{0} more checks need attention.', others)) : '',
    ].filter(Boolean).join(' ');
    this.noticeUntil(text, [{ label: vscode.l10n.t('Show Setup Checklist'), command: COMMANDS.openChat }], (s) => s.server !== 'setup');
  }

  /** Shows a notice (not awaited: the command that caused it is done) until `stale` holds for the lifecycle. */
  private noticeUntil(text: string, actions: NoticeAction[], stale: (state: LifecycleState) => boolean): void {
    const done = new AbortController();
    const watch = this.store.onDidChange((s) => { if (stale(s)) done.abort(); });
    void Promise.resolve(showNotice(text, actions, done.signal)).finally(() => watch.dispose());
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

  // ---- image ------------------------------------------------------------------------------------------------------

  async buildImage(): Promise<void> {
    if (this.store.actionContext.building) return;
    const image = this.settings.current.image;
    this.store.setBuilding(true);
    const op = new AbortController();
    this.buildAbort = op;
    let built = false;
    try {
      await withElapsedProgress({ title: vscode.l10n.t('Building the serving image {0}', image), cancellable: true, signal: op.signal }, async (report, signal) => {
        report.step(vscode.l10n.t('Running docker build (the first build downloads several GB)'));
        await this.session.buildImage(this.paths.tritonDir, (line) => {
          this.log.info(`[build] ${line}`);
          report.detail(line);
        }, signal);
      });
      built = true;
    } catch (e) {
      if (op.signal.aborted || isCancellation(e)) this.log.info('Image build cancelled.');
      else await showError(this.log, 'Build image', e);
    } finally {
      this.buildAbort = undefined;
      this.store.setBuilding(false);
    }
    if (!built) return;
    const report = await this.session.checkSetup().catch(() => undefined);
    // Offered until a start begins (or the person closes it); the checklist offers the same button.
    const next = report?.ok ? { label: vscode.l10n.t('Start ChatGLM'), command: COMMANDS.startChatglm } : { label: vscode.l10n.t('Show Setup Checklist'), command: COMMANDS.openChat };
    this.noticeUntil(vscode.l10n.t('The serving image {0} is ready.', image), [next], (s) => s.server !== 'stopped' && s.server !== 'setup');
  }

  cancelBuild(): void {
    this.buildAbort?.abort();
  }

  /** Counts a request (chat answer, explanation) while it runs; meanwhile the server's health is polled. */
  track<T>(request: Promise<T>): Promise<T> {
    return this.session.track(request).then((result) => {
      if (!this.answered) {
        this.answered = true;
        void vscode.commands.executeCommand(VSCODE_COMMANDS.setContext, SETUP_CONTEXT_KEYS.answered, true);
      }
      return result;
    });
  }

  /** Asks the server what it is doing and adopts it. */
  probe(): Promise<void> {
    return this.session.probe();
  }

  /** The running container keeps running: a window reload attaches to it again. */
  async dispose(): Promise<void> {
    this.buildAbort?.abort();
    const closing = this.session.dispose();
    for (const d of this.subscriptions) d.dispose();
    await closing;
  }
}
