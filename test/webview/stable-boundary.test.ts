// The cut points of incremental rendering: a wrong cut would render half a code block or a list as something else.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BlockScanner, findStableBoundary, openFenceOf } from '../../src/webview/chat/blockScanner';

describe('findStableBoundary', () => {
  it('cuts after a blank line once the next line starts unindented', () => {
    assert.equal(findStableBoundary('para one\n\n', 0), 0, 'next line unknown yet');
    assert.equal(findStableBoundary('para one\n\nP', 0), 10);
    assert.equal(findStableBoundary('para one\n\npara two\n\n- item', 0), 20);
    assert.equal(findStableBoundary('1. item\n\n    continued', 0), 0, 'indented continuation belongs to the list');
  });

  it('never cuts inside a fence; cuts right after it closes', () => {
    const open = 'intro\n\n```python\nx = 1\n\n\ny = 2\n';
    assert.equal(findStableBoundary(open, 0), 7);
    const closed = `${open}\`\`\`\nafter`;
    assert.equal(findStableBoundary(closed, 0), closed.indexOf('after'));
    assert.equal(findStableBoundary('~~~~\na\n~~~\n\nb\n~~~~\nz', 0), '~~~~\na\n~~~\n\nb\n~~~~\n'.length, 'a shorter closer does not close');
    assert.equal(findStableBoundary('```js\na\n````\nrest', 0), '```js\na\n````\n'.length, 'a longer closer does');
    assert.equal(findStableBoundary('``` not `a` fence\n\nnext', 0), '``` not `a` fence\n\n'.length, 'backticks in the info string: not a fence');
  });

  it('resumes from a previous boundary', () => {
    const text = 'a\n\nb\n\nc\n\nd';
    const first = findStableBoundary(text.slice(0, 5), 0);
    assert.equal(first, 3);
    assert.equal(findStableBoundary(text, first), text.length - 1);
  });
});

describe('openFenceOf', () => {
  it('finds the unclosed fence at the end of the tail, with its info string', () => {
    assert.deepEqual(openFenceOf('text\n```ts title\nconst a = 1;\n'), { start: 5, codeStart: 17, info: 'ts title' });
    assert.equal(openFenceOf('```ts\na\n```\n'), undefined);
    assert.equal(openFenceOf('```ts'), undefined, 'the opener line is not complete yet');
  });
});

/** The batch algorithm the scanner replaced (it re-read the whole tail each frame): the reference to agree with. */
function reference(text: string): { boundary: number; open?: { start: number; codeStart: number; info: string } } {
  const FENCE = /^ {0,3}(`{3,}|~{3,})([^`]*)$/;
  const opener = (line: string) => {
    const m = FENCE.exec(line);
    return m && (m[1]![0] === '~' || !m[2]!.includes('`')) ? { char: m[1]![0]!, len: m[1]!.length, info: m[2]!.trim() } : undefined;
  };
  const closes = (line: string, f: { char: string; len: number }) => {
    const m = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
    return !!m && m[1]![0] === f.char && m[1]!.length >= f.len;
  };
  let boundary = 0;
  let fence: { char: string; len: number; info: string; start: number; codeStart: number } | undefined;
  let pendingBlank = -1;
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const line = text.slice(pos, nl >= 0 ? nl : text.length);
    const next = nl >= 0 ? nl + 1 : text.length;
    if (pendingBlank >= 0 && line.trim() !== '') {
      if (!/^[ \t]/.test(line)) boundary = pendingBlank;
      pendingBlank = -1;
    }
    if (nl < 0) break;
    if (fence) {
      if (closes(line, fence)) { fence = undefined; boundary = next; }
    } else {
      const o = opener(line);
      if (o) fence = { ...o, start: pos, codeStart: next };
      else if (line.trim() === '') pendingBlank = next;
    }
    pos = next;
  }
  return fence ? { boundary, open: { start: fence.start, codeStart: fence.codeStart, info: fence.info } } : { boundary };
}

describe('BlockScanner (incremental)', () => {
  // Texts with fences (backtick and tilde, longer closers, backticks in info strings), blank lines, indented lines.
  const pieces = ['para one\n', '\n', '    indented\n', '```py\n', 'x = 1\n', '\n', '\n', '```\n', '~~~~\n', '~~~\n', '~~~~~\n',
    '- item\n', '  cont\n', '``` not `a` fence\n', '````js\n', '```\n', '````\n', 'tail words', ' \t\n', '> quote\n', '   ```\n'];
  let seed = 11;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return (seed >>> 16) % n; };

  it('finds the same boundaries and open fence as a scan of the whole text, however the text arrives', () => {
    for (let round = 0; round < 300; round += 1) {
      const text = Array.from({ length: 4 + rnd(30) }, () => pieces[rnd(pieces.length)]!).join('');
      const scanner = new BlockScanner(0);
      let fed = '';
      while (fed.length < text.length) {
        const next = text.slice(0, fed.length + 1 + rnd(rnd(3) === 0 ? 40 : 4));
        const boundary = scanner.feed(next.slice(fed.length));
        fed = next;
        const expected = reference(fed);
        assert.equal(boundary, expected.boundary, `boundary of ${JSON.stringify(fed)}`);
        assert.deepEqual(scanner.openFence, expected.open, `open fence of ${JSON.stringify(fed)}`);
        assert.equal(findStableBoundary(fed, 0), expected.boundary);
        assert.deepEqual(openFenceOf(fed), reference(fed).open);
      }
    }
  });

  it('reads each line once, fed only what arrived (no rescan of the block per frame)', () => {
    const scanner = new BlockScanner(0);
    let text = 'intro\n\n```python\n';
    scanner.feed(text);
    for (let i = 0; i < 5_000; i += 1) {
      const half = `value_${i} = ${i}`;
      scanner.feed(half); // a frame in the middle of a line
      scanner.feed('\n');
      text += `${half}\n`;
    }
    assert.equal(scanner.openFence?.codeStart, 'intro\n\n```python\n'.length);
    assert.equal(scanner.linesRead, text.split('\n').length - 1, 'every complete line read exactly once');
  });
});
