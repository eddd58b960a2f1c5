// Reads the settings through `inspect()` (so workspace values of restricted settings can be ignored), re-reads
// them on change or when the workspace becomes trusted, and reports what a change requires.
import * as vscode from 'vscode';
import { changeEffect, parseSettings, type ParsedSettings, type SettingProblem } from '../../core/settings/settingsParser';
import { VSCODE_COMMANDS } from '../commandIds';
import { SECTION, type ExtensionSettings, type SettingEffect, type SettingKey } from '../../core/settings/settingsSchema';

export interface SettingsChange {
  effect: SettingEffect;
  keys: SettingKey[];
  previous: ExtensionSettings;
}

export class SettingsService implements vscode.Disposable {
  private parsed: ParsedSettings;
  private readonly changeEmitter = new vscode.EventEmitter<SettingsChange>();
  readonly onDidChange = this.changeEmitter.event;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor() {
    this.parsed = SettingsService.read();
    this.subscriptions.push(
      this.changeEmitter,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration(SECTION)) return;
        this.reload((key) => e.affectsConfiguration(key));
      }),
      // Trust granted: workspace values of window-scoped restricted settings may now apply.
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.reload(() => true)),
    );
  }

  get current(): ExtensionSettings {
    return this.parsed.settings;
  }

  get problems(): readonly SettingProblem[] {
    return this.parsed.problems;
  }

  private reload(changed: (key: string) => boolean): void {
    const previous = this.parsed.settings;
    this.parsed = SettingsService.read();
    // Only keys whose effective value moved count (a workspace value ignored as untrusted changes nothing).
    const differs = (full: string): boolean => {
      const key = full.slice(SECTION.length + 1) as SettingKey;
      return changed(full) && JSON.stringify(previous[key]) !== JSON.stringify(this.parsed.settings[key]);
    };
    const { effect, keys } = changeEffect(differs);
    if (keys.length > 0) this.changeEmitter.fire({ effect, keys, previous });
  }

  private static read(): ParsedSettings {
    const config = vscode.workspace.getConfiguration(SECTION);
    return parseSettings((key) => config.inspect(key), vscode.workspace.isTrusted);
  }

  /** Opens the Settings editor filtered to this extension (or to one setting). */
  static open(key?: SettingKey): Thenable<unknown> {
    return vscode.commands.executeCommand(VSCODE_COMMANDS.openSettings, key ? `${SECTION}.${key}` : `@ext:triton-chatglm.triton-chatglm`);
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
  }
}
