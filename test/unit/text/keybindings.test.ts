import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { commandKeyBinding, keyLabel } from '../../../src/core/text/keybindings';

const manifest = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as unknown;

test('the manifest\'s own bindings of Explain and Edit Selection, as the chat\'s welcome names them', () => {
  const explain = commandKeyBinding(manifest, 'tritonChatglm.explainSelection');
  const edit = commandKeyBinding(manifest, 'tritonChatglm.editSelection');
  assert.deepEqual(explain, { key: 'ctrl+alt+e', mac: 'cmd+alt+e' });
  assert.deepEqual(edit, { key: 'ctrl+alt+u', mac: 'cmd+alt+u' });
  assert.equal(keyLabel(explain!, false), 'Ctrl+Alt+E');
  assert.equal(keyLabel(explain!, true), '⌥⌘E');
  assert.equal(keyLabel(edit!, false), 'Ctrl+Alt+U');
  assert.equal(keyLabel(edit!, true), '⌥⌘U');
});

test('labels as VS Code writes them: modifier order, named keys, chords, no Mac key of its own', () => {
  assert.equal(keyLabel({ key: 'alt+shift+ctrl+k' }, false), 'Ctrl+Shift+Alt+K');
  assert.equal(keyLabel({ key: 'ctrl+l' }, true), '⌃L', 'a binding without a Mac key keeps Ctrl on the Mac');
  assert.equal(keyLabel({ key: 'ctrl+enter', mac: 'cmd+enter' }, true), '⌘↩');
  assert.equal(keyLabel({ key: 'escape' }, false), 'Escape');
  assert.equal(keyLabel({ key: 'ctrl+k ctrl+e', mac: 'cmd+k cmd+e' }, false), 'Ctrl+K Ctrl+E');
  assert.equal(keyLabel({ key: 'ctrl+k ctrl+e', mac: 'cmd+k cmd+e' }, true), '⌘K ⌘E');
  assert.equal(keyLabel({ key: 'shift+alt+f12' }, false), 'Shift+Alt+F12');
});

test('an unknown command, a malformed manifest or key: no binding', () => {
  assert.equal(commandKeyBinding(manifest, 'tritonChatglm.noSuchCommand'), undefined);
  assert.equal(commandKeyBinding(null, 'x'), undefined);
  assert.equal(commandKeyBinding({ contributes: { keybindings: 'ctrl+e' } }, 'x'), undefined);
  assert.equal(commandKeyBinding({ contributes: { keybindings: [{ command: 'x', key: '<b>ctrl+e</b>' }] } }, 'x'), undefined);
  assert.deepEqual(commandKeyBinding({ contributes: { keybindings: [{ command: 'x', key: 'Ctrl+E', mac: 42 }] } }, 'x'), { key: 'ctrl+e' });
});
