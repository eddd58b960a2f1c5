// The setup checklist in VS Code: the core's setup model drawn from the session's last report, the lifecycle and
// the building flag; the walkthrough's context keys; the clicks it offers (the weights folder picker, the
// documentation links, the image build, Open Settings, Show Logs, Re-check, Start ChatGLM); and the "needs
// setup" notice a start that lacks a prerequisite shows.
import * as vscode from 'vscode';
import type { PreflightReport, ServerError } from '../../core/server';
import {
  CHECK_SETTINGS, isSetupPrimary, SETUP_CONTEXT_KEYS, SETUP_LINKS, setupActionOffered, setupContextValues, setupModel,
  type ServerSession, type SessionClient, type SetupModel,
} from '../../core/session';
import { modelDisplayName } from '../../core/models/choice';
import type { HostToWebview, SetupActionMessage, SetupModelMessage } from '../../protocol';
import { COMMANDS, VSCODE_COMMANDS } from '../commandIds';
import { SettingsService } from '../config/settingsService';
import { errorText, presentError, showError } from '../errors/presentError';
import type { Log } from '../log';
import type { LifecycleStore } from '../state/lifecycleStore';
import { showNoticeUntil } from '../util/notice';
import { ImageBuild } from './imageBuild';
import { modelChoiceRows, runModelAction } from './modelChoiceView';
import { setupMessage } from './setupView';
import { WeightsDownloader } from './weightsDownload';
import { chooseWeightsFolder } from './weightsPicker';

export interface SetupDeps {
  session: Pick<ServerSession<SessionClient>, 'setup' | 'checkSetup' | 'buildImage' | 'modelName'>;
  /** Start ChatGLM as its command does (the settings check and the error messages included). */
  startChatglm(): Promise<void>;
  settings: SettingsService;
  store: LifecycleStore;
  log: Log;
  /** The packaged triton/ directory: the image's build context. */
  tritonDir: string;
  /** Where the Hugging Face token is kept (the extension's SecretStorage). */
  secrets?: vscode.SecretStorage;
  /** Where accepted model licences are remembered (the extension's globalState). */
  memory?: vscode.Memento;
}

export class SetupController implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  /** Fired when the checklist changes (a check ran, the lifecycle moved, a build began or ended). */
  readonly onDidChange = this.emitter.event;
  readonly image: ImageBuild;
  readonly weights: WeightsDownloader;
  private readonly subscriptions: vscode.Disposable[] = [];
  private contextKeys = '';
  /** The walkthrough's last step ("ask a question") is done once something was answered. */
  private answered = false;

  constructor(private readonly deps: SetupDeps) {
    this.image = new ImageBuild(deps.session, deps.settings, deps.store, deps.log, deps.tritonDir);
    this.weights = new WeightsDownloader(deps.settings, deps.secrets, deps.log, deps.memory);
    this.subscriptions.push(this.image, this.weights, this.emitter, deps.store.onDidChange(() => this.changed()), this.weights.onDidChange(() => this.changed()));
    this.changed();
  }

  /** What the checklist shows now. */
  get model(): SetupModel {
    const { store, session } = this.deps;
    return setupModel({ state: store.current, ...session.setup, building: store.actionContext.building, downloading: this.weights?.downloading ?? false });
  }

  /** The last setup check's report (undefined until one ran). */
  get report(): PreflightReport | undefined {
    return this.deps.session.setup.report;
  }

  /** The chat view's `setup` message. */
  message(): HostToWebview {
    const model = this.model;
    // The model choice is for our own server; an external one serves what it serves.
    const models = this.deps.store.current.mode === 'managed' ? modelChoiceRows(model, this.deps.settings) : undefined;
    return setupMessage(model, this.deps.store.current, models);
  }

  /** Choose or Licence in the checklist's model choice. */
  runModelAction(message: SetupModelMessage): Promise<void> {
    return runModelAction(message, this.deps.settings, this.deps.log);
  }

  /** The session's report or its "checking" flag changed (and whenever the lifecycle moves). */
  changed(): void {
    // Walkthrough steps complete on these context keys; set them only when they change.
    const values = setupContextValues(this.deps.store.current, this.deps.session.setup.report);
    const key = JSON.stringify(values);
    if (key !== this.contextKeys) {
      this.contextKeys = key;
      for (const [name, value] of Object.entries(values)) void vscode.commands.executeCommand(VSCODE_COMMANDS.setContext, name, value);
    }
    this.emitter.fire();
  }

  /** A request was answered: the walkthrough's last step is done. */
  markAnswered(): void {
    if (this.answered) return;
    this.answered = true;
    void vscode.commands.executeCommand(VSCODE_COMMANDS.setContext, SETUP_CONTEXT_KEYS.answered, true);
  }

  /** Runs every setup check again (Re-check). */
  async recheck(): Promise<void> {
    try {
      await this.deps.session.checkSetup();
    } catch (e) {
      await showError(this.deps.log, 'Setup check', e);
    }
  }

  async chooseWeightsFolder(): Promise<void> {
    // The settings change re-runs the checks (settingsReactions), so the checklist turns green by itself.
    await chooseWeightsFolder(this.deps.settings, this.deps.log);
  }

  async downloadWeights(): Promise<void> {
    // As with the picker, the settings change at the end re-runs the checks.
    await this.weights.run();
  }

  /** A click in the checklist: only what the checklist offers now is done. */
  async runAction({ action, check }: SetupActionMessage): Promise<void> {
    const model = this.model;
    if (!setupActionOffered(model, action, check)) {
      this.deps.log.warn(isSetupPrimary(action)
        ? `setup: ignored ${action}; the checklist offers ${model.primary ?? 'nothing'}`
        : `setup: ignored ${action} for ${check ?? 'no check'}; it is not offered`);
      return;
    }
    switch (action) {
      case 'startChatglm': await this.deps.startChatglm(); return;
      case 'recheck': await this.recheck(); return;
      case 'chooseWeights': await this.chooseWeightsFolder(); return;
      case 'downloadWeights': await this.downloadWeights(); return;
      case 'cancelDownload': this.weights.cancel(); return;
      case 'buildImage': await this.image.build(); return;
      case 'cancelBuild': this.image.cancel(); return;
      case 'openSettings': if (check) await SettingsService.open(CHECK_SETTINGS[check]); return;
      case 'showLogs': this.deps.log.show(); return;
      default: await vscode.env.openExternal(vscode.Uri.parse(SETUP_LINKS[action]));
    }
  }

  /**
   * A start lacked a prerequisite: the checklist lists every check; the notice names the first problem and closes
   * itself once the setup is no longer needed.
   */
  notifyNeeded(context: string, e: ServerError): void {
    this.deps.log.warn(`${context} [${e.code}]: setup needed: ${e.message}`);
    const others = Math.max(0, this.model.attention - 1);
    const text = [
      vscode.l10n.t('{0} needs setup.', modelDisplayName(this.deps.session.modelName)),
      errorText(presentError(e)),
      others > 0 ? (others === 1 ? vscode.l10n.t('1 more check needs attention.') : vscode.l10n.t('{0} more checks need attention.', others)) : '',
    ].filter(Boolean).join(' ');
    showNoticeUntil(text, [{ label: vscode.l10n.t('Show Setup Checklist'), command: COMMANDS.openChat }], this.deps.store.onDidChange, (s) => s.server !== 'setup');
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
  }
}
