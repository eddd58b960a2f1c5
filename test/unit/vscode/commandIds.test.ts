// The command id table (src/vscode/commandIds.ts) against package.json, and the rule that it is the only place in
// src/ (the webview aside) where the extension's command ids are spelled.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { COMMANDS, VSCODE_COMMANDS } from '../../../src/vscode/commandIds';

const root = join(__dirname, '../../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  contributes: { commands: { command: string }[]; menus?: Record<string, { command?: string; submenu?: string }[]>; keybindings?: { command: string }[]; submenus?: { id: string }[] };
};

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : n.endsWith('.ts') ? [p] : [];
  });
}

test('the table lists exactly the commands package.json contributes', () => {
  assert.deepEqual(Object.values(COMMANDS).sort(), pkg.contributes.commands.map((c) => c.command).sort());
});

test('every command in menus and keybindings is in the table', () => {
  const known = new Set<string>(Object.values(COMMANDS));
  const entries = [...Object.values(pkg.contributes.menus ?? {}).flat(), ...(pkg.contributes.keybindings ?? [])];
  const used = entries.flatMap((m) => ('command' in m && m.command ? [m.command] : []));
  assert.ok(used.length > 0);
  assert.deepEqual(used.filter((c) => !known.has(c)), []);
  // A menu entry is a command or a submenu (the ChatGLM group of the context menus), never neither.
  assert.deepEqual(entries.filter((m) => !('command' in m && m.command) && !('submenu' in m && m.submenu)), []);
  // Every submenu shown is declared (its label), and every declared one has a menu of its own and is shown.
  const declared = (pkg.contributes.submenus ?? []).map((s) => s.id).sort();
  const shown = [...new Set(entries.flatMap((m) => ('submenu' in m && m.submenu ? [m.submenu] : [])))].sort();
  assert.deepEqual(shown, declared);
  for (const id of declared) assert.ok((pkg.contributes.menus?.[id] ?? []).length > 0, `${id} has items`);
});

test('no other file in src/ spells a command id (the webview has its own protocol)', () => {
  const ids = [...Object.values(COMMANDS), ...Object.values(VSCODE_COMMANDS)];
  const offenders: string[] = [];
  for (const file of tsFiles(join(root, 'src'))) {
    const rel = relative(root, file);
    if (rel.startsWith('src/webview/') || rel === 'src/vscode/commandIds.ts') continue;
    const source = readFileSync(file, 'utf8');
    for (const id of ids) if (source.includes(`'${id}'`) || source.includes(`"${id}"`)) offenders.push(`${rel}: ${id}`);
    // Our own ids also inside template literals (VS Code's `setContext` is named in prose, too).
    for (const id of Object.values(COMMANDS)) if (source.includes(`\`${id}`)) offenders.push(`${rel}: ${id}`);
  }
  assert.deepEqual(offenders, []);
});
