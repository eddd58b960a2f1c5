// Stop sequences over a stream of deltas: nothing of a stop sequence is ever sent, text that only looked like its
// start is sent once it cannot be one, and a stop split across deltas is found.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { StopMatcher } from '../../../src/core/openai';

function run(stops: string[], deltas: string[]): { text: string; stopped: boolean } {
  const m = new StopMatcher(stops);
  let text = '';
  for (const d of deltas) {
    const step = m.push(d);
    text += step.text;
    if (step.stopped) return { text, stopped: true };
  }
  return { text: text + m.end(), stopped: false };
}

test('a stop split across deltas ends the text before it', () => {
  assert.deepEqual(run(['END'], ['abc E', 'N', 'D and more']), { text: 'abc ', stopped: true });
  assert.deepEqual(run(['\n\n', '###'], ['line\n', '\nnext']), { text: 'line', stopped: true });
  assert.deepEqual(run(['xyz', 'b'], ['axy', 'b']), { text: 'axy', stopped: true }, 'the earliest stop wins');
  // "b" completes before "abc" could, in one delta or two: the answer is the same however the text is split.
  assert.deepEqual(run(['abc', 'b'], ['abc']), { text: 'a', stopped: true });
  assert.deepEqual(run(['abc', 'b'], ['a', 'bc']), { text: 'a', stopped: true });
  assert.deepEqual(run(['bc', 'abc'], ['xabc']), { text: 'x', stopped: true }, 'of two ending together, the longer');
});

test('text that only began like a stop sequence is sent when it turns out not to be one, and at the end', () => {
  const m = new StopMatcher(['END']);
  assert.deepEqual(m.push('the E'), { text: 'the ', stopped: false });
  assert.deepEqual(m.push('N'), { text: '', stopped: false });
  assert.deepEqual(m.push('x'), { text: 'ENx', stopped: false });
  assert.deepEqual(m.push('E'), { text: '', stopped: false });
  assert.equal(m.end(), 'E');
  assert.deepEqual(run([], ['a', 'b']), { text: 'ab', stopped: false });
});

test('property: the output is the text before the first stop (or all of it), however it is split', () => {
  const alphabet = fc.constantFrom('a', 'b', 'c', '\n');
  const word = fc.array(alphabet, { minLength: 1, maxLength: 4 }).map((a) => a.join(''));
  fc.assert(fc.property(fc.array(word, { minLength: 1, maxLength: 3 }), fc.array(fc.array(alphabet, { maxLength: 6 }).map((a) => a.join('')), { maxLength: 12 }), (stops, deltas) => {
    const full = deltas.join('');
    // The first stop to complete (smallest end; of two ending together, the longer) cuts the text at its start.
    const hits = stops.map((s) => ({ at: full.indexOf(s), end: full.indexOf(s) + s.length })).filter((h) => h.at >= 0);
    hits.sort((x, y) => x.end - y.end || x.at - y.at);
    const expected = hits.length ? { text: full.slice(0, hits[0].at), stopped: true } : { text: full, stopped: false };
    assert.deepEqual(run(stops, deltas), expected);
  }), { numRuns: 3000 });
});
