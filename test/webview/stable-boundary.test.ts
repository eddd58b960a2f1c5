// The cut points of incremental rendering: a wrong cut would render half a code block or a list as something else.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BlockScanner, findStableBoundary, openFenceOf } from '../../src/webview/block-scanner';

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
        fed = text.slice(0, fed.length + 1 + rnd(rnd(3) === 0 ? 40 : 4));
        const boundary = scanner.scan(fed);
        assert.equal(boundary, findStableBoundary(fed, 0), `boundary of ${JSON.stringify(fed)}`);
        const tail = fed.slice(boundary);
        const open = openFenceOf(tail);
        const own = scanner.openFence;
        assert.deepEqual(own && { ...own, start: own.start - boundary, codeStart: own.codeStart - boundary }, open, `open fence of ${JSON.stringify(fed)}`);
      }
    }
  });

  it('reads each line once while one block grows (no rescan of the block per frame)', () => {
    const scanner = new BlockScanner(0);
    let text = 'intro\n\n```python\n';
    for (let i = 0; i < 5_000; i += 1) {
      text += `value_${i} = ${i}`;
      scanner.scan(text); // a frame in the middle of a line
      text += '\n';
      scanner.scan(text);
    }
    assert.equal(scanner.openFence?.codeStart, 'intro\n\n```python\n'.length);
    assert.equal(scanner.linesRead, text.split('\n').length - 1, 'every complete line read exactly once');
  });
});
