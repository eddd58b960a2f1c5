// The cut points of incremental rendering: a wrong cut would render half a code block or a list as something else.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BlockScanner, findStableBoundary, openFenceOf } from '../../src/webview/chat/blockScanner';
import { lineStarts } from '../../src/webview/chat/blockCuts';
import { createMarkdownIt, outlineBlocks } from '../../src/webview/chat/markdownItSetup';
import { CORPUS } from './support/hostile-corpus';
import { SCANNER_TEXTS, UNTRUSTED_CORPUS } from './support/untrusted-answers';

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

/**
 * The scanner against markdown-it's own block parse, fed one character at a time: at every cut point (where the
 * boundary moves) the open block starts where markdown-it's last block of the text so far starts (or, right after
 * a fence closes, no block of it goes past the boundary), and no block of the whole text spans a boundary; while
 * the scanner reports an open fence, markdown-it's last block is a fence that starts on its opener line.
 */
function checkAgainstMarkdownIt(text: string): { cuts: number; fenceLines: number } {
  const md = createMarkdownIt((x) => x);
  const starts = lineStarts(text);
  const lineOf = (offset: number) => {
    const line = starts.indexOf(offset);
    assert.ok(line >= 0 || offset === text.length, `boundary ${offset} is at a line start of ${JSON.stringify(text)}`);
    return line >= 0 ? line : starts.length;
  };
  const whole = outlineBlocks(md, text);
  const scanner = new BlockScanner(0);
  let prev = 0;
  let cuts = 0;
  let fenceLines = 0;
  for (let i = 0; i < text.length; i += 1) {
    const b = scanner.feed(text[i]!);
    const fed = text.slice(0, i + 1);
    if (b !== prev) {
      cuts += 1;
      const line = lineOf(b);
      const last = outlineBlocks(md, fed).at(-1)!;
      if (fed.length > b) assert.equal(last.startLine, line, `the open block of ${JSON.stringify(fed)} starts at line ${line}, as markdown-it's last block (${last.type})`);
      else assert.ok(last.endLine <= line, `nothing of ${JSON.stringify(fed)} goes past its boundary`);
      const spanning = whole.filter((bl) => bl.startLine < line && bl.endLine > line);
      assert.deepEqual(spanning, [], `no block of the whole text spans the boundary at line ${line} of ${JSON.stringify(text)}`);
      prev = b;
    }
    const fence = scanner.openFence;
    if (fence && text[i] === '\n') {
      fenceLines += 1;
      const last = outlineBlocks(md, fed).at(-1)!;
      assert.deepEqual([last.type, last.startLine], ['fence', lineOf(fence.start)], `open fence of ${JSON.stringify(fed)}`);
    }
  }
  return { cuts, fenceLines };
}

describe('BlockScanner against markdown-it', () => {
  it('agrees at every cut point on the hostile corpora and on fences in lists, tilde info strings and lists', () => {
    let cuts = 0;
    for (const text of [CORPUS, UNTRUSTED_CORPUS, ...SCANNER_TEXTS]) cuts += checkAgainstMarkdownIt(text).cuts;
    if (process.env.SCANNER_COUNTS) console.log(`cut points: ${cuts}`);
    assert.ok(cuts >= 150, `${cuts} cut points checked`);
  });

  it('sees a tilde fence whose info string has backticks, and ends a list item\'s fence with the item', () => {
    assert.equal(findStableBoundary('~~~ `js`\ncode\n\nmore\n~~~\nafter', 0), '~~~ `js`\ncode\n\nmore\n~~~\n'.length);
    assert.equal(findStableBoundary('- a\n  ```\n  code\n\nout', 0), '- a\n  ```\n  code\n\n'.length);
    assert.equal(findStableBoundary('- a\n\n- b', 0), 0, 'the next item continues the list');
    assert.equal(findStableBoundary('- a\n\n* b', 0), '- a\n\n'.length, 'another bullet starts another list');
    assert.equal(openFenceOf('- x\n  ```\n  code\n'), undefined, 'a fence in a list item is rendered with its item');
  });

  // Texts with fences (backtick and tilde, longer closers, backticks in info strings, in list items), blank lines,
  // indented lines, lists.
  const pieces = ['para one\n', '\n', '    indented\n', '```py\n', 'x = 1\n', '\n', '\n', '```\n', '~~~~\n', '~~~\n', '~~~~~\n',
    '- item\n', '  cont\n', '``` not `a` fence\n', '~~~ `tilde` info\n', '````js\n', '```\n', '````\n', 'tail words', ' \t\n', '> quote\n', '   ```\n',
    '  ```\n', '1. one\n', '   ```\n', '2) two\n', '* star\n', '    ```\n', '- ```\n', '\t```\n', '---\n', '# head\n'];
  let seed = 11;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return (seed >>> 16) % n; };

  it('agrees on random texts of those pieces, and finds the same boundaries however the text arrives', () => {
    let cuts = 0;
    for (let round = 0; round < 400; round += 1) {
      const text = Array.from({ length: 4 + rnd(24) }, () => pieces[rnd(pieces.length)]!).join('');
      cuts += checkAgainstMarkdownIt(text).cuts;
      const scanner = new BlockScanner(0);
      let fed = '';
      while (fed.length < text.length) {
        const next = text.slice(0, fed.length + 1 + rnd(rnd(3) === 0 ? 40 : 4));
        const boundary = scanner.feed(next.slice(fed.length));
        fed = next;
        const one = new BlockScanner(0);
        for (const ch of fed) one.feed(ch);
        assert.equal(boundary, one.boundary, `boundary of ${JSON.stringify(fed)}`);
        assert.deepEqual(scanner.openFence, one.openFence, `open fence of ${JSON.stringify(fed)}`);
        assert.equal(findStableBoundary(fed, 0), one.boundary);
      }
    }
    if (process.env.SCANNER_COUNTS) console.log(`random cut points: ${cuts}`);
    assert.ok(cuts > 400, `${cuts} cut points checked`);
  });
});

describe('BlockScanner (incremental)', () => {
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
