// Reads the settings through `inspect()` (so workspace values of restricted settings can be ignored), re-reads
// them on change or when the workspace becomes trusted, reports what a change requires, writes them and opens
// them in the Settings editor, both where they apply (remote settings in a remote window).
import * as vscode from 'vscode';
import { changeEffect, parseSettings, type ParsedSettings, type SettingProblem } from '../../core/settings/settingsParser';
import { EXTENSION_ID, VSCODE_COMMANDS } from '../commandIds';
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

  /**
   * Opens the Settings editor filtered to this extension (or to one setting), on the tab where the settings
   * exist: in a remote window (Remote-SSH, WSL, code-server) machine-scoped settings apply only from the remote
   * settings, and the User tab would say "No Settings Found"; the Remote tab also shows the window-scoped ones.
   */
  static open(key?: SettingKey): Thenable<unknown> {
    const query = key ? `${SECTION}.${key}` : `@ext:${EXTENSION_ID}`;
    if (vscode.env.remoteName !== undefined) return vscode.commands.executeCommand(VSCODE_COMMANDS.openRemoteSettings, { query });
    return vscode.commands.executeCommand(VSCODE_COMMANDS.openSettings, query);
  }

  /**
   * Writes a setting where it applies. ConfigurationTarget.Global is the user's settings; for a machine-scoped
   * setting in a remote window VS Code writes it to the remote machine's settings instead (its configuration
   * service routes USER writes of MACHINE-scoped keys to USER_REMOTE), which is where it takes effect.
   */
  async update<K extends SettingKey>(key: K, value: ExtensionSettings[K] | undefined): Promise<void> {
    await vscode.workspace.getConfiguration(SECTION).update(key, value, vscode.ConfigurationTarget.Global);
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
  }
}
