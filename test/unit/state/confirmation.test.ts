import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { confirmationFor, durationParts, LoadClock } from '../../../src/core/state/confirmation';

describe('destructive actions ask first while the model is loaded', () => {
  const ready = { server: 'running', model: 'ready' } as const;
  it('asks for Unload, Stop and Restart of a loaded model, with the last load time', () => {
    for (const action of ['unload', 'stop', 'restart'] as const) {
      assert.deepEqual(confirmationFor(action, ready, { askSetting: true, lastLoadMs: 130_000 }), { ask: true, action, lastLoadMs: 130_000 });
    }
    assert.deepEqual(confirmationFor('stop', ready, { askSetting: true, lastLoadMs: undefined }), { ask: true, action: 'stop', lastLoadMs: undefined });
    assert.deepEqual(confirmationFor('stop', ready, { askSetting: true, lastLoadMs: Number.NaN }), { ask: true, action: 'stop', lastLoadMs: undefined });
  });

  it('does not ask when no loaded model would be lost, or after "Don\'t ask again"', () => {
    for (const model of ['unloaded', 'loading', 'failed', 'unloading'] as const) {
      assert.deepEqual(confirmationFor('unload', { server: 'running', model }, { askSetting: true, lastLoadMs: 1 }), { ask: false }, model);
    }
    assert.deepEqual(confirmationFor('stop', { server: 'starting', model: 'unloaded' }, { askSetting: true, lastLoadMs: 1 }), { ask: false });
    assert.deepEqual(confirmationFor('unload', ready, { askSetting: false, lastLoadMs: 1 }), { ask: false });
  });

  it('splits durations as people say them', () => {
    assert.deepEqual(durationParts(130_000), { hours: 0, minutes: 2, seconds: 10 });
    assert.deepEqual(durationParts(44_600), { hours: 0, minutes: 0, seconds: 45 });
    assert.deepEqual(durationParts(3_725_000), { hours: 1, minutes: 2, seconds: 5 });
    assert.deepEqual(durationParts(-5), { hours: 0, minutes: 0, seconds: 0 });
  });
});

describe('the last load time', () => {
  it('is measured from loading to ready', () => {
    const clock = new LoadClock();
    assert.equal(clock.observe({ server: 'running', model: 'unloaded' }, 0), undefined);
    assert.equal(clock.observe({ server: 'running', model: 'loading' }, 1_000), undefined);
    assert.equal(clock.observe({ server: 'running', model: 'loading' }, 5_000), undefined);
    assert.equal(clock.observe({ server: 'running', model: 'ready' }, 131_000), 130_000);
    assert.equal(clock.observe({ server: 'running', model: 'ready' }, 140_000), undefined, 'measured once');
  });

  it('measures nothing for a load that failed, was cancelled or lost its server', () => {
    const clock = new LoadClock();
    for (const end of [{ server: 'running', model: 'failed' }, { server: 'running', model: 'unloaded' }, { server: 'error', model: 'unloaded' }] as const) {
      clock.observe({ server: 'running', model: 'loading' }, 0);
      assert.equal(clock.observe(end, 10_000), undefined);
      assert.equal(clock.observe({ server: 'running', model: 'ready' }, 20_000), undefined);
    }
  });
});
