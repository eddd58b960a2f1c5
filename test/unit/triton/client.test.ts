// TritonClient against a small local HTTP server that records requests and plays Triton's answers.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { inspect } from 'node:util';
import { streamChat } from '../../../src/core/triton/chatglm';
import { TritonClient } from '../../../src/core/triton/client';
import { TritonError } from '../../../src/core/triton/errors';
import { encodeBytesTensor } from '../../../src/core/triton/binaryTensor';
import { TestTritonClient } from '../../support/testTritonClient';

interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: Buffer }
type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void | Promise<void>;

const seen: Seen[] = [];
const routes = new Map<string, Handler>();
const closed: string[] = [];
let base = '';
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    res.on('close', () => { if (!res.writableFinished) closed.push(req.url ?? ''); });
    const h = routes.get(`${req.method} ${req.url}`);
    if (!h) { res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no route"}'); return; }
    void h(req, res, body);
  });
});

before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => { server.closeAllConnections(); server.close(); });

const json = (status: number, value: unknown): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const KEY = 'sekret-admin-key-123';
const M = 'chatglm3-6b';
const client = (extra: Partial<ConstructorParameters<typeof TritonClient>[0]> = {}) =>
  new TestTritonClient({ baseUrl: base, adminKey: KEY, headers: { 'x-extra': 'e1', 'X-Triton-Admin': 'leak' }, ...extra });

function setupModelRoutes() {
  routes.set('GET /v2/health/live', (_q, res) => { res.writeHead(200).end(); });
  routes.set('GET /v2/health/ready', (_q, res) => { res.writeHead(400).end(); });
  routes.set('GET /v2', json(200, { name: 'triton', version: '2.51.0', extensions: ['model_repository'] }));
  routes.set('POST /v2/repository/index', json(200, [{ name: M, version: '1', state: 'READY' }, { name: 'never_loaded' }]));
  routes.set(`POST /v2/repository/models/${M}/load`, json(200, {}));
  routes.set(`POST /v2/repository/models/${M}/unload`, json(200, {}));
  routes.set(`GET /v2/models/${M}/ready`, (_q, res) => { res.writeHead(200).end(); });
  routes.set(`GET /v2/models/${M}/config`, json(200, { name: M, max_batch_size: 8 }));
  routes.set(`GET /v2/models/${M}`, json(200, { name: M, versions: ['1'], platform: 'python', inputs: [], outputs: [] }));
  routes.set(`GET /v2/models/${M}/stats`, json(200, { model_stats: [{ name: M, version: '1', inference_count: 8, execution_count: 2 }] }));
  routes.set(`POST /v2/models/${M}/generate_stream`, (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end('data: {"response":"a"}\n\ndata: {"response":"","finish_reason":"stop","prompt_tokens":1,"completion_tokens":1,"history_trimmed":0,"history":"[]"}\n\n');
  });
}

test('admin key is sent only on model-repository and model-config calls; extra headers on all', async () => {
  setupModelRoutes();
  const c = client();
  seen.length = 0;
  assert.equal(await c.isLive(), true);
  assert.equal(await c.isReady(), false);
  assert.equal((await c.serverMetadata()).version, '2.51.0');
  const index = await c.repositoryIndex();
  assert.deepEqual(index[1], { name: 'never_loaded' });
  await c.loadModel(M);
  await c.unloadModel(M);
  assert.equal(await c.isModelReady(M), true);
  assert.equal((await c.modelConfig(M)).max_batch_size, 8);
  assert.equal((await c.modelMetadata(M)).platform, 'python');
  assert.equal((await c.modelStatistics(M))[0]!.execution_count, 2);
  for await (const _ of c.generateStream(M, { prompt: 'x' })) { /* drain */ }
  const adminPaths = new Set(['/v2/repository/index', `/v2/repository/models/${M}/load`, `/v2/repository/models/${M}/unload`, `/v2/models/${M}/config`]);
  assert.equal(seen.length, 11);
  for (const s of seen) {
    assert.equal(s.headers['x-extra'], 'e1', s.url);
    if (adminPaths.has(s.url)) assert.equal(s.headers['x-triton-admin'], KEY, s.url);
    else assert.equal(s.headers['x-triton-admin'], undefined, s.url);
  }
  await c.close();
});

test('load never sends config or file: overrides', async () => {
  setupModelRoutes();
  const c = client();
  seen.length = 0;
  await c.loadModel(M, { onProgress: () => undefined });
  const load = seen.filter((s) => s.url.endsWith('/load'));
  assert.equal(load.length, 1);
  const text = load[0]!.body.toString();
  assert.ok(!/config|file:/.test(text), `load body: ${text}`);
  assert.ok(text === '' || JSON.parse(text).parameters === undefined);
  await c.close();
});

test('load has no client timeout and reports progress from the index', async () => {
  let state = 'LOADING';
  routes.set('POST /v2/repository/index', (_q, res) => { res.writeHead(200).end(JSON.stringify([{ name: M, version: '1', state }])); });
  routes.set(`POST /v2/repository/models/${M}/load`, async (_q, res) => {
    await sleep(600);
    state = 'READY';
    res.writeHead(200).end();
  });
  const c = client({ requestTimeoutMs: 100 });
  const progress: (string | undefined)[] = [];
  await c.loadModel(M, { onProgress: (p) => progress.push(p.state), progressIntervalMs: 50 });
  assert.ok(progress.length >= 1, 'progress was reported');
  assert.ok(progress.includes('LOADING'));
  // A short call with the same tiny limit does time out, with a typed error (undici's timers tick every ~0.5 s).
  routes.set('GET /v2', async (_q, res) => { await sleep(2000); res.writeHead(200).end('{}'); });
  await assert.rejects(c.serverMetadata(), (e: unknown) => e instanceof TritonError && e.code === 'timeout');
  await c.destroy();
});

test('load failure keeps the reason; 403 is unauthorized; key never appears in errors or inspect', async () => {
  const reason = "load failed for model 'chatglm3-6b': version 1 is at UNAVAILABLE state: Internal: RuntimeError: no weights;\n";
  routes.set(`POST /v2/repository/models/${M}/load`, json(400, { error: reason }));
  const c = client();
  await assert.rejects(c.loadModel(M), (e: unknown) => {
    assert.ok(e instanceof TritonError);
    assert.equal(e.code, 'model-load-failed');
    assert.equal(e.details.serverMessage, reason);
    assert.ok(!JSON.stringify(e).includes(KEY));
    return true;
  });
  routes.set(`POST /v2/repository/models/${M}/load`, json(403, { error: "This API is restricted, expecting header 'x-triton-admin'" }));
  const keyless = new TritonClient({ baseUrl: base });
  await assert.rejects(keyless.loadModel(M), (e: unknown) => e instanceof TritonError && e.code === 'unauthorized');
  await keyless.destroy();
  assert.ok(!inspect(c).includes(KEY));
  assert.ok(!JSON.stringify(c).includes(KEY));
  await c.close();
});

test('waitForState polls until UNAVAILABLE; a load error while waiting for READY fails fast', async () => {
  let calls = 0;
  routes.set('POST /v2/repository/index', (_q, res) => {
    calls++;
    const row = calls < 3 ? { name: M, version: '1', state: 'UNLOADING' } : { name: M, version: '1', state: 'UNAVAILABLE', reason: 'unloaded' };
    res.writeHead(200).end(JSON.stringify([row]));
  });
  const c = client();
  const row = await c.waitForState(M, 'UNAVAILABLE', { intervalMs: 10 });
  assert.equal(row.reason, 'unloaded');
  assert.equal(calls, 3);
  routes.set('POST /v2/repository/index', json(200, [{ name: M, version: '1', state: 'UNAVAILABLE', reason: 'Internal: boom' }]));
  await assert.rejects(c.waitForState(M, 'READY', { intervalMs: 10 }), (e: unknown) => e instanceof TritonError && e.code === 'model-load-failed' && e.details.serverMessage === 'Internal: boom');
  routes.set('POST /v2/repository/index', json(200, [{ name: M }]));
  await assert.rejects(c.waitForState(M, 'READY', { intervalMs: 10, timeoutMs: 50 }), (e: unknown) => e instanceof TritonError && e.code === 'timeout');
  await c.close();
});

test('stream: chunks split inside multi-byte characters; error event mid-stream is typed', async () => {
  routes.set(`POST /v2/models/${M}/generate_stream`, async (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const bytes = Buffer.from('data: {"response":"你"}\n\ndata: {"response":"好"}\n\n');
    for (let i = 0; i < bytes.length; i += 5) { res.write(bytes.subarray(i, i + 5)); await sleep(1); }
    res.end(`data: {"error":"input 'temperature' must be between 0 and 2 (0 = greedy), got 1e+09"}\n\n`);
  });
  const c = client();
  const got: string[] = [];
  await assert.rejects(async () => {
    for await (const ev of c.generateStream(M, { prompt: 'x' })) got.push(String(ev.response));
  }, (e: unknown) => e instanceof TritonError && e.code === 'invalid-request' && e.details.inStream === true && /temperature/.test(e.message));
  assert.deepEqual(got, ['你', '好']);
  await c.close();
});

test('stream: an error status before the stream is typed (busy, not loaded)', async () => {
  const c = client();
  routes.set(`POST /v2/models/${M}/generate_stream`, json(503, { error: 'Exceeds maximum queue size' }));
  await assert.rejects(async () => { for await (const _ of c.generateStream(M, {})) { /* none */ } }, (e: unknown) => e instanceof TritonError && e.code === 'server-busy');
  routes.set(`POST /v2/models/${M}/generate_stream`, json(404, { error: "Request for unknown model: 'chatglm3-6b' has no available versions" }));
  await assert.rejects(async () => { for await (const _ of c.generateStream(M, {})) { /* none */ } }, (e: unknown) => e instanceof TritonError && e.code === 'model-not-loaded');
  await c.close();
});

function stallingStream(): Handler {
  return (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"response":"first"}\n\n');
    // then nothing: the client must give up (abort / idle timeout / break) and close the connection.
  };
}

async function waitFor(cond: () => boolean) {
  for (let i = 0; i < 500 && !cond(); i++) await sleep(10);
  assert.ok(cond(), 'condition not reached');
}

test('stream: AbortSignal cancels and closes the connection', async () => {
  routes.set(`POST /v2/models/${M}/generate_stream`, stallingStream());
  const c = client();
  closed.length = 0;
  const ac = new AbortController();
  const got: unknown[] = [];
  await assert.rejects(async () => {
    for await (const ev of c.generateStream(M, {}, { signal: ac.signal })) { got.push(ev.response); ac.abort(); }
  }, (e: unknown) => e instanceof TritonError && e.code === 'cancelled');
  assert.deepEqual(got, ['first']);
  await waitFor(() => closed.includes(`/v2/models/${M}/generate_stream`));
  // Aborted before the call: no request at all.
  seen.length = 0;
  await assert.rejects(async () => { for await (const _ of c.generateStream(M, {}, { signal: AbortSignal.abort() })) { /* none */ } }, (e: unknown) => e instanceof TritonError && e.code === 'cancelled');
  assert.equal(seen.length, 0);
  await c.close();
});

test('stream: idle timeout fires a typed timeout and closes the connection', async () => {
  routes.set(`POST /v2/models/${M}/generate_stream`, stallingStream());
  const c = client();
  closed.length = 0;
  await assert.rejects(async () => { for await (const _ of c.generateStream(M, {}, { idleTimeoutMs: 150 })) { /* wait */ } },
    (e: unknown) => e instanceof TritonError && e.code === 'timeout' && e.details.timeoutMs === 150);
  await waitFor(() => closed.length > 0);
  await c.close();
});

test('stream: leaving the loop early closes the connection', async () => {
  routes.set(`POST /v2/models/${M}/generate_stream`, stallingStream());
  const c = client();
  closed.length = 0;
  for await (const _ of c.generateStream(M, {})) break;
  await waitFor(() => closed.length > 0);
  await c.close();
});

test('streamChat: deltas then one final; non-empty final response becomes a last delta', async () => {
  routes.set(`POST /v2/models/${M}/generate_stream`, (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"model_name":"chatglm3-6b","response":"Hel"}\n\n');
    res.write('data: {"response":""}\n\n');
    res.end('data: {"response":"lo","finish_reason":"stop","prompt_tokens":5,"completion_tokens":2,"history_trimmed":1,"history":"[{\\"role\\":\\"user\\",\\"content\\":\\"hi\\"},{\\"role\\":\\"assistant\\",\\"content\\":\\"Hello\\"}]"}\n\n');
  });
  const c = client();
  seen.length = 0;
  const events = [];
  for await (const ev of streamChat(c, M, { prompt: 'hi', history: [], maxNewTokens: 4 })) events.push(ev);
  assert.deepEqual(events, [
    { type: 'delta', text: 'Hel' }, { type: 'delta', text: 'lo' },
    { type: 'final', finishReason: 'stop', promptTokens: 5, completionTokens: 2, historyTrimmed: 1,
      history: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello' }] },
  ]);
  assert.deepEqual(JSON.parse(seen[0]!.body.toString()), { prompt: 'hi', history: '[]', max_new_tokens: 4 });
  // A stream that ends without a final is an error, not a silent success.
  routes.set(`POST /v2/models/${M}/generate_stream`, (_q, res) => { res.writeHead(200).end('data: {"response":"x"}\n\n'); });
  await assert.rejects(async () => { for await (const _ of streamChat(c, M, { prompt: 'hi', history: [] })) { /* drain */ } }, /without a final/);
  await c.close();
});

test('infer with binary data round-trips through the binary extension', async () => {
  routes.set(`POST /v2/models/${M}/infer`, (req, res, body) => {
    const n = Number(req.headers['inference-header-content-length']);
    const header = JSON.parse(body.subarray(0, n).toString());
    const size = header.inputs[0].parameters.binary_data_size as number;
    const prompt = body.subarray(n, n + size); // echo the BYTES element back as the response
    const out = Buffer.from(JSON.stringify({ model_name: M, model_version: '1', outputs: [{ name: 'response', datatype: 'BYTES', shape: [1, 1], parameters: { binary_data_size: prompt.length } }] }));
    res.writeHead(200, { 'inference-header-content-length': String(out.length), 'content-type': 'application/octet-stream' });
    res.end(Buffer.concat([out, prompt]));
  });
  const c = client();
  const r = await c.infer(M, { binary: true, inputs: [{ name: 'prompt', datatype: 'BYTES', shape: [1, 1], data: ['你好 233'] }] });
  assert.deepEqual(r.outputs[0]!.data, ['你好 233']);
  assert.equal(encodeBytesTensor(['你好 233']).length, 4 + Buffer.byteLength('你好 233'));
  await c.close();
});

test('metrics come from the metrics URL and are parsed', async () => {
  routes.set('GET /metrics', (_q, res) => { res.writeHead(200).end('nv_inference_count{model="chatglm3-6b",version="1"} 8\n'); });
  const c = client({ metricsUrl: `${base}/metrics` });
  const m = await c.metrics();
  assert.equal(m.samples[0]!.value, 8);
  const noMetrics = client();
  await assert.rejects(noMetrics.metricsText(), /No metrics URL/);
  await noMetrics.close();
  await c.close();
});

test('nothing listening: isLive is false and calls fail with server-not-running', async () => {
  const dead = createServer();
  await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
  const port = (dead.address() as AddressInfo).port;
  await new Promise((r) => dead.close(r));
  const c = new TestTritonClient({ baseUrl: `http://127.0.0.1:${port}` });
  assert.equal(await c.isLive(), false);
  await assert.rejects(c.serverMetadata(), (e: unknown) => e instanceof TritonError && e.code === 'server-not-running' && /Is the server running/.test(e.message));
  await assert.rejects(async () => { for await (const _ of c.generateStream(M, {})) { /* none */ } }, (e: unknown) => e instanceof TritonError && e.code === 'server-not-running');
  await c.close();
});

test('base URL: https accepted, other schemes rejected, path prefix kept', () => {
  assert.equal(new TritonClient({ baseUrl: 'https://triton.example:8443/' }).baseUrl, 'https://triton.example:8443');
  assert.equal(new TritonClient({ baseUrl: 'http://h:1/proxy/triton/' }).baseUrl, 'http://h:1/proxy/triton');
  assert.throws(() => new TritonClient({ baseUrl: 'ftp://h' }), /http or https/);
});

test('stream: after abort, events already received in the same chunk are not delivered', async () => {
  routes.set(`POST /v2/models/${M}/generate_stream`, (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"response":"1"}\n\ndata: {"response":"2"}\n\ndata: {"response":"3"}\n\n');
  });
  const c = client();
  const ac = new AbortController();
  const got: unknown[] = [];
  await assert.rejects(async () => {
    for await (const ev of c.generateStream(M, {}, { signal: ac.signal })) { got.push(ev.response); ac.abort(); }
  }, (e: unknown) => e instanceof TritonError && e.code === 'cancelled');
  assert.deepEqual(got, ['1']);
  await c.close();
});

test('ensureModelLoaded does not reload a READY model and loads otherwise', async () => {
  setupModelRoutes();
  const c = client();
  seen.length = 0;
  assert.equal(await c.ensureModelLoaded(M), 'already-ready');
  assert.ok(!seen.some((s) => s.url.endsWith('/load')));
  routes.set('POST /v2/repository/index', json(200, [{ name: M, version: '1', state: 'UNAVAILABLE', reason: 'unloaded' }]));
  assert.equal(await c.ensureModelLoaded(M), 'loaded');
  assert.equal(seen.filter((s) => s.url.endsWith('/load')).length, 1);
  await c.close();
});
