// The one escape for server and file-name text in messages: controls, bidi and invisible characters as \u{…}.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeForMessage } from '../../../src/core/text/escapeForMessage';

test('control characters, newlines and escape sequences are written as \\u{…}', () => {
  assert.equal(escapeForMessage('a\u0001b'), 'a\\u{1}b');
  assert.equal(escapeForMessage('x.json\nerror: fake line'), 'x.json\\u{A}error: fake line');
  assert.equal(escapeForMessage('\r\t'), '\\u{D}\\u{9}');
  assert.equal(escapeForMessage('\u001b[2J\u001b]0;title\u0007'), '\\u{1B}[2J\\u{1B}]0;title\\u{7}');
  assert.equal(escapeForMessage('\u007f\u0085\u009b'), '\\u{7F}\\u{85}\\u{9B}');
});

test('bidi controls, zero-width characters, tags and lone surrogates are marked', () => {
  assert.equal(escapeForMessage('invoice\u202Etxt.exe'), 'invoice\\u{202E}txt.exe');
  assert.equal(escapeForMessage('a\u2066b\u2069'), 'a\\u{2066}b\\u{2069}');
  assert.equal(escapeForMessage('a\u200Bb\uFEFF'), 'a\\u{200B}b\\u{FEFF}');
  assert.equal(escapeForMessage('x\u{E0041}'), 'x\\u{E0041}');
  assert.equal(escapeForMessage('a\u2028b'), 'a\\u{2028}b');
  assert.equal(escapeForMessage('a\uD800b'), 'a\\u{D800}b');
});

test('readable text is left as it is: non-ASCII names, emoji, backslashes, spaces', () => {
  for (const s of ['docs/说明.md', 'images/logo (1).png', 'C:\\Users\\me', 'café ☕', '👩‍💻 ❤️', '']) assert.equal(escapeForMessage(s), s);
});
