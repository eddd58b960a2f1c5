// Whether completions run now, and if not why: the status bar's toggle shows it and offers the way out.
import type { CompletionSettings } from './settings';

export type CompletionAvailability =
  | { state: 'on' }
  | { state: 'off'; reason: 'disabled' | 'snoozed' | 'no-infilling' | 'untrusted'; until?: number };

export interface AvailabilityInput {
  settings: CompletionSettings;
  /** Whether the chosen model has fill-in-the-middle (its catalog entry's `fillInMiddle`). */
  modelFillsInMiddle: boolean;
  workspaceTrusted: boolean;
  /** Snoozed until this time (ms since the epoch), if at all. */
  snoozedUntil?: number;
  now: number;
}

/** For the window as a whole (the status bar); per document, the editor also checks language and file (documentFilter). */
export function completionAvailability(input: AvailabilityInput): CompletionAvailability {
  if (!input.settings.enabled) return { state: 'off', reason: 'disabled' };
  if (!input.modelFillsInMiddle) return { state: 'off', reason: 'no-infilling' };
  if (!input.workspaceTrusted) return { state: 'off', reason: 'untrusted' };
  if (input.snoozedUntil !== undefined && input.snoozedUntil > input.now) return { state: 'off', reason: 'snoozed', until: input.snoozedUntil };
  return { state: 'on' };
}

/** Per-language switch: the language's own entry, else `*`, else on. */
export function languageEnabled(languages: Readonly<Record<string, boolean>>, languageId: string): boolean {
  return languages[languageId] ?? languages['*'] ?? true;
}

/**
 * Files never sent, whatever the settings say: secrets by name (`.env`, `.env.local`, `*.pem`, `id_rsa`, …).
 * User globs (`completions.exclude`) are matched by the editor; this is the part that cannot be turned off.
 */
export function isSecretFileName(fileName: string): boolean {
  const name = fileName.split(/[\\/]/).pop()!.toLowerCase();
  return /^\.env(\..*)?$/.test(name) || /\.env$/.test(name) || /^\.?(npmrc|pypirc|netrc|pgpass)$/.test(name) ||
    /\.(pem|key|p12|pfx|keystore|jks)$/.test(name) || /^id_(rsa|dsa|ecdsa|ed25519)$/.test(name) ||
    /^(credentials|secrets?)(\.[a-z]+)?$/.test(name);
}
