import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proposeReplacements } from '../../../src/core/edit/applyToSelection';
import { targetLines, targetPhases } from '../../../src/core/edit/reviewProgress';

const doc = ['import math', '', 'def a():', '    return 1', '', 'def b():', '    return 2', ''].join('\n');
const range = (firstLine: number, lastLine: number) => {
  const lines = doc.split('\n');
  const start = lines.slice(0, firstLine).join('\n').length + (firstLine > 0 ? 1 : 0);
  const end = lines.slice(0, lastLine + 1).join('\n').length + 1; // with its line break
  return { start, end };
};

describe('the review diff\'s progress', () => {
  it('each target\'s lines in the proposed text: its own text while it waits, its rewrite once written, later ones shifted', () => {
    const targets = [range(2, 3), range(5, 6)];
    const none = proposeReplacements(doc, targets, [undefined, undefined], '\n');
    assert.deepEqual(targetLines(none.proposed, doc.length, targets, none.replacements), [{ first: 2, last: 3 }, { first: 5, last: 6 }]);
    // The first rewrite has four lines now: the second target moves two lines down.
    const first = proposeReplacements(doc, targets, ['def a():\n    """One."""\n    x = 1\n    return x', undefined], '\n');
    assert.deepEqual(targetLines(first.proposed, doc.length, targets, first.replacements), [{ first: 2, last: 5 }, { first: 7, last: 8 }]);
    const both = proposeReplacements(doc, targets, ['def a(): return 1', 'def b():\n    return 2 + 0'], '\n');
    assert.deepEqual(targetLines(both.proposed, doc.length, targets, both.replacements), [{ first: 2, last: 2 }, { first: 4, last: 5 }]);
  });

  it('phases: waiting without code, writing with its line count, complete once the review finished', () => {
    assert.deepEqual(targetPhases([undefined, 'a\nb'], false), [{ kind: 'waiting' }, { kind: 'writing', lines: 2 }]);
    assert.deepEqual(targetPhases([undefined, 'a'], true), [{ kind: 'complete' }, { kind: 'complete' }]);
  });
});
