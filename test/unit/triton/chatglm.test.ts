import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildGenerateBody, parseFinal } from '../../../src/core/triton/chatglm';
import { TritonError } from '../../../src/core/triton/errors';

test('request body: snake_case inputs, history as a JSON string, absent options omitted', () => {
  const body = buildGenerateBody({
    prompt: '解释这段代码', history: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'q', metadata: '' }],
    temperature: 0.5, topP: 0.9, maxNewTokens: 64, historyLen: 0, topK: 0, repetitionPenalty: 1.2, seed: 42,
  });
  assert.deepEqual(body, {
    prompt: '解释这段代码',
    history: '[{"role":"system","content":"sys"},{"role":"user","content":"q","metadata":""}]',
    temperature: 0.5, top_p: 0.9, top_k: 0, repetition_penalty: 1.2, seed: 42, max_new_tokens: 64, history_len: 0,
  });
  assert.deepEqual(Object.keys(buildGenerateBody({ prompt: 'p', history: [] })), ['prompt', 'history']);
});

test('final outputs are parsed (scalars or one-element arrays)', () => {
  const final = parseFinal({
    response: '', finish_reason: 'length', prompt_tokens: 12, completion_tokens: [8], history_trimmed: '0',
    history: JSON.stringify([{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a', metadata: '' }]),
  }, 'm');
  assert.deepEqual(final, {
    type: 'final', finishReason: 'length', promptTokens: 12, completionTokens: 8, historyTrimmed: 0,
    history: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }],
  });
});

test('malformed finals are protocol errors, not defaults', () => {
  const ok = { finish_reason: 'stop', prompt_tokens: 1, completion_tokens: 1, history_trimmed: 0, history: '[]' };
  assert.throws(() => parseFinal({ ...ok, finish_reason: 'eos' }, 'm'), (e: unknown) => e instanceof TritonError && e.code === 'unexpected');
  assert.throws(() => parseFinal({ ...ok, prompt_tokens: undefined }, 'm'), /prompt_tokens/);
  assert.throws(() => parseFinal({ ...ok, history: 'not json' }, 'm'), /not JSON/);
  assert.throws(() => parseFinal({ ...ok, history: '[{"role":"robot","content":""}]' }, 'm'), /unknown role/);
});
