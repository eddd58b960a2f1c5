import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildEditPrompt, extractCode } from '../../../src/core/edit/editPrompt';
import { proposeReplacements } from '../../../src/core/edit/applyToSelection';

const template = (instruction: string, lang: string, file: string) => `Rewrite this ${lang} code from ${file}: ${instruction}. Reply with the code only.`;

describe('Edit Selection: the prompt', () => {
  it('puts the instruction in the template and the code in a fence it cannot close', () => {
    const prompt = buildEditPrompt({ instruction: '  use math.tau ', code: 'x = "```"\r\ny = 2', languageId: 'python', fileName: 'a.py' }, template);
    assert.equal(prompt, 'Rewrite this python code from a.py: use math.tau. Reply with the code only.\n\n````python\nx = "```"\ny = 2\n````');
  });

  it('refuses an empty instruction; an odd language id is left out of the fence', () => {
    assert.throws(() => buildEditPrompt({ instruction: ' \n', code: 'x', languageId: 'python', fileName: 'a.py' }, template), RangeError);
    assert.match(buildEditPrompt({ instruction: 'go', code: 'x', languageId: 'a b', fileName: 'a' }, template), /\n```\nx\n```$/);
  });
});

describe('Edit Selection: the code of a reply', () => {
  it('takes the fenced block out of prose around it', () => {
    const reply = 'Sure! Here is the rewrite:\n\n```python\ndef f(r):\n    return math.tau * r\n```\n\nThis uses tau.';
    assert.deepEqual(extractCode(reply, { final: true }), { code: 'def f(r):\n    return math.tau * r', fenced: true, closed: true });
  });

  it('takes the first block when there are several, and a longer fence holds shorter ones', () => {
    assert.equal(extractCode('```js\na\n```\ntext\n```js\nb\n```', { final: true }).code, 'a');
    assert.equal(extractCode('````md\n```\ninner\n```\n````', { final: true }).code, '```\ninner\n```');
    assert.equal(extractCode('~~~\nx\n~~~', { final: true }).code, 'x');
  });

  it('a reply without a fence is the code itself, blank edges removed', () => {
    assert.deepEqual(extractCode('\n\nx = 1\n\n', { final: true }), { code: 'x = 1', fenced: false, closed: true });
  });

  it('while streaming: nothing before a fence, then whole lines only, the partial last line held back', () => {
    assert.equal(extractCode('Here is', { final: false }).code, '');
    assert.equal(extractCode('Here:\n``', { final: false }).code, '');
    assert.equal(extractCode('Here:\n```py', { final: false }).code, '');
    assert.deepEqual(extractCode('Here:\n```py\nline 1\nline', { final: false }), { code: 'line 1', fenced: true, closed: false });
    assert.deepEqual(extractCode('```py\nline 1\nline 2\n', { final: false }), { code: 'line 1\nline 2', fenced: true, closed: false });
    // a closing fence still arriving is not taken for code
    assert.equal(extractCode('```py\nline 1\n``', { final: false }).code, 'line 1');
    assert.deepEqual(extractCode('```py\nline 1\n```', { final: false }), { code: 'line 1', fenced: true, closed: true });
    // a final reply whose fence never closed (length limit) keeps all it has
    assert.deepEqual(extractCode('```py\nline 1\nline', { final: true }), { code: 'line 1\nline', fenced: true, closed: false });
  });
});

describe('Edit Selection: the code of a reply, as CommonMark reads fences', () => {
  // [reply, the code CommonMark's first fenced block holds (or the whole reply when it has none)]
  const CASES: [string, string][] = [
    ['~~~ py`x\ncode\n~~~', 'code'],
    ['```\ncode\n```\u00a0\nmore\n```', 'code\n```\u00a0\nmore'],
    ['```\ncode\n```\u2028\nmore', 'code\n```\u2028\nmore'],
    ['> ```py\n> x = 1\n> ```', 'x = 1'],
    ['Here:\n\n> ~~~\n> a\n>  b\n> ~~~\n\nDone.', 'a\n b'],
    ['- item\n\n  ```py\n  x\n  ```', 'x'],
    ['  ```\n  x\n   y\n```', 'x\n y'],
    ['```py`\nx\n```', ''], // not an opening fence (a backtick in the info string); the last line opens one
    ['    ```\n    x\n    ```', '    ```\n    x\n    ```'],
    ['```\nx\n  ```', 'x'],
    ['````\nx\n```\n````', 'x\n```'],
    ['~~~\nx\n```\n~~~', 'x\n```'],
    ['```\nx\n``` y\n```', 'x\n``` y'],
    ['Text\n```\nx\n```', 'x'],
    ['```\n```', ''],
    ['\t```\nx\n```', ''], // indented code, a paragraph, then an empty fence that never closes
  ];
  it(`agrees with CommonMark in all ${CASES.length} cases`, () => {
    const wrong = CASES.filter(([reply, code]) => extractCode(reply, { final: true }).code !== code).map(([reply]) => reply);
    assert.deepEqual(wrong, []);
  });

  it('while streaming, a fence in a quote yields its whole lines', () => {
    assert.deepEqual(extractCode('> ```py\n> a\n> b', { final: false }), { code: 'a', fenced: true, closed: false });
    assert.deepEqual(extractCode('> ```py\n> a\n> ```', { final: false }), { code: 'a', fenced: true, closed: true });
  });
});

describe('Edit Selection: one proposal per selection', () => {
  const doc = 'a = 1\nb = 2\nc = 3\n';
  it('replaces every target with its own code, in document order, whatever order they came in', () => {
    const b = doc.indexOf('b');
    const p = proposeReplacements(doc, [{ start: b, end: b + 5 }, { start: 0, end: 5 }], ['B = 20', 'A = 10'], '\n');
    assert.equal(p.proposed, 'A = 10\nB = 20\nc = 3\n');
    assert.deepEqual(p.replacements, [{ start: 0, end: 5, text: 'A = 10' }, { start: b, end: b + 5, text: 'B = 20' }]);
  });

  it('a target without code yet keeps its text; line endings follow the document', () => {
    const crlf = 'a = 1\r\nb = 2\r\n';
    const p = proposeReplacements(crlf, [{ start: 0, end: 7 }, { start: 7, end: 14 }], [undefined, 'x\ny'], '\r\n');
    assert.equal(p.proposed, 'a = 1\r\nx\r\ny\r\n');
    assert.deepEqual(p.replacements, [{ start: 7, end: 14, text: 'x\r\ny\r\n' }]);
  });

  it('overlapping targets are refused, not merged', () => {
    assert.throws(() => proposeReplacements(doc, [{ start: 0, end: 8 }, { start: 6, end: 10 }], [undefined, 'x'], '\n'), RangeError);
  });
});
