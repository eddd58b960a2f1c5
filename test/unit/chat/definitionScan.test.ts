import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_SCANNED_SYMBOLS, scanDefinitions } from '../../../src/core/chat/definitionScan';

const shape = (text: string) => scanDefinitions(text).map((s) => `${s.kind} ${s.name} ${s.startLine + 1}-${s.endLine + 1}`);

describe('the word scan behind #symbol without a language server', () => {
  it('Python: functions and classes with their indented blocks, methods inside, blank lines within a block kept', () => {
    const py = [
      'import math', '', 'def circle_area(radius):', '    return math.pi * radius ** 2', '',
      'class Shape:', '    def area(self):', '        """Area."""', '', '        return 0', '', 'async def fetch(url):', '    pass',
    ].join('\n');
    assert.deepEqual(shape(py), ['function circle_area 3-4', 'class Shape 6-10', 'function area 7-10', 'function fetch 12-13']);
  });

  it('TypeScript/JavaScript: functions, arrow functions, classes, interfaces, types; the closing brace belongs to the block', () => {
    const ts = [
      'export function circleArea(r: number): number {', '  return Math.PI * r * r;', '}', '',
      'export const hyp = (a: number, b: number) => Math.hypot(a, b);',
      'const LIMIT = 10;',
      'export interface Shape {', '  area(): number;', '}',
      'export type Id = string;',
      'export default class Circle {', '  r = 1;', '}',
    ].join('\n');
    assert.deepEqual(shape(ts), [
      'function circleArea 1-3', 'function hyp 5-5', 'variable LIMIT 6-6', 'interface Shape 7-9', 'interface Id 10-10', 'class Circle 11-13',
    ]);
  });

  it('Rust and Go: fn, struct, enum, trait, func with a receiver', () => {
    assert.deepEqual(shape('pub fn area(r: f64) -> f64 {\n    r * r\n}\nstruct P { x: i32 }\nenum E { A }\ntrait T {}'),
      ['function area 1-3', 'struct P 4-4', 'enum E 5-5', 'struct T 6-6']);
    assert.deepEqual(shape('func (c Circle) Area() float64 {\n\treturn c.r\n}'), ['function Area 1-3']);
  });

  it('nothing that merely mentions a keyword: calls, comments, strings, words inside a line', () => {
    assert.deepEqual(shape('# def not_this\nprint("class Foo")\nx = define(1)\nreturn function_name()\n  // function hidden'), []);
    assert.deepEqual(shape(''), []);
  });

  it('stops at its limit on a huge generated file', () => {
    const big = Array.from({ length: MAX_SCANNED_SYMBOLS + 50 }, (_, i) => `def f${i}():\n    pass`).join('\n');
    assert.equal(scanDefinitions(big).length, MAX_SCANNED_SYMBOLS);
  });
});
