// Building the serving image (the command and the checklist's Build Image): a cancellable progress notification
// fed by docker build's output, the building flag the checklist and the menus read, and once built a notice
// offering the next step as its button.
import * as vscode from 'vscode';
import { isCancellation, type ServerSession, type SessionClient } from '../../core/session';
import { COMMANDS } from '../commandIds';
import type { SettingsService } from '../config/settingsService';
import { showError } from '../errors/presentError';
import type { Log } from '../log';
import type { LifecycleStore } from '../state/lifecycleStore';
import { withElapsedProgress } from '../util/progress';

export class ImageBuild implements vscode.Disposable {
  private abort: AbortController | undefined;

  constructor(
    private readonly session: Pick<ServerSession<SessionClient>, 'buildImage' | 'checkSetup'>,
    private readonly settings: SettingsService,
    private readonly store: LifecycleStore,
    private readonly log: Log,
    /** The packaged triton/ directory: the build context. */
    private readonly tritonDir: string,
  ) {}

  async build(): Promise<void> {
    if (this.store.actionContext.building) return;
    const image = this.settings.current.image;
    this.store.setBuilding(true);
    const op = new AbortController();
    this.abort = op;
    let built = false;
    try {
      await withElapsedProgress({ title: vscode.l10n.t('Building the serving image {0}', image), cancellable: true, signal: op.signal }, async (report, signal) => {
        report.step(vscode.l10n.t('Running docker build (the first build downloads several GB)'));
        await this.session.buildImage(this.tritonDir, (line) => {
          this.log.info(`[build] ${line}`);
          report.detail(line);
        }, signal);
      });
      built = true;
    } catch (e) {
      if (op.signal.aborted || isCancellation(e)) this.log.info('Image build cancelled.');
      else await showError(this.log, 'Build image', e);
    } finally {
      this.abort = undefined;
      this.store.setBuilding(false);
    }
    if (!built) return;
    const report = await this.session.checkSetup().catch(() => undefined);
    // The next step as the message's one button (a self-closing notice would show Cancel first and the step as a
    // small link). Not awaited: the build is done. A click after a start began finds the server starting or up.
    const next = report?.ok ? { label: vscode.l10n.t('Start ChatGLM'), command: COMMANDS.startChatglm } : { label: vscode.l10n.t('Show Setup Checklist'), command: COMMANDS.openChat };
    void vscode.window.showInformationMessage(vscode.l10n.t('The serving image {0} is ready.', image), next.label).then((picked) => {
      if (picked === next.label && this.store.current.server !== 'starting') void vscode.commands.executeCommand(next.command);
    });
  }

  cancel(): void {
    this.abort?.abort();
  }

  dispose(): void {
    this.abort?.abort();
  }
}
