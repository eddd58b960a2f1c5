import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fanout } from '../../../src/core/explain/fanout';

/** A worker whose calls stay pending until the test releases them, recording concurrency. */
function controlled<T>() {
  let active = 0;
  let maxActive = 0;
  const started: number[] = [];
  const pending = new Map<number, { resolve: (v: T) => void; reject: (e: unknown) => void }>();
  const worker = (_item: unknown, index: number) => new Promise<T>((resolve, reject) => {
    active++;
    maxActive = Math.max(maxActive, active);
    started.push(index);
    pending.set(index, {
      resolve: (v) => { active--; pending.delete(index); resolve(v); },
      reject: (e) => { active--; pending.delete(index); reject(e); },
    });
  });
  return { worker, pending, started, get maxActive() { return maxActive; } };
}

const tick = () => new Promise((r) => setImmediate(r));

test('never more than `concurrency` requests in flight, and every item gets its own request', async () => {
  const c = controlled<string>();
  const items = Array.from({ length: 20 }, (_, i) => `sel${i}`);
  const done = fanout(items, c.worker, { concurrency: 8 });
  await tick();
  assert.equal(c.pending.size, 8, 'the first 8 start at once (so the batcher can merge them)');
  while (c.pending.size > 0) {
    // Finish in reverse order to show results are still returned in input order.
    const last = Math.max(...c.pending.keys());
    c.pending.get(last)!.resolve(`answer${last}`);
    await tick();
  }
  const out = await done;
  assert.equal(c.maxActive, 8);
  assert.deepEqual([...c.started].sort((a, b) => a - b), items.map((_, i) => i));
  assert.deepEqual(out.map((o) => (o.status === 'fulfilled' ? o.value : o.status)), items.map((_, i) => `answer${i}`));
});

test('one failing item does not affect the others', async () => {
  const out = await fanout([1, 2, 3, 4], async (n) => {
    if (n === 2) throw new Error('server busy');
    return n * 10;
  }, { concurrency: 2 });
  assert.deepEqual(out[0], { status: 'fulfilled', value: 10 });
  assert.equal(out[1]?.status, 'rejected');
  assert.equal((out[1] as { error: Error }).error.message, 'server busy');
  assert.deepEqual(out.slice(2), [{ status: 'fulfilled', value: 30 }, { status: 'fulfilled', value: 40 }]);
});

test('cancelling stops new items from starting and passes the signal to running ones', async () => {
  const ctrl = new AbortController();
  const seen: (AbortSignal | undefined)[] = [];
  const c = controlled<number>();
  const done = fanout([0, 1, 2, 3, 4], (item, index, signal) => { seen.push(signal); return c.worker(item, index); }, { concurrency: 2, signal: ctrl.signal });
  await tick();
  ctrl.abort();
  c.pending.get(0)!.reject(new Error('aborted'));
  c.pending.get(1)!.resolve(1);
  const out = await done;
  assert.deepEqual(out.map((o) => o.status), ['rejected', 'fulfilled', 'skipped', 'skipped', 'skipped']);
  assert.ok(seen.every((s) => s === ctrl.signal));
});

test('progress callback sees each item once; a throwing callback does not fail the run', async () => {
  const settled: number[] = [];
  const out = await fanout(['a', 'b', 'c'], async (s) => s.toUpperCase(), {
    concurrency: 3,
    onSettled: (i) => { settled.push(i); throw new Error('ui gone'); },
  });
  assert.deepEqual(settled.sort(), [0, 1, 2]);
  assert.ok(out.every((o) => o.status === 'fulfilled'));
});

test('invalid concurrency is a clear error; no items is no work', async () => {
  await assert.rejects(fanout([1], async () => 1, { concurrency: 0 }), RangeError);
  await assert.rejects(fanout([1], async () => 1, { concurrency: 1.5 }), RangeError);
  assert.deepEqual(await fanout([], async () => 1, { concurrency: 4 }), []);
});
