import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildExplainPrompt, fenceFor, usableSelections } from '../../../src/core/explain/explainPrompt';

const instruction = (lang: string, file: string) => `Explain this ${lang} code from ${file}.`;

test('the prompt carries the language id, the file name and the code in a fence', () => {
  const r = buildExplainPrompt({ text: 'const a = 1;', languageId: 'typescript', fileName: 'a.ts' }, 1000, instruction);
  assert.equal(r.prompt, 'Explain this typescript code from a.ts.\n\n```typescript\nconst a = 1;\n```');
  assert.equal(r.trimmed, false);
  assert.equal(r.keptChars, 12);
});

test('oversized selections are trimmed on a line boundary and reported', () => {
  const text = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
  const r = buildExplainPrompt({ text, languageId: 'python', fileName: 'x.py' }, 50, instruction);
  assert.equal(r.trimmed, true);
  assert.equal(r.originalChars, text.length);
  assert.ok(r.keptChars <= 50);
  assert.ok(r.prompt.includes('line 0\n'));
  assert.ok(!r.prompt.includes('line 99'));
  const body = r.prompt.split('```python\n')[1]!.split('\n```')[0]!;
  assert.ok(text.startsWith(`${body}\n`), 'the kept code ends on a whole line');
});

test('trimming counts characters, not UTF-16 halves', () => {
  const r = buildExplainPrompt({ text: '😀'.repeat(10), languageId: 'plaintext', fileName: 'e.txt' }, 4, instruction);
  assert.equal(r.keptChars, 4);
  assert.ok(r.prompt.includes('😀😀😀😀\n'));
  assert.ok(!r.prompt.includes('\uFFFD'));
});

test('code containing backtick fences cannot close the prompt fence', () => {
  assert.equal(fenceFor('no ticks'), '```');
  assert.equal(fenceFor('a ```` b'), '`````');
  const r = buildExplainPrompt({ text: '```\nrm -rf /\n```', languageId: 'markdown', fileName: 'r.md' }, 1000, instruction);
  assert.ok(r.prompt.includes('````markdown\n```\nrm -rf /\n```\n````'));
});

test('a strange language id is not put into the fence info string', () => {
  const r = buildExplainPrompt({ text: 'x', languageId: 'a b\n```', fileName: 'f' }, 10, () => 'Explain.');
  assert.equal(r.prompt, 'Explain.\n\n```\nx\n```');
});

test('usable selections: blank ones dropped, duplicates removed, document order', () => {
  const out = usableSelections([
    { text: 'b', start: 20, end: 21 },
    { text: '   ', start: 5, end: 8 },
    { text: 'a', start: 1, end: 2 },
    { text: 'a', start: 1, end: 2 },
  ]);
  assert.deepEqual(out.map((s) => s.start), [1, 20]);
});
