// The endpoint's HTTP side without a Triton server (loopback only): the API key, the body limit, bad JSON and wrong
// types, unknown models and paths, all in OpenAI's error shape; and the rule that a non-loopback address needs a key.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { checkOpenAiOptions, endpointPlan, errorBodySchema, isLoopbackHost, modelListSchema, OpenAiConfigError, startOpenAiServer, type RunningOpenAiServer } from '../../../src/core/openai';
import { restrictedKeys } from '../../../src/core/settings/settingsSchema';

const KEY = 'sk-test-key';
let server: RunningOpenAiServer;

const backend = { client: () => undefined, model: 'chatglm3-6b', defaults: () => ({ temperature: 0.8, topP: 0.8, maxNewTokens: 512 }), idleTimeoutMs: 10_000 };

async function call(path: string, init: RequestInit & { key?: string | null } = {}): Promise<{ status: number; body: unknown; headers: Headers }> {
  const { key = KEY, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (key !== null) headers.set('authorization', `Bearer ${key}`);
  if (rest.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  const res = await fetch(`${server.url.replace(/\/v1$/, '')}${path}`, { ...rest, headers });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

function openAiError(r: { status: number; body: unknown }, status: number, param: string | null, code?: string) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  const body = errorBodySchema.parse(r.body);
  assert.equal(body.error.param, param);
  if (code) assert.equal(body.error.code, code);
  return body.error;
}

const chatBody = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'chatglm3-6b', messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('OpenAI endpoint over HTTP, no Triton behind it', () => {
  before(async () => {
    server = await startOpenAiServer({ backend, host: '127.0.0.1', port: 0, apiKey: KEY, maxBodyBytes: 64 * 1024 });
  });
  after(async () => server?.close());

  test('the API key: missing or wrong → 401, right → served', async () => {
    openAiError(await call('/v1/models', { key: null }), 401, null, 'invalid_api_key');
    openAiError(await call('/v1/models', { key: 'sk-test-kez' }), 401, null, 'invalid_api_key');
    openAiError(await call('/v1/models', { key: `${KEY}x` }), 401, null, 'invalid_api_key');
    const ok = await call('/v1/models');
    assert.equal(ok.status, 200);
    assert.deepEqual(modelListSchema.parse(ok.body).data.map((m) => m.id), ['chatglm3-6b']);
    assert.equal((await call('/v1/models/chatglm3-6b')).status, 200);
    openAiError(await call('/v1/models/gpt-4o'), 404, 'model', 'model_not_found');
  });

  test('bodies: too large → 413, not JSON / empty / not an object → 400, wrong types name the field', async () => {
    openAiError(await call('/v1/chat/completions', { method: 'POST', body: chatBody({ padding: 'x'.repeat(70 * 1024) }) }), 413, null, 'request_too_large');
    openAiError(await call('/v1/chat/completions', { method: 'POST', body: '{"model": "chatglm3-6b", "messages": [' }), 400, null, 'invalid_json');
    openAiError(await call('/v1/chat/completions', { method: 'POST', body: '' }), 400, null, 'invalid_json');
    openAiError(await call('/v1/chat/completions', { method: 'POST', body: '[1, 2]' }), 400, null, 'invalid_type');
    openAiError(await call('/v1/chat/completions', { method: 'POST', body: chatBody({ temperature: 'warm' }) }), 400, 'temperature', 'invalid_type');
    openAiError(await call('/v1/chat/completions', { method: 'POST', body: chatBody({ n: 3 }) }), 400, 'n');
    openAiError(await call('/v1/completions', { method: 'POST', body: JSON.stringify({ model: 'chatglm3-6b', prompt: 7 }) }), 400, 'prompt', 'invalid_type');
  });

  test('only JSON bodies, and only requests addressed to a loopback name (DNS rebinding)', async () => {
    openAiError(await call('/v1/chat/completions', { method: 'POST', body: chatBody(), headers: { 'content-type': 'text/plain' } }), 415, null, 'unsupported_media_type');
    openAiError(await call('/v1/chat/completions', { method: 'POST', body: 'model=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, null, 'unsupported_media_type');
    const { request } = await import('node:http');
    const status = (host: string) => new Promise<number>((resolve, reject) => {
      const r = request(`${server.url}/models`, { headers: { host, authorization: `Bearer ${KEY}` } }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
      r.on('error', reject);
      r.end();
    });
    assert.equal(await status('evil.example:8003'), 403);
    assert.equal(await status('localhost:8003'), 200);
    assert.equal(await status('127.0.0.1'), 200);
    assert.equal(await status('[::1]:8003'), 200);
  });

  test('an unknown model is 404, no running server 503; unknown paths 404 and wrong methods 405', async () => {
    openAiError(await call('/v1/chat/completions', { method: 'POST', body: chatBody({ model: 'gpt-4o' }) }), 404, 'model', 'model_not_found');
    openAiError(await call('/v1/chat/completions', { method: 'POST', body: chatBody() }), 503, null, 'server_not_running');
    openAiError(await call('/v1/embeddings', { method: 'POST', body: '{}' }), 404, null, 'unknown_url');
    const wrong = await call('/v1/chat/completions');
    openAiError(wrong, 405, null, 'method_not_allowed');
    assert.equal(wrong.headers.get('allow'), 'POST');
    // After all of these the server still answers.
    assert.equal((await call('/v1/models')).status, 200);
  });
});

test('any address but loopback needs an API key', async () => {
  for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost']) assert.equal(isLoopbackHost(host), true, host);
  for (const host of ['0.0.0.0', '::', '192.168.1.5', 'example.com', '10.0.0.1']) assert.equal(isLoopbackHost(host), false, host);
  assert.throws(() => checkOpenAiOptions('0.0.0.0', undefined), OpenAiConfigError);
  assert.throws(() => checkOpenAiOptions('192.168.1.5', ''), /API key/);
  assert.doesNotThrow(() => checkOpenAiOptions('0.0.0.0', 'k'));
  assert.doesNotThrow(() => checkOpenAiOptions('127.0.0.1', undefined));
  await assert.rejects(startOpenAiServer({ backend, host: '0.0.0.0', port: 0 }), OpenAiConfigError);
});

test('the extension serves the endpoint on loopback only, when its setting is on', () => {
  assert.equal(endpointPlan({ 'openai.enabled': false, 'openai.port': 8003 }), undefined);
  assert.deepEqual(endpointPlan({ 'openai.enabled': true, 'openai.port': 9123 }), { host: '127.0.0.1', port: 9123 });
  assert.equal(restrictedKeys().includes('tritonChatglm.openai.enabled'), true, 'restricted in untrusted workspaces');
  assert.equal(restrictedKeys().includes('tritonChatglm.openai.port'), true);
});
