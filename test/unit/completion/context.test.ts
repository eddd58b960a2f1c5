// The cursor's surroundings (core/completion/context.ts, mode.ts, references.ts): budgets cut on line bounds,
// prefix nearer the cursor kept, LF whatever the file uses, LINE vs BLOCK by where the cursor is.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { cursorContext, keepHead, keepTail } from '../../../src/core/completion/context';
import { languageTag } from '../../../src/core/completion/languageTag';
import { chooseMode, worthCompleting } from '../../../src/core/completion/mode';
import { excerpt, pickReferences } from '../../../src/core/completion/references';

const at = (text: string, languageId = 'python') => {
  const offset = text.indexOf('|');
  return { text: text.slice(0, offset) + text.slice(offset + 1), offset, path: 'src/a.py', languageId };
};

describe('cursorContext', () => {
  it('splits at the cursor and reads the cursor line and the line above', () => {
    const ctx = cursorContext(at('import os\n\ndef f(x):\n    return x +| 1\n'));
    assert.equal(ctx.prefix, 'import os\n\ndef f(x):\n    return x +');
    assert.equal(ctx.suffix, ' 1\n');
    assert.equal(ctx.linePrefix, '    return x +');
    assert.equal(ctx.lineSuffix, ' 1');
    assert.equal(ctx.previousLine, 'def f(x):');
    assert.equal(ctx.mode, 'line');
    assert.equal(ctx.eol, '\n');
  });

  it('start and end of the file', () => {
    const start = cursorContext(at('|x = 1\n'));
    assert.deepEqual([start.prefix, start.suffix, start.linePrefix, start.previousLine], ['', 'x = 1\n', '', '']);
    const end = cursorContext(at('x = 1\ny = |'));
    assert.deepEqual([end.prefix, end.suffix, end.lineSuffix, end.previousLine], ['x = 1\ny = ', '', '', 'x = 1']);
  });

  it('CRLF files: LF in the request, CRLF remembered for the inserted text', () => {
    const ctx = cursorContext(at('def f():\r\n    |\r\n    pass\r\n'));
    assert.equal(ctx.prefix, 'def f():\n    ');
    assert.equal(ctx.suffix, '\n    pass\n');
    assert.equal(ctx.eol, '\r\n');
    assert.equal(ctx.mode, 'block');
  });

  it('tabs and Chinese text pass through untouched', () => {
    const ctx = cursorContext(at('func main() {\n\t// 打印问候\n\tfmt.Println("你好|")\n}', 'go'));
    assert.equal(ctx.linePrefix, '\tfmt.Println("你好');
    assert.equal(ctx.lineSuffix, '")');
    assert.equal(ctx.previousLine, '\t// 打印问候');
  });

  it('the prefix keeps what is nearest the cursor, the suffix what follows it, both cut on lines', () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i}`);
    const text = `${lines.join('\n')}|\n${lines.join('\n')}`;
    const ctx = cursorContext(at(text), { prefixChars: 50, suffixChars: 20, referenceChars: 0 });
    assert.ok(ctx.prefix.endsWith('line 99'));
    assert.ok(ctx.prefix.length <= 50 && ctx.prefix.startsWith('line '), ctx.prefix);
    assert.ok(ctx.suffix.startsWith('\nline 0\n') && ctx.suffix.length <= 20 && ctx.suffix.endsWith('\n'), JSON.stringify(ctx.suffix));
  });

  it('budget cuts never exceed the budget nor split a surrogate pair (property)', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.nat(200), (text, max) => {
      for (const cut of [keepTail(text, max), keepHead(text, max)]) {
        assert.ok(cut.length <= Math.max(max, 0) || text.length <= max);
        assert.ok(!/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(cut), JSON.stringify(cut));
      }
      assert.ok(text.endsWith(keepTail(text, max)));
      assert.ok(text.startsWith(keepHead(text, max)));
    }));
  });
});

describe('LINE vs BLOCK', () => {
  it('an empty line after a block opener asks for a block; the rest for a line', () => {
    assert.equal(chooseMode('    ', '', 'def f(x):'), 'block');
    assert.equal(chooseMode('', '', 'function f() {'), 'block');
    assert.equal(chooseMode('  ', '', 'items.forEach((x) => {  // each'), 'block');
    assert.equal(chooseMode('    ', '', 'if x > 1:  # big'), 'block');
    assert.equal(chooseMode('    ', '', 'x = 1'), 'line', 'an ordinary empty line');
    assert.equal(chooseMode('def f(x):', '', 'import os'), 'line', 'end of a non-empty line');
    assert.equal(chooseMode('print(', ')', 'def f():'), 'line', 'inside a line');
  });

  it('not in the middle of a word; before closers and quotes, yes', () => {
    assert.ok(worthCompleting(''));
    assert.ok(worthCompleting(')'));
    assert.ok(worthCompleting('")  '));
    assert.ok(!worthCompleting('bar)'));
    assert.ok(!worthCompleting('_x'));
  });
});

describe('references', () => {
  it('recently edited files first (newest first), then open ones; the current file never; within the budget', () => {
    const refs = pickReferences([
      { path: 'open.py', text: 'o = 1\n' },
      { path: 'old.py', text: 'old = 1\n', editedAt: 1 },
      { path: 'src/a.py', text: 'me\n', editedAt: 9 },
      { path: 'new.py', text: 'new = 1\n', editedAt: 5 },
      { path: 'blank.py', text: '  \n' },
    ], 'src/a.py', { totalChars: 100, perFileChars: 50, maxFiles: 3 });
    assert.deepEqual(refs.map((r) => r.path), ['new.py', 'old.py', 'open.py']);
    const budgeted = pickReferences([{ path: 'a', text: 'x\n'.repeat(50) }, { path: 'b', text: 'y\n'.repeat(50) }], 'c', { totalChars: 30, perFileChars: 20, maxFiles: 5 });
    assert.ok(budgeted.reduce((n, r) => n + r.text.length, 0) <= 30);
    assert.equal(budgeted[0]!.text, 'x\n'.repeat(10));
  });

  it('an excerpt is whole lines around the last edit', () => {
    const text = Array.from({ length: 50 }, (_, i) => `l${i}`).join('\n');
    const cut = excerpt(text, text.indexOf('l30'), 30);
    assert.ok(cut.includes('l30'), cut);
    assert.ok(/^l\d+\n/.test(cut) && cut.length <= 30, cut);
  });
});

describe('###LANGUAGE: tag', () => {
  it('the language\'s name as CodeGeeX4\'s guide writes it; blank when unknown (the guide\'s advice when unsure)', () => {
    assert.deepEqual(['python', 'typescriptreact', 'cpp', 'shellscript', 'go', 'plaintext', 'brainfuck'].map(languageTag),
      ['Python', 'TypeScript', 'C++', 'Shell', 'Go', '', '']);
  });
});
