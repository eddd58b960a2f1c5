// The completion settings as the core uses them (read from tritonChatglm.completions.*).
import type { ExtensionSettings } from '../settings/settingsSchema';
import type { CompletionMode } from './mode';

export interface CompletionSettings {
  enabled: boolean;
  /** Per language id, with `*` for the rest. */
  languages: Readonly<Record<string, boolean>>;
  debounceMs: number;
  /** Globs of files never sent (besides the secret files that are never sent anyway). */
  exclude: readonly string[];
  maxNewTokens: Record<CompletionMode, number>;
}

export function toCompletionSettings(s: ExtensionSettings): CompletionSettings {
  return {
    enabled: s['completions.enabled'],
    languages: s['completions.languages'],
    debounceMs: s['completions.debounceMs'],
    exclude: s['completions.exclude'],
    maxNewTokens: { line: s['completions.maxLineTokens'], block: s['completions.maxBlockTokens'] },
  };
}
