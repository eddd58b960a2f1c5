// Keybindings as the extension's manifest contributes them ("ctrl+alt+e", "cmd+alt+e" on a Mac), found by command
// and written for people the way VS Code's own menus write them: "Ctrl+Alt+E" on Windows and Linux, "⌥⌘E" on a Mac.
// The chat panel's welcome names Explain and Edit Selection with their keys (issue #33); the host reads them from
// its package.json, so the welcome cannot drift from the real bindings.

/** One keybinding: its key and, where it differs, its Mac key (VS Code's `key` and `mac` fields). */
export interface KeyBinding {
  key: string;
  mac?: string;
}

/** What a key string may hold: lower-case words joined by '+', chords separated by a space (as package.json writes them). */
export const KEY_PATTERN = /^[a-z0-9`\-=[\]\\;',./]+(\+[a-z0-9`\-=[\]\\;',./]+)*( [a-z0-9`\-=[\]\\;',./]+(\+[a-z0-9`\-=[\]\\;',./]+)*)?$/;

/** The first keybinding the manifest contributes for `command`, or undefined (none, or not a well-formed one). */
export function commandKeyBinding(manifest: unknown, command: string): KeyBinding | undefined {
  const bindings = (manifest as { contributes?: { keybindings?: unknown } } | null)?.contributes?.keybindings;
  if (!Array.isArray(bindings)) return undefined;
  for (const b of bindings as unknown[]) {
    if (typeof b !== 'object' || b === null) continue;
    const { command: id, key, mac } = b as Record<string, unknown>;
    if (id !== command || typeof key !== 'string' || !KEY_PATTERN.test(key.toLowerCase())) continue;
    return { key: key.toLowerCase(), ...(typeof mac === 'string' && KEY_PATTERN.test(mac.toLowerCase()) ? { mac: mac.toLowerCase() } : {}) };
  }
  return undefined;
}

/** The Mac's modifier symbols, in the order macOS writes them (⌃⌥⇧⌘). */
const MAC_MODIFIERS: ReadonlyArray<readonly [string[], string]> = [[['ctrl'], '⌃'], [['alt'], '⌥'], [['shift'], '⇧'], [['cmd', 'meta', 'win'], '⌘']];
const OTHER_MODIFIERS: Record<string, string> = { ctrl: 'Ctrl', alt: 'Alt', shift: 'Shift', meta: 'Meta', cmd: 'Meta', win: 'Win' };
const NAMED_KEYS: Record<string, string> = { escape: 'Escape', enter: 'Enter', tab: 'Tab', space: 'Space', backspace: 'Backspace', delete: 'Delete', up: 'UpArrow', down: 'DownArrow', left: 'LeftArrow', right: 'RightArrow' };
const MAC_KEYS: Record<string, string> = { escape: '⎋', enter: '↩', tab: '⇥', space: '␣', backspace: '⌫', delete: '⌦', up: '↑', down: '↓', left: '←', right: '→' };

/** "Ctrl+Alt+E", or on a Mac "⌥⌘E" (its `mac` key where it has one); a chord's parts separated by a space. */
export function keyLabel(binding: KeyBinding, mac: boolean): string {
  const key = mac ? binding.mac ?? binding.key : binding.key;
  return key.split(' ').map((part) => chordPart(part, mac)).join(' ');
}

function chordPart(part: string, mac: boolean): string {
  const pieces = part.split('+');
  const main = pieces.pop() ?? '';
  const modifiers = new Set(pieces);
  if (mac) {
    const symbols = MAC_MODIFIERS.filter(([names]) => names.some((n) => modifiers.has(n))).map(([, symbol]) => symbol).join('');
    return `${symbols}${MAC_KEYS[main] ?? keyName(main)}`;
  }
  const names = ['ctrl', 'shift', 'alt', 'meta', 'cmd', 'win'].filter((m) => modifiers.has(m)).map((m) => OTHER_MODIFIERS[m]!);
  return [...names, keyName(main)].join('+');
}

function keyName(key: string): string {
  return NAMED_KEYS[key] ?? (key.length === 1 ? key.toUpperCase() : key.charAt(0).toUpperCase() + key.slice(1));
}
