import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkApplicable, proposeReplacement, withLineEnding } from '../../../src/core/edit/applyToSelection';

describe('Apply to Selection: the proposed document', () => {
  const doc = 'def area(r):\n    return 3.14 * r * r\n\nprint(area(2))\n';

  it('replaces exactly the selection, nothing around it', () => {
    const start = doc.indexOf('3.14');
    const p = proposeReplacement(doc, { start, end: start + 4 }, 'math.pi', '\n');
    assert.equal(p.mode, 'replace');
    assert.equal(p.replacement, 'math.pi');
    assert.equal(p.proposed, 'def area(r):\n    return math.pi * r * r\n\nprint(area(2))\n');
  });

  it('an empty selection inserts at the cursor', () => {
    const at = doc.indexOf('print');
    const p = proposeReplacement(doc, { start: at, end: at }, 'import math\n', '\n');
    assert.equal(p.mode, 'insert');
    assert.equal(p.proposed, `${doc.slice(0, at)}import math\n${doc.slice(at)}`);
  });

  it('a selection of whole lines keeps its last line break (the next line is not joined to the code)', () => {
    const end = doc.indexOf('\n\n') + 1; // lines 1-2 with the line break of line 2
    const p = proposeReplacement(doc, { start: 0, end }, 'def area(r):\n    return math.pi * r ** 2', '\n');
    assert.equal(p.proposed, 'def area(r):\n    return math.pi * r ** 2\n\nprint(area(2))\n');
    // code that ends with its own line break gets no second one
    assert.equal(proposeReplacement(doc, { start: 0, end }, 'x = 1\n', '\n').proposed, `x = 1\n${doc.slice(end)}`);
    // a selection inside a line gains none
    assert.equal(proposeReplacement('ab\n', { start: 0, end: 1 }, 'X', '\n').proposed, 'Xb\n');
  });

  it('writes the code in the document\'s line ending, also for a CRLF whole-line selection', () => {
    const crlf = 'a\r\nb\r\nc\r\n';
    const p = proposeReplacement(crlf, { start: 3, end: 6 }, 'x\ny', '\r\n');
    assert.equal(p.replacement, 'x\r\ny\r\n');
    assert.equal(p.proposed, 'a\r\nx\r\ny\r\nc\r\n');
    assert.equal(withLineEnding('1\r\n2\r3\n4', '\n'), '1\n2\n3\n4');
    assert.equal(withLineEnding('1\r\n2\n3', '\r\n'), '1\r\n2\r\n3');
  });

  it('takes a backwards or out-of-range target as the range it covers inside the document', () => {
    assert.equal(proposeReplacement('hello', { start: 4, end: 1 }, 'EL', '\n').proposed, 'hELo');
    assert.equal(proposeReplacement('hello', { start: 3, end: 99 }, '!', '\n').proposed, 'hel!');
    assert.equal(proposeReplacement('hello', { start: -5, end: Number.NaN }, '>', '\n').proposed, '>hello');
  });
});

describe('Apply to Selection: the version rule', () => {
  it('goes ahead only on the unchanged, open document', () => {
    assert.deepEqual(checkApplicable({ version: 7 }, { closed: false, version: 7 }), { ok: true });
    assert.deepEqual(checkApplicable({ version: 7 }, { closed: false, version: 8 }), { ok: false, reason: 'changed' });
    assert.deepEqual(checkApplicable({ version: 7 }, { closed: true, version: 7 }), { ok: false, reason: 'closed' });
  });
});
