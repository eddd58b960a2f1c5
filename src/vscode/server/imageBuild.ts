// Building the serving image (the command and the checklist's Build Image): a cancellable progress notification
// fed by docker build's output, the building flag the checklist and the menus read, and once built a notice
// offering the next step.
import * as vscode from 'vscode';
import { isCancellation, type ServerSession, type SessionClient } from '../../core/session';
import { COMMANDS } from '../commandIds';
import type { SettingsService } from '../config/settingsService';
import { showError } from '../errors/presentError';
import type { Log } from '../log';
import type { LifecycleStore } from '../state/lifecycleStore';
import { showNoticeUntil } from '../util/notice';
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
    // Offered until a start begins (or the person closes it); the checklist offers the same button.
    const next = report?.ok ? { label: vscode.l10n.t('Start ChatGLM'), command: COMMANDS.startChatglm } : { label: vscode.l10n.t('Show Setup Checklist'), command: COMMANDS.openChat };
    showNoticeUntil(vscode.l10n.t('The serving image {0} is ready.', image), [next], this.store.onDidChange, (s) => s.server !== 'stopped' && s.server !== 'setup');
  }

  cancel(): void {
    this.abort?.abort();
  }

  dispose(): void {
    this.abort?.abort();
  }
}
