// "ChatGLM: completions on/off" in the status bar: turns completions on and off (the setting), snoozes them, and
// when the served model cannot fill in the middle (the catalog says) says so and offers to switch to CodeGeeX4
// (it sets tritonChatglm.model; the server side restarts the server for it).
import * as vscode from 'vscode';
import { completionAvailability, type CompletionAvailability } from '../../core/completion/availability';
import { toCompletionSettings } from '../../core/completion/settings';
import { completionModel } from '../../core/completion/model';
import { COMMANDS } from '../commandIds';
import { SettingsService } from '../config/settingsService';
import type { Log } from '../log';
import { affectsModel, chooseModel, infillingAlternative } from './chosenModel';

const SNOOZE_MINUTES = [5, 15, 30, 60];

export class CompletionToggle implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[];
  private snoozedUntil: number | undefined;
  private snoozeTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly changed = new vscode.EventEmitter<CompletionAvailability>();
  /** Fires when completions turn on or off (the provider cancels what runs). */
  readonly onDidChange = this.changed.event;

  /** `servedModel`: Triton's name of the served model (the server session's); `servedModelMayChange` fires when it may. */
  constructor(private readonly settings: SettingsService, private readonly log: Log, private readonly servedModel: () => string, servedModelMayChange: vscode.Event<unknown>) {
    this.item = vscode.window.createStatusBarItem('tritonChatglm.completions', vscode.StatusBarAlignment.Right, 100);
    this.item.name = vscode.l10n.t('ChatGLM Code Completion');
    this.item.command = COMMANDS.completionsMenu;
    this.subscriptions = [
      this.changed,
      settings.onDidChange((c) => { if (affectsModel(c.keys) || c.keys.some((k) => k.startsWith('completions.'))) this.render(); }),
      servedModelMayChange(() => this.render()),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.render()),
    ];
    this.render();
    this.item.show();
  }

  get availability(): CompletionAvailability {
    return completionAvailability({
      settings: toCompletionSettings(this.settings.current),
      modelFillsInMiddle: completionModel(this.servedModel()).fillInMiddle,
      workspaceTrusted: vscode.workspace.isTrusted,
      ...(this.snoozedUntil !== undefined ? { snoozedUntil: this.snoozedUntil } : {}),
      now: Date.now(),
    });
  }

  /** Turn Code Completions On/Off: flips the setting; turning on with a model that cannot fill in offers the switch. */
  async toggle(): Promise<void> {
    const on = this.settings.current['completions.enabled'];
    if (!on) this.snoozedUntil = undefined;
    await this.settings.update('completions.enabled', !on);
    this.render();
    if (!on && this.availability.state === 'off' && this.availability.reason === 'no-infilling') await this.offerSwitch();
  }

  /** Snooze Code Completions: off for a few minutes (or back on now when snoozed). */
  async snooze(minutes?: number): Promise<void> {
    if (minutes === undefined) {
      const items = SNOOZE_MINUTES.map((m) => ({ label: vscode.l10n.t('{0} minutes', m), minutes: m }));
      const picked = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Snooze code completions for') });
      if (!picked) return;
      minutes = picked.minutes;
    }
    this.snoozedUntil = Date.now() + minutes * 60_000;
    if (this.snoozeTimer) clearTimeout(this.snoozeTimer);
    this.snoozeTimer = setTimeout(() => { this.snoozedUntil = undefined; this.render(); }, minutes * 60_000);
    this.log.info(`completions: snoozed for ${minutes} min`);
    this.render();
  }

  /** The status bar item's menu: what can be done now. */
  async menu(): Promise<void> {
    const a = this.availability;
    const alternative = infillingAlternative();
    type Item = vscode.QuickPickItem & { run: () => Promise<unknown> | unknown };
    const items: Item[] = [];
    if (a.state === 'off' && a.reason === 'no-infilling' && alternative) {
      items.push({ label: vscode.l10n.t('Switch to {0}', alternative.displayName), detail: reasonText(a, this.servedTitle()), run: () => this.switchModel(alternative.id) });
    }
    items.push(this.settings.current['completions.enabled']
      ? { label: vscode.l10n.t('Turn code completions off'), run: () => this.toggle() }
      : { label: vscode.l10n.t('Turn code completions on'), run: () => this.toggle() });
    if (a.state === 'off' && a.reason === 'snoozed') items.push({ label: vscode.l10n.t('Resume code completions now'), run: () => this.resume() });
    else if (a.state === 'on') items.push({ label: vscode.l10n.t('Snooze code completions…'), run: () => this.snooze() });
    items.push({ label: vscode.l10n.t('Code completion settings'), run: () => SettingsService.open('completions.enabled') });
    const picked = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('ChatGLM Code Completion'), placeHolder: this.stateText(a) });
    await picked?.run();
  }

  private resume(): void {
    this.snoozedUntil = undefined;
    if (this.snoozeTimer) clearTimeout(this.snoozeTimer);
    this.render();
  }

  private async offerSwitch(): Promise<void> {
    const alternative = infillingAlternative();
    if (!alternative) return;
    const switchTo = vscode.l10n.t('Switch to {0}', alternative.displayName);
    const picked = await vscode.window.showInformationMessage(
      vscode.l10n.t('{0} cannot fill in the middle of code, so completions stay off. {1} can.', completionModel(this.servedModel()).title, alternative.displayName), switchTo);
    if (picked === switchTo) await this.switchModel(alternative.id);
  }

  private async switchModel(id: string): Promise<void> {
    try {
      await chooseModel(this.settings, id);
      this.log.info(`completions: model switched to ${id}`);
    } catch (e) {
      this.log.warn(`completions: could not choose ${id}: ${e instanceof Error ? e.message : String(e)}`);
      void vscode.window.showWarningMessage(vscode.l10n.t('Could not switch the model: {0}', e instanceof Error ? e.message : String(e)));
    }
    this.render();
  }

  private render(): void {
    const a = this.availability;
    this.item.text = a.state === 'on' ? `$(sparkle) ${vscode.l10n.t('ChatGLM: completions on')}` : `$(circle-slash) ${vscode.l10n.t('ChatGLM: completions off')}`;
    const tip = new vscode.MarkdownString(undefined, true);
    tip.isTrusted = false;
    tip.appendText(this.stateText(a));
    tip.appendMarkdown('\n\n');
    tip.appendText(vscode.l10n.t('Click for options.'));
    this.item.tooltip = tip;
    this.item.accessibilityInformation = { label: this.stateText(a) };
    this.changed.fire(a);
  }

  private servedTitle(): string {
    return completionModel(this.servedModel()).title;
  }

  private stateText(a: CompletionAvailability): string {
    return stateText(a, this.servedTitle());
  }

  dispose(): void {
    if (this.snoozeTimer) clearTimeout(this.snoozeTimer);
    for (const d of this.subscriptions) d.dispose();
    this.item.dispose();
  }
}

function stateText(a: CompletionAvailability, servedTitle: string): string {
  return a.state === 'on' ? vscode.l10n.t('Code completions are on: pause typing to see a suggestion, Tab accepts it.') : reasonText(a, servedTitle);
}

function reasonText(a: Extract<CompletionAvailability, { state: 'off' }>, servedTitle: string): string {
  switch (a.reason) {
    case 'disabled': return vscode.l10n.t('Code completions are off.');
    case 'snoozed': return vscode.l10n.t('Code completions are snoozed until {0}.', new Date(a.until ?? Date.now()).toLocaleTimeString());
    case 'no-infilling': return vscode.l10n.t('Code completions are off: {0} cannot fill in the middle of code. Switch to {1} to use them.',
      servedTitle, infillingAlternative()?.displayName ?? 'CodeGeeX4');
    case 'untrusted': return vscode.l10n.t('Code completions are off in an untrusted workspace: nothing is sent from it.');
  }
}
