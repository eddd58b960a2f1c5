// A team deployment on real parts (issue #32): `triton-chatglm team init|keys|up` through the built CLI, Debian's
// nginx built from packages (test/docker/proxy-image.mjs) in front of two real tritonserver containers on the
// tiny engine. What goes through the proxy is asked with the project's own client (TritonClient with the key and
// the deployment's certificate pinned), and what reached Triton is read from each replica's metrics.
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Agent, request } from 'undici';
import { DEFAULT_MODEL_ID as MODEL_NAME } from '../../src/core/models/catalog';
import { streamChat, TritonClient, TritonError } from '../../src/core/triton';
import { freePort } from '../fake-docker/harness';
import { buildCli, cli, makeWeights, realDocker, type RealDocker } from './harness';

interface ProxyImageModule { ensureProxyBase(docker: { path: string; env: NodeJS.ProcessEnv }, stateDir: string, log?: (l: string) => void): string }
interface DaemonModule { stateDir(): string }

let rd: RealDocker;
let work: string;
let dir: string;
let env: NodeJS.ProcessEnv;
let ca: string;
let url: string;
let grpcPort: number;
let metricsPorts: number[];
const keys: Record<string, string> = {};
const names = { proxy: 'tcg-team-tt-proxy', r0: 'tcg-team-tt-r0', r1: 'tcg-team-tt-r1' };

const run = (...args: string[]) => cli(['team', ...args, '--dir', dir, '--docker', rd.dockerPath], env, work);
const client = (key?: string) => new TritonClient({ baseUrl: url, ca, headers: key ? { authorization: `Bearer ${key}` } : {}, requestTimeoutMs: 10_000 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, tries = 150): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < tries; i++) {
    last = await read().catch(() => undefined as T);
    if (last !== undefined && ok(last)) return last;
    await sleep(200);
  }
  throw new Error(`${what}: last value ${JSON.stringify(last)}`);
}

/** Sum of a Triton/model metric over both replicas (read on their own 127.0.0.1 metrics ports, not via the proxy). */
async function metric(name: string, ports = metricsPorts): Promise<number> {
  let sum = 0;
  for (const port of ports) {
    const r = await request(`http://127.0.0.1:${port}/metrics`).catch(() => undefined);
    if (!r) continue;
    const text = await r.body.text();
    for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm'))) sum += Number(m[1]);
  }
  return sum;
}
const requestsAtTriton = async () => (await metric('nv_inference_request_success')) + (await metric('nv_inference_request_failure'));

/** A raw HTTPS call through the proxy: status and body. */
async function raw(method: 'GET' | 'POST', path: string, key?: string, body?: string): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const dispatcher = new Agent({ connect: { ca } });
  try {
    const r = await request(`${url}${path}`, { method, dispatcher, headers: key ? { authorization: `Bearer ${key}` } : {}, ...(body ? { body } : {}) });
    return { status: r.statusCode, body: await r.body.text(), headers: r.headers };
  } finally {
    await dispatcher.close();
  }
}

async function replicaReady(name: string): Promise<number> {
  return (await raw('GET', `/team/replicas/${name}/ready`, keys.alice)).status;
}

before(async () => {
  await buildCli();
  rd = await realDocker();
  const load = async <T>(f: string) => (await import(pathToFileURL(join(__dirname, f)).href)) as T;
  const stateDir = (await load<DaemonModule>('daemon.mjs')).stateDir();
  const proxyBase = (await load<ProxyImageModule>('proxy-image.mjs')).ensureProxyBase({ path: rd.dockerPath, env: rd.env }, stateDir, (l) => console.error(l));
  work = mkdtempSync(join(tmpdir(), 'docker-team-'));
  dir = join(work, 'deploy');
  env = { ...rd.env };
  const port = await freePort();
  grpcPort = await freePort();
  // Replica i takes base+10i .. base+10i+2: find a base whose six ports are free.
  let base = 0;
  for (;;) {
    base = 20_000 + Math.floor(Math.random() * 20_000);
    const { createServer } = await import('node:net');
    const free = await Promise.all([0, 1, 2, 10, 11, 12].map((d) => new Promise<boolean>((res) => {
      const s = createServer().once('error', () => res(false)).listen(base + d, '127.0.0.1', () => s.close(() => res(true)));
    })));
    if (free.every(Boolean)) break;
  }
  metricsPorts = [base + 2, base + 12];
  // One replica per GPU, as `team init --gpus 0,1` deploys it (the stub NVIDIA hook takes device=1 without a GPU).
  const init = await run('init', '--name', 'tt', '--gpus', '0,1', '--port', String(port), '--grpc-port', String(grpcPort),
    '--replica-port', String(base), '--image', rd.image, '--proxy-image', 'triton-chatglm-team-proxy-test:latest',
    '--weights', makeWeights(work), '--no-ulimits');
  assert.equal(init.code, 0, init.stderr);
  const fingerprint = /fingerprint \(self-signed\): ([0-9A-F:]{95})/.exec(init.stdout)?.[1];
  assert.ok(fingerprint, init.stdout);
  for (const id of ['alice', 'bob']) {
    const added = await run('keys', 'add', id);
    assert.equal(added.code, 0, added.stderr);
    keys[id] = added.stdout.trim();
  }
  const up = await run('up', '--proxy-base', proxyBase, '--build-proxy');
  assert.equal(up.code, 0, up.stderr);
  ca = readFileSync(join(dir, 'nginx/tls/cert.pem'), 'utf8');
  url = `https://127.0.0.1:${port}`;
  try {
    await eventually(async () => [await replicaReady('r0'), await replicaReady('r1')], (s) => s[0] === 200 && s[1] === 200, 'both replicas ready through the proxy', 900);
  } catch (e) {
    const logs = [names.r0, names.r1, names.proxy].map((n) => {
      const l = rd.docker(['logs', '--tail', '30', n]);
      return `--- ${n}:\n${l.stdout}${l.stderr}`;
    });
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${logs.join('\n')}`);
  }
});

after(async () => {
  if (dir) await run('down');
  await rd?.release();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('team keys list shows the ids; the keys file and the access log hold no key', async () => {
  const list = await run('keys', 'list');
  assert.deepEqual(list.stdout.trim().split('\n').map((l) => l.split('\t')[0]), ['alice', 'bob']);
  const status = await run('status');
  assert.equal(status.code, 0, status.stdout);
  assert.equal(await client(keys.alice).isLive(), true);
  // nginx writes the line when it finalises the request, a moment after the answer.
  await eventually(async () => readFileSync(join(dir, 'logs/access.log'), 'utf8'), (t) => /"key_id":"alice","method":"GET","path":"\/v2\/health\/live","status":200/.test(t), 'the access log names the key id');
  const files = readFileSync(join(dir, 'nginx/keys.map'), 'utf8') + readFileSync(join(dir, 'logs/access.log'), 'utf8');
  for (const k of Object.values(keys)) assert.ok(!files.includes(k));
});

test('no key or a wrong key: 401 from the proxy, and Triton counts no request', async () => {
  const before = await requestsAtTriton();
  const body = JSON.stringify({ prompt: 'hi', max_new_tokens: 4 });
  const none = await raw('POST', `/v2/models/${MODEL_NAME}/generate_stream`, undefined, body);
  assert.equal(none.status, 401);
  assert.match(none.headers['www-authenticate'] as string, /^Bearer /);
  assert.match(JSON.parse(none.body).error, /^team proxy: missing or unknown API key/);
  assert.equal((await raw('POST', `/v2/models/${MODEL_NAME}/generate_stream`, 'tcg_not-a-key', body)).status, 401);
  await assert.rejects(async () => { for await (const _ of streamChat(client('tcg_wrong'), MODEL_NAME, { prompt: 'hi', history: [], maxNewTokens: 4 })) { /* nothing */ } },
    (e: unknown) => e instanceof TritonError && e.code === 'key-rejected');
  await sleep(500);
  assert.equal(await requestsAtTriton(), before, 'the refused requests never reached Triton');
  // The same request with a key does reach it (the count above can move).
  for await (const _ of streamChat(client(keys.alice), MODEL_NAME, { prompt: 'hi', history: [], maxNewTokens: 4 })) { /* drain */ }
  await eventually(requestsAtTriton, (n) => n === before + 1, 'one request counted');
});

test('admin APIs answer 403 from the proxy (with a valid key), whatever the path\'s spelling', async () => {
  const admin: [('GET' | 'POST'), string][] = [
    ['POST', '/v2/repository/index'], ['POST', `/v2/repository/models/${MODEL_NAME}/unload`], ['POST', `/v2/repository/models/${MODEL_NAME}/load`],
    ['GET', '/v2/systemsharedmemory/status'], ['GET', '/v2/cudasharedmemory/status'], ['GET', '/v2/trace/setting'],
    ['GET', `/v2/models/${MODEL_NAME}/trace/setting`], ['GET', '/v2/logging'], ['GET', `/v2/models/${MODEL_NAME}/config`], ['GET', '/metrics'],
    ['POST', `/v2/models/${MODEL_NAME}/generate/..%2F..%2F..%2Frepository%2Fmodels%2F${MODEL_NAME}%2Funload`],
    ['POST', `/v2/models/x/../../repository/models/${MODEL_NAME}/unload`],
  ];
  for (const [method, path] of admin) {
    const r = await raw(method, path, keys.alice);
    assert.equal(r.status, 403, `${method} ${path}: ${r.body}`);
    assert.match(JSON.parse(r.body).error, /^team proxy: this API is not available/);
  }
  await assert.rejects(client(keys.alice).modelConfig(MODEL_NAME), (e: unknown) => e instanceof TritonError && e.code === 'forbidden');
  assert.equal(await replicaReady('r0'), 200, 'the model is still loaded');
  assert.equal(await replicaReady('r1'), 200);
});

test('gRPC through the proxy: ServerLive with a key answers, without one 401, RepositoryIndex 403', async () => {
  const session = connect(`https://127.0.0.1:${grpcPort}`, { ca });
  const call = (method: string, key?: string) => new Promise<{ status: number; grpcStatus: string | undefined }>((resolve, reject) => {
    const req = session.request({
      ':method': 'POST', ':path': `/inference.GRPCInferenceService/${method}`, 'content-type': 'application/grpc', te: 'trailers',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    });
    let status = 0;
    let grpcStatus: string | undefined;
    req.on('response', (h) => { status = Number(h[':status']); grpcStatus = h['grpc-status'] as string | undefined; });
    req.on('trailers', (h) => { grpcStatus = h['grpc-status'] as string | undefined; });
    req.on('error', reject);
    req.on('data', () => undefined);
    req.on('end', () => resolve({ status, grpcStatus }));
    req.end(Buffer.alloc(5)); // one empty, uncompressed message
  });
  try {
    assert.deepEqual(await call('ServerLive', keys.alice), { status: 200, grpcStatus: '0' });
    assert.equal((await call('ServerLive')).status, 401);
    assert.equal((await call('RepositoryIndex', keys.alice)).status, 403);
  } finally {
    session.close();
  }
});

test('tokens stream through the proxy as they are generated (many reads, not one buffered body)', async () => {
  const dispatcher = new Agent({ connect: { ca } });
  try {
    const r = await request(`${url}/v2/models/${MODEL_NAME}/generate_stream`, {
      method: 'POST', dispatcher, headers: { authorization: `Bearer ${keys.alice}` },
      body: JSON.stringify({ prompt: 'count', history: '[]', max_new_tokens: 24 }),
    });
    assert.equal(r.statusCode, 200);
    let reads = 0;
    let events = 0;
    for await (const chunk of r.body) {
      reads += 1;
      events += (String(chunk).match(/^data:/gm) ?? []).length;
    }
    assert.ok(events >= 8, `events ${events}`);
    // nginx buffering the response would hand the whole (under 4 KiB) body over in one or two reads.
    assert.ok(reads >= events / 2, `${reads} reads for ${events} events`);
  } finally {
    await dispatcher.close();
  }
});

test('a client that aborts through the proxy cancels on Triton: its row is freed', async () => {
  const controller = new AbortController();
  let deltas = 0;
  await assert.rejects(async () => {
    for await (const e of streamChat(client(keys.alice), MODEL_NAME, { prompt: 'long', history: [], maxNewTokens: 2000 }, { signal: controller.signal })) {
      if (e.type === 'delta') deltas += 1;
      if (deltas === 2) {
        await eventually(() => metric('chatglm3_active_rows'), (n) => n === 1, 'the request holds a row while it streams');
        controller.abort();
      }
    }
  });
  await eventually(() => metric('chatglm3_active_rows'), (n) => n === 0, 'the aborted request\'s row is free');
});

test('a key revoked during an answer: that answer finishes, the next request is refused', async () => {
  const events: string[] = [];
  let afterRevoke = 0;
  let revoked = false;
  const answer = (async () => {
    for await (const e of streamChat(client(keys.bob), MODEL_NAME, { prompt: 'long', history: [], maxNewTokens: 250 })) {
      events.push(e.type);
      if (revoked) afterRevoke += 1;
    }
  })();
  await eventually(async () => events.length, (n) => n >= 1, 'bob\'s answer started');
  const r = await run('keys', 'revoke', 'bob');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /proxy reloaded/);
  revoked = true;
  await answer;
  assert.equal(events.at(-1), 'final', 'the answer ended normally');
  assert.ok(afterRevoke > 0, 'part of it arrived after the reload');
  await assert.rejects(client(keys.bob).modelStatistics(MODEL_NAME), (e: unknown) => e instanceof TritonError && e.code === 'key-rejected');
  assert.equal(await client(keys.alice).isLive(), true, 'other keys still work');
});

test('a replica killed mid-run: its stream ends with a clear error, the other finishes, new requests go to the survivor', async () => {
  const outcome = async (maxNewTokens = 400) => {
    try {
      for await (const _ of streamChat(client(keys.alice), MODEL_NAME, { prompt: 'long', history: [], maxNewTokens })) { /* drain */ }
      return 'finished';
    } catch (e) {
      return e instanceof TritonError ? e.code : String(e);
    }
  };
  const streams = [outcome(), outcome()];
  // least_conn: one stream on each replica.
  await eventually(() => metric('chatglm3_active_rows'), (n) => n === 2, 'two answers streaming');
  assert.deepEqual([await metric('chatglm3_active_rows', [metricsPorts[0]!]), await metric('chatglm3_active_rows', [metricsPorts[1]!])], [1, 1], 'one on each replica');
  assert.equal(rd.docker(['update', '--restart', 'no', names.r0]).status, 0);
  assert.equal(rd.docker(['kill', names.r0]).status, 0);
  const results = (await Promise.all(streams)).sort();
  assert.deepEqual(results, ['connection-lost', 'finished'], 'the cut stream says the connection was lost while the server (the proxy) still answers');
  assert.equal(await replicaReady('r0'), 502);
  assert.equal(await replicaReady('r1'), 200);
  const status = await cli(['team', 'status', '--dir', dir, '--docker', rd.dockerPath], { ...env, TRITON_CHATGLM_KEY: keys.alice }, work);
  assert.match(status.stdout, /replicas as the proxy sees them:\n {2}r0\tnot ready \(HTTP 502\)\n {2}r1\tready\n/, status.stdout + status.stderr);
  for (let i = 0; i < 4; i++) assert.equal(await outcome(8), 'finished');
  const access = readFileSync(join(dir, 'logs/access.log'), 'utf8').trim().split('\n').slice(-4).map((l) => JSON.parse(l) as { status: number; replica: string });
  assert.ok(access.every((a) => a.status === 200 && a.replica.endsWith(String(metricsPorts[1]! - 2))), JSON.stringify(access));
});
