// Typing through a shown suggestion reuses it (core/completion/cache.ts); debounce + cancel-previous (requestGate.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompletionCache } from '../../../src/core/completion/cache';
import { RequestGate } from '../../../src/core/completion/requestGate';

describe('CompletionCache', () => {
  it('returns the rest of a suggestion while the user types its start, and nothing once they type otherwise', () => {
    const cache = new CompletionCache();
    cache.put('file:///a.py', 'x = ', '\n', 'compute(1)');
    assert.equal(cache.get('file:///a.py', 'x = ', '\n'), 'compute(1)');
    assert.equal(cache.get('file:///a.py', 'x = comp', '\n'), 'ute(1)');
    assert.equal(cache.get('file:///a.py', 'x = compute(1)', '\n'), undefined, 'typed all of it: nothing left to show');
    assert.equal(cache.get('file:///a.py', 'x = cat', '\n'), undefined);
    assert.equal(cache.get('file:///a.py', 'x = comp', '\nmore'), undefined, 'the text after the cursor changed');
    assert.equal(cache.get('file:///b.py', 'x = comp', '\n'), undefined, 'another document');
    cache.forget('file:///a.py');
    assert.equal(cache.get('file:///a.py', 'x = ', '\n'), undefined);
  });

  it('keeps the newest entries up to its capacity', () => {
    const cache = new CompletionCache(2);
    for (const p of ['a', 'b', 'c']) cache.put('d', p, '', `${p}!`);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('d', 'a', ''), undefined);
    assert.equal(cache.get('d', 'c', ''), 'c!');
  });
});

describe('RequestGate', () => {
  it('a newer request aborts the one before it, during its debounce or while it runs', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const gate = new RequestGate();
    const first = gate.begin(100);
    t.mock.timers.tick(50);
    const second = gate.begin(100);
    await assert.rejects(first, { name: 'AbortError' });
    t.mock.timers.tick(100);
    const running = await second;
    assert.equal(running.aborted, false);
    const third = gate.begin(100);
    assert.equal(running.aborted, true, 'the running request is aborted by the next keystroke');
    t.mock.timers.tick(100);
    const signal = await third;
    gate.finish(signal);
    gate.cancelPrevious();
    assert.equal(signal.aborted, false, 'a finished request is not cancelled afterwards');
    assert.deepEqual(gate.counts, { started: 2, cancelled: 2 });
  });

  it('follows an outer signal (the editor\'s cancellation token)', async () => {
    const gate = new RequestGate();
    const outer = new AbortController();
    const signal = await gate.begin(0, outer.signal);
    outer.abort();
    assert.equal(signal.aborted, true);
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(gate.begin(0, aborted.signal), { name: 'AbortError' });
  });
});
