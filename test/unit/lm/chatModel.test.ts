import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatModelAvailability, chatModelInfo, gpuNames, RENDERED_LIMITS, serverLimitsFromConfig } from '../../../src/core/lm';
import type { LifecycleState, ModelState, ServerState } from '../../../src/core/state/lifecycle';

const state = (server: ServerState, model: ModelState, mode: LifecycleState['mode'] = 'managed'): LifecycleState => ({ mode, server, model });

describe('which model the language model provider offers', () => {
  it('offers the model while it is loaded, whatever autoStart says', () => {
    for (const autoStart of [false, true]) {
      assert.equal(chatModelAvailability({ state: state('running', 'ready'), autoStart, setupOk: undefined }), 'ready');
      assert.equal(chatModelAvailability({ state: state('running', 'ready', 'external'), autoStart, setupOk: undefined }), 'ready');
    }
  });

  it('offers nothing that is not loaded without autoStart (unload, stop, loading, failed, setup needed)', () => {
    for (const [server, model] of [['running', 'unloaded'], ['stopped', 'unloaded'], ['running', 'loading'], ['running', 'failed'],
      ['setup', 'unloaded'], ['starting', 'unloaded'], ['stopping', 'unloaded'], ['error', 'unloaded']] as const) {
      assert.equal(chatModelAvailability({ state: state(server, model), autoStart: false, setupOk: true }), 'none', `${server}/${model}`);
    }
  });

  it('with autoStart offers a model it can start: managed mode, setup complete or the server up', () => {
    const a = (server: ServerState, model: ModelState, setupOk: boolean | undefined, mode: LifecycleState['mode'] = 'managed') =>
      chatModelAvailability({ state: state(server, model, mode), autoStart: true, setupOk });
    assert.equal(a('stopped', 'unloaded', true), 'startable');
    assert.equal(a('stopped', 'unloaded', undefined), 'none', 'no setup check has passed yet');
    assert.equal(a('stopped', 'unloaded', false), 'none');
    assert.equal(a('setup', 'unloaded', false), 'none');
    assert.equal(a('running', 'unloaded', true), 'startable');
    assert.equal(a('starting', 'unloaded', true), 'startable');
    assert.equal(a('running', 'loading', true), 'startable');
    assert.equal(a('running', 'failed', true), 'none', 'a failed model needs the user');
    assert.equal(a('error', 'unloaded', true), 'none');
    assert.equal(a('stopped', 'unloaded', true, 'external'), 'none', 'an external server is not ours to start');
  });
});

describe('the limits offered', () => {
  it('reads max_input_tokens and max_new_tokens_limit from the model config Triton returns', () => {
    const config = { name: 'chatglm3-6b', max_batch_size: 8, parameters: { max_input_tokens: { string_value: '4096' }, max_new_tokens_limit: { string_value: '1024' }, engine: { string_value: 'native' } } };
    assert.deepEqual(serverLimitsFromConfig(config), { maxInputTokens: 4096, maxOutputTokens: 1024 });
  });

  it('keeps the rendered limit for a parameter that is missing or malformed', () => {
    assert.deepEqual(serverLimitsFromConfig({ parameters: {} }), RENDERED_LIMITS);
    assert.deepEqual(serverLimitsFromConfig(undefined), RENDERED_LIMITS);
    assert.deepEqual(serverLimitsFromConfig({ parameters: { max_input_tokens: { string_value: 'lots' }, max_new_tokens_limit: { string_value: '0' } } }), RENDERED_LIMITS);
    assert.deepEqual(serverLimitsFromConfig({ parameters: { max_input_tokens: { string_value: '2000' }, max_new_tokens_limit: { string_value: '-5' } } }),
      { maxInputTokens: 2000, maxOutputTokens: RENDERED_LIMITS.maxOutputTokens });
    assert.deepEqual(RENDERED_LIMITS, { maxInputTokens: 6144, maxOutputTokens: 2048 });
  });

  it('describes the model with those limits, text only, no tool calling', () => {
    const info = chatModelInfo({ availability: 'ready', limits: { maxInputTokens: 4096, maxOutputTokens: 1024 }, serverUrl: 'http://127.0.0.1:8000', gpus: [] });
    assert.equal(info.id, 'chatglm3-6b');
    assert.equal(info.family, 'chatglm3');
    assert.equal(info.maxInputTokens, 4096);
    assert.equal(info.maxOutputTokens, 1024);
    assert.deepEqual(info.capabilities, { toolCalling: false, imageInput: false });
  });

  it('names the GPUs the setup checks found', () => {
    const report = { checks: [{ id: 'docker' }, { id: 'gpu-memory', facts: { gpus: [{ name: 'NVIDIA H100 80GB HBM3' }, { name: 'NVIDIA L4' }] } }] };
    assert.deepEqual(gpuNames(report), ['NVIDIA H100 80GB HBM3', 'NVIDIA L4']);
    assert.deepEqual(gpuNames({ checks: [{ id: 'gpu-memory' }] }), []);
    assert.deepEqual(gpuNames(undefined), []);
  });
});
