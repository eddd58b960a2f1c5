// What the model's middle text becomes (core/completion/postProcess.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { postProcess, type PostProcessInput } from '../../../src/core/completion/postProcess';

const base: PostProcessInput = { raw: '', mode: 'line', linePrefix: '', lineSuffix: '', suffix: '', previousLine: '' };
const run = (over: Partial<PostProcessInput>) => postProcess({ ...base, ...over });

describe('postProcess', () => {
  it('LINE: the first line only, trailing space dropped', () => {
    assert.equal(run({ raw: 'os.path.join(a, b)  \nprint(1)\n', linePrefix: 'p = ' }), 'os.path.join(a, b)');
    assert.equal(run({ raw: 'x\r\ny', linePrefix: 'a = ' }), 'x');
  });

  it('LINE: closers already after the cursor are not repeated', () => {
    assert.equal(run({ raw: 'a, b)', linePrefix: 'f(', lineSuffix: ')', suffix: ')\n' }), 'a, b');
    assert.equal(run({ raw: 'name}")', linePrefix: 'print(f"{', lineSuffix: '")', suffix: '")' }), 'name}');
    assert.equal(run({ raw: 'x)', linePrefix: 'f(', lineSuffix: ')', suffix: ')' }), 'x');
  });

  it('BLOCK: stops at the first line that dedents out of the block, indentation kept', () => {
    const raw = 'if x:\n        return 1\n    return 2\ndef g():\n    pass\n';
    assert.equal(run({ mode: 'block', raw, linePrefix: '    ', previousLine: 'def f(x):' }), 'if x:\n        return 1\n    return 2');
    assert.equal(run({ mode: 'block', raw: '    total = 0\n    return total\n\nprint(f())', linePrefix: '', previousLine: 'def f():' }),
      '    total = 0\n    return total');
    assert.equal(run({ mode: 'block', raw: 'a();\n\tb();\n}\nrest', linePrefix: '\t', previousLine: 'void f() {', tabSize: 4 }), 'a();\n\tb();');
  });

  it('BLOCK: ends before lines the file already has after the cursor', () => {
    const suffix = '\n    return result\n';
    assert.equal(run({ mode: 'block', raw: 'result = []\n    for x in xs:\n        result.append(x)\n    return result', linePrefix: '    ', suffix, previousLine: 'def f(xs):' }),
      'result = []\n    for x in xs:\n        result.append(x)');
  });

  it('never a suggestion that only repeats the line (or what follows the cursor), nor blank text', () => {
    assert.equal(run({ raw: 'x = compute()', linePrefix: '    ', previousLine: '    x = compute()' }), '');
    assert.equal(run({ raw: 'return x', linePrefix: 'return x' }), '');
    assert.equal(run({ raw: ')', linePrefix: 'f(a', lineSuffix: ')' }), '');
    assert.equal(run({ raw: '  \n  ', linePrefix: 'x' }), '');
    assert.equal(run({ mode: 'block', raw: '\n\n', linePrefix: '    ', previousLine: 'def f():' }), '');
  });

  it('Chinese text and tabs come through as written', () => {
    assert.equal(run({ raw: '你好，世界")', linePrefix: 'print("', lineSuffix: '")' }), '你好，世界');
    assert.equal(run({ mode: 'block', raw: '\tfmt.Println("好")\n', linePrefix: '', previousLine: 'func main() {' }), '\tfmt.Println("好")');
  });

  it('LINE output is one line and never ends in white space; BLOCK never dedents below its first line (property)', () => {
    fc.assert(fc.property(fc.string({ maxLength: 80 }), fc.string({ maxLength: 10 }), (raw, lineSuffix) => {
      const out = run({ raw, linePrefix: 'x = ', lineSuffix: lineSuffix.replace(/\n/g, '') });
      assert.ok(!out.includes('\n') && out === out.trimEnd());
    }));
    const line = fc.tuple(fc.constantFrom('', ' ', '  ', '    ', '\t'), fc.constantFrom('a', 'b()', '', 'return')).map(([i, t]) => i + t);
    fc.assert(fc.property(fc.array(line, { maxLength: 8 }), (lines) => {
      const out = run({ mode: 'block', raw: lines.join('\n'), linePrefix: '    ', previousLine: 'def f():' });
      const outLines = out.split('\n');
      const depth = (l: string) => l.replace(/\t/g, '    ').length - l.replace(/\t/g, '    ').trimStart().length;
      // The block's depth: its first non-blank line's (the cursor's indentation counts when that is the first line).
      const at = outLines.findIndex((l) => l.trim() !== '');
      const first = at === 0 ? 4 + depth(outLines[0]!) : depth(outLines[at] ?? '');
      for (const l of outLines.slice(at + 1)) if (l.trim() !== '') assert.ok(depth(l) >= first, JSON.stringify(out));
    }));
  });
});
