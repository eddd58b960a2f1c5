// Where the streaming renderer cuts the block that is still growing: a cut must never split what markdown joins
// (a code span, a link, an emphasis, a list item, a table row), or the streamed view would show stray markup.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseCut, codeSpans, forcedCut, inlineCut, lineStarts } from '../../src/webview/chat/blockCuts';
import { createMarkdownIt, outlineBlocks } from '../../src/webview/chat/markdownItSetup';

const md = createMarkdownIt((what) => `[image: ${what}]`);
const textOf = (html: string) => html.replace(/<[^>]*>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"')
  .replace(/&#39;/g, "'").replace(/&amp;/g, '&').replace(/\s+/g, '');

let seed = 5;
const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return (seed >>> 16) % n; };
const WORDS = ['alpha', 'beta', '**bold words**', '*em*', '_under_', 'snake_case_name', '`code span`', '``a ` b``', '[a link](https://example.com/x "a title")',
  '[ref][r]', '2 * 3', 'x_1', '~~gone~~', '中文句子。', '模型输出', '\\*escaped\\*', '&amp;', 'end.', 'Q?', '<https://example.com/auto>', '![img alt](https://example.com/p.png)'];

function paragraph(words: number): string {
  return Array.from({ length: words }, () => WORDS[rnd(WORDS.length)]!).join(rnd(5) === 0 ? '\n' : ' ');
}

describe('inlineCut', () => {
  it('cuts paragraphs only where rendering both parts alone shows the same text as rendering the whole', () => {
    let cuts = 0;
    for (let round = 0; round < 400; round += 1) {
      const p = paragraph(20 + rnd(200));
      const at = inlineCut(p, rnd(p.length));
      if (at === undefined) continue;
      cuts += 1;
      assert.ok(/\s/.test(p[at - 1]!) || /[\u4e00-\u9fff。]/.test(p[at - 1]!), `cut after white space or CJK: ${JSON.stringify(p.slice(at - 10, at + 10))}`);
      assert.match(p[at]!, /\p{L}/u);
      const whole = textOf(md.renderInline(p));
      const parts = textOf(md.renderInline(p.slice(0, at))) + textOf(md.renderInline(p.slice(at)));
      assert.equal(parts, whole, `cut at ${at} of ${JSON.stringify(p)}`);
    }
    assert.ok(cuts > 300, `${cuts} paragraphs were cut`);
  });

  it('finds no cut while a code span or a link is open, and one in text without spaces (CJK)', () => {
    assert.equal(inlineCut('before `open code span that goes on and on', 8), undefined);
    assert.equal(inlineCut('before [link text that goes on and on', 8), undefined);
    assert.equal(inlineCut('before [t](https://example.com/a "title goes on', 8), undefined);
    assert.equal(inlineCut('some **bold that goes on and on', 6), undefined);
    assert.ok((inlineCut('2 * 3 is six and 4 * 5 is twenty', 4) ?? 0) > 10, 'a lone * between spaces is no delimiter');
    const cjk = '模型输出逐步显示。'.repeat(40);
    const at = inlineCut(cjk, 100);
    assert.ok(at !== undefined && at > cjk.length / 2, String(at));
    assert.equal(cjk[at - 1], '。', 'prefers a sentence end');
  });
});

describe('chooseCut', () => {
  const cut = (live: string, context = '', min = 1) => chooseCut(live, context, outlineBlocks(md, context + live), min);

  it('cuts a list before its last item, and continues it', () => {
    const list = Array.from({ length: 30 }, (_, i) => `- item ${i}\n  more of item ${i}\n`).join('');
    const c = cut(`${list}- last`);
    assert.deepEqual(c, { offset: list.length, kind: 'list', context: '', continues: true });
    const ordered = '1. one\n2. two\n   nested para\n3. three';
    assert.equal(cut(ordered)?.offset, ordered.indexOf('3. three'));
  });

  it('cuts a table before its last row and keeps the header rows as context for the rest', () => {
    const header = '| a | b |\n|:--|--:|\n';
    const rows = Array.from({ length: 20 }, (_, i) => `| ${i} | ${i * i} |\n`).join('');
    const c = cut(`${header}${rows}| 20 | 4`);
    assert.deepEqual(c, { offset: header.length + rows.length, kind: 'table', context: header, continues: true });
    // after a cut the live text is rows only; with the context it is still a table
    const again = cut(`${rows}| 20 | 4`, header);
    assert.deepEqual(again, { offset: rows.length, kind: 'table', context: header, continues: true });
  });

  it('commits complete blocks before the last one, and never cuts below `min`', () => {
    const text = '# Title\nSome paragraph\n- a list\n- more\n\n    still the item\n';
    const c = cut(text);
    assert.equal(c?.offset, text.indexOf('- a list'), 'the indented line after the blank belongs to the list');
    assert.equal(c?.continues, false);
    assert.equal(cut('- a\n- b', '', 10), undefined);
  });

  it('cuts a blockquote only at a line that starts with ">", and indented code at a line start', () => {
    const q = '> first paragraph\n>\n> second paragraph\n>\n> third';
    assert.equal(cut(q)?.offset, q.indexOf('> third'));
    const code = '    a = 1\n    b = 2\n    c = 3';
    assert.equal(cut(code)?.offset, code.indexOf('    c = 3'));
  });
});

describe('forcedCut and lineStarts', () => {
  it('falls back to the last line break, then the last space, never splitting a surrogate pair', () => {
    assert.equal(forcedCut(`${'x'.repeat(100)}\n${'y'.repeat(10)}`, 100), 101);
    assert.equal(forcedCut(`${'x'.repeat(100)} ${'y'.repeat(10)}`, 100), 101);
    const emoji = '😀'.repeat(100);
    const at = forcedCut(emoji, 101);
    assert.equal(at % 2, 0, 'a whole number of code points');
    assert.deepEqual(lineStarts('a\nbb\n'), [0, 2, 5]);
  });

  it('never cuts inside a code span: closed ones are skipped whole, an open one is cut before', () => {
    const closed = `${'w '.repeat(60)}\`a b c d e f g h i j k l m n o p q r s t u v w x y z ${'z '.repeat(60)}\` tail`;
    const cut = forcedCut(closed, 150);
    const [span] = codeSpans(closed);
    assert.ok(cut <= span![0] || cut >= span![1], `cut ${cut} outside the span ${span}`);
    const open = `${'w '.repeat(60)}\`${'code [x](https://attacker.example/c) '.repeat(20)}`;
    const at = forcedCut(open, 400);
    assert.equal(at, open.indexOf('`'), 'before the span that is still open');
    assert.deepEqual(codeSpans('a \\`b` `` c ` d `` `e'), [[5, 13], [16, 21]], 'escaped backtick, run lengths, open span to the end');
    // every forced cut of random paragraphs keeps each code span of the whole in one piece
    for (let round = 0; round < 200; round += 1) {
      const text = paragraph(40 + rnd(200));
      const c = forcedCut(text, Math.max(2, Math.floor(text.length * 0.8)));
      for (const [a, b] of codeSpans(text)) assert.ok(c <= a || c >= b, `cut ${c} splits span [${a}, ${b}) of ${JSON.stringify(text)}`);
    }
  });
});
