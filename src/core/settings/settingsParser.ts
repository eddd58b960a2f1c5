// Turns what VS Code's `inspect()` reports into validated settings. Machine-scoped
// and restricted settings come from user settings only: a workspace (a cloned repository) must not choose the
// docker binary, mounted paths, ports or the server URL; in an untrusted workspace that is also what VS Code's
// restricted mode promises. Invalid values fall back to the default and are reported, never thrown.
import { DEPRECATED_SETTINGS, SETTINGS, SETTING_KEYS, SECTION, type ExtensionSettings, type SettingEffect, type SettingKey } from './settingsSchema';

/** The subset of vscode's `WorkspaceConfiguration.inspect()` result that we read. */
export interface InspectedValue {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export type SettingProblem =
  | { key: SettingKey; kind: 'invalid'; value: unknown }
  /** A workspace value that was not used: restricted/machine setting (untrusted says why it matters). */
  | { key: SettingKey; kind: 'ignoredWorkspaceValue'; untrusted: boolean }
  | { key: SettingKey; kind: 'portConflict'; with: SettingKey; value: number }
  /** A deprecated setting the user set: it still works; `use` replaces it. */
  | { key: SettingKey; kind: 'deprecated'; use: SettingKey };

/** Problems that make a managed start pointless (docker would refuse the arguments). */
export function blocksStart(problems: readonly SettingProblem[]): SettingProblem | undefined {
  return problems.find((p) => p.kind === 'portConflict');
}

export interface ParsedSettings {
  settings: ExtensionSettings;
  problems: SettingProblem[];
}

export function parseSettings(inspect: (key: SettingKey) => InspectedValue | undefined, trusted: boolean): ParsedSettings {
  const problems: SettingProblem[] = [];
  const settings = {} as Record<SettingKey, unknown>;
  for (const key of SETTING_KEYS) {
    const spec = SETTINGS[key];
    const info = inspect(key) ?? {};
    const workspaceValue = info.workspaceFolderValue ?? info.workspaceValue;
    const userOnly = spec.scope === 'machine' || (spec.restricted && !trusted);
    let raw: unknown;
    if (userOnly) {
      raw = info.globalValue;
      if (workspaceValue !== undefined) problems.push({ key, kind: 'ignoredWorkspaceValue', untrusted: !trusted });
    } else {
      raw = workspaceValue ?? info.globalValue;
    }
    const replacement = DEPRECATED_SETTINGS[key];
    if (raw !== undefined && replacement) problems.push({ key, kind: 'deprecated', use: replacement });
    if (raw === undefined) {
      settings[key] = clone(spec.default);
    } else if ((spec.validate as (v: unknown) => boolean)(raw)) {
      settings[key] = clone(raw);
    } else {
      problems.push({ key, kind: 'invalid', value: raw });
      settings[key] = clone(spec.default);
    }
  }
  const result = settings as ExtensionSettings;
  // Ports must differ: docker would fail late with a confusing "port is already allocated". Starting refuses
  // while this problem exists (see `blocksStart`).
  const ports = ['httpPort', 'grpcPort', 'metricsPort'] as const;
  const seen = new Map<number, SettingKey>();
  for (const key of ports) {
    const other = seen.get(result[key]);
    if (other) problems.push({ key, kind: 'portConflict', with: other, value: result[key] });
    seen.set(result[key], key);
  }
  return { settings: result, problems };
}

function clone<T>(v: T): T {
  return typeof v === 'object' && v !== null ? (structuredClone(v) as T) : v;
}

/** The strongest consequence of a set of changed keys: restart > reload > reconnect > none. */
export function changeEffect(changed: (key: string) => boolean): { effect: SettingEffect; keys: SettingKey[] } {
  const order: SettingEffect[] = ['none', 'reconnect', 'reloadModel', 'restartServer'];
  let effect: SettingEffect = 'none';
  const keys: SettingKey[] = [];
  for (const key of SETTING_KEYS) {
    if (!changed(`${SECTION}.${key}`)) continue;
    keys.push(key);
    const e = SETTINGS[key].effect;
    if (order.indexOf(e) > order.indexOf(effect)) effect = e;
  }
  return { effect, keys };
}
