import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LoadPhases } from '../../../src/core/session/loadPhase';

describe('load progress in phases', () => {
  it('steps, then the weights shard by shard, then warming up; Triton\'s own lines change nothing', () => {
    const p = new LoadPhases();
    assert.deepEqual(p.step('writing-config'), { kind: 'step', step: 'writing-config' });
    assert.deepEqual(p.step('loading-weights'), { kind: 'loading-weights' });
    assert.equal(p.logLine('TRITONBACKEND_ModelInstanceInitialize: chatglm3-6b_0_0 (GPU device 0)'), undefined);
    assert.equal(p.logLine('loading: chatglm3-6b:1'), undefined);
    assert.deepEqual(p.logLine('chatglm3: loading weights 1/7 (model-00001-of-00007.safetensors)'), { kind: 'loading-weights', shard: { index: 1, total: 7 } });
    assert.deepEqual(p.logLine('chatglm3: loading weights 3/7 (model-00003-of-00007.safetensors)'), { kind: 'loading-weights', shard: { index: 3, total: 7 } });
    assert.equal(p.logLine('chatglm3: loading weights 3/7 (model-00003-of-00007.safetensors)'), undefined, 'unchanged');
    assert.equal(p.logLine('chatglm3: loading weights 2/7 (a second instance)'), undefined, 'never backwards');
    assert.equal(p.logLine('chatglm3: native engine: 28 layers, hidden 4096'), undefined);
    assert.deepEqual(p.logLine('chatglm3: engine native on cuda:0, scheduler continuous, decoupled=True'), { kind: 'warming-up' });
    assert.equal(p.logLine('chatglm3: loading weights 1/7 (instance 2)'), undefined, 'warming up stays');
  });

  it('log lines outside the weights step are not progress; nonsense counts are ignored', () => {
    const p = new LoadPhases();
    p.step('waiting-live');
    assert.equal(p.logLine('chatglm3: loading weights 1/2 (x)'), undefined);
    p.step('loading-weights');
    assert.equal(p.logLine('chatglm3: loading weights 3/2 (x)'), undefined);
    assert.equal(p.logLine('chatglm3: loading weights 0/2 (x)'), undefined);
  });
});
