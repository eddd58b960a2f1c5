// TritonClient + chatglm bridge + repository installer against the REAL tritonserver (CPU, tiny engine).
// One server for the whole file, started with the model-repository API restricted to an admin key, so every
// admin call below also proves the key is sent, and the keyless client proves it is needed.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { ChatStreamEvent } from '../../src/core/chat/messages';
import { MODEL_IDS } from '../../src/core/models/choice';
import { installRepository } from '../../src/core/repository/install';
import { chatOnce, streamChat } from '../../src/core/triton/chatglm';
import { TritonClient } from '../../src/core/triton/client';
import { TestTritonClient } from '../support/testTritonClient';
import { TritonError, type TritonErrorCode } from '../../src/core/triton/errors';
import { sumMetric } from '../../src/core/triton/prometheus';
import { diffStatistics, summarizeStatistics } from '../../src/core/triton/statistics';

interface RunningTriton {
  url: string;
  metricsUrl: string;
  log(): string;
  stop(): Promise<void>;
}
interface TritonProcessModule {
  startTritonServer(options: { repository: string; restrictedKey?: string; env?: Record<string, string>; startTimeoutMs?: number }): Promise<RunningTriton>;
  modelRepositorySource: string;
  snapshotRepositorySource(work: string): string;
  tinyEngine: string;
}

const M = 'chatglm3-6b';
const SYNC = 'chatglm3-6b-sync'; // same model with decoupled: false and a queue of 1, for /generate, /infer, busy
const KEY = `key-${process.pid}-${Date.now()}`;

let tp: TritonProcessModule;
const cpuSettings = () => ({ engine: tp.tinyEngine, instanceKind: 'cpu' as const });
let server: RunningTriton | undefined;
let admin: TestTritonClient;
let anon: TestTritonClient;
let work: string;
let repository: string;
let source: string;

async function collect(stream: AsyncIterable<ChatStreamEvent>): Promise<{ text: string; deltas: number; final: Extract<ChatStreamEvent, { type: 'final' }> }> {
  let text = '';
  let deltas = 0;
  let final: Extract<ChatStreamEvent, { type: 'final' }> | undefined;
  for await (const ev of stream) {
    assert.equal(final, undefined, 'nothing may follow the final event');
    if (ev.type === 'delta') { text += ev.text; deltas++; } else final = ev;
  }
  assert.ok(final, 'stream ended with a final event');
  return { text, deltas, final };
}

async function rejectsWith(p: Promise<unknown> | (() => Promise<unknown>), code: TritonErrorCode, message?: RegExp): Promise<TritonError> {
  let caught: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof TritonError, `expected TritonError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  if (message) assert.match(caught.message, message);
  return caught;
}

describe('Triton client against tritonserver', { timeout: 600_000 }, () => {
  before(async () => {
    tp = (await import(pathToFileURL(join(__dirname, '../support/triton-process.mjs')).href)) as TritonProcessModule;
    work = mkdtempSync(join(tmpdir(), 'triton-client-it-'));
    repository = join(work, 'model_repository');
    source = tp.snapshotRepositorySource(work);
    // The repository as the extension installs it, with the settings this CPU-only machine needs.
    // A long gather at an idle engine (queueDelayMs) makes the batching assertion independent of how slow this machine is.
    await installRepository({ source, destination: repository, settings: { ...cpuSettings(), queueDelayMs: 300 } });
    cpSync(join(repository, M), join(repository, SYNC), { recursive: true });
    const syncCfg = join(repository, SYNC, 'config.pbtxt');
    writeFileSync(syncCfg, readFileSync(syncCfg, 'utf8').replace(`name: "${M}"`, `name: "${SYNC}"`).replace('decoupled: true', 'decoupled: false')
      .replace(/max_queue_size: \d+/, 'max_queue_size: 1'));
    // Slow decoding a little so a request can be cancelled mid-stream.
    server = await tp.startTritonServer({ repository, restrictedKey: KEY, env: { TINY_ENGINE_STEP_DELAY_MS: '25' } });
    admin = new TestTritonClient({ baseUrl: server.url, metricsUrl: server.metricsUrl, adminKey: KEY });
    anon = new TestTritonClient({ baseUrl: server.url });
  });

  after(async () => {
    await admin?.destroy();
    await anon?.destroy();
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('health and server metadata', async () => {
    assert.equal(await anon.isLive(), true);
    assert.equal(await anon.isReady(), true);
    const meta = await anon.serverMetadata();
    assert.equal(meta.name, 'triton');
    assert.match(meta.version, /^2\.\d+\.\d+$/);
    assert.ok(meta.extensions.includes('model_repository'));
  });

  test('repository index: a never-loaded model has only its name', async () => {
    const rows = await admin.repositoryIndex();
    assert.deepEqual(rows.find((r) => r.name === M), { name: M });
    // One entry per catalog model (only the chosen one is ever loaded) and the test-only sync entry.
    assert.deepEqual(rows.map((r) => r.name).sort(), [...MODEL_IDS, SYNC].sort());
  });

  test('restricted API: without the admin key, index/load/config are refused (unauthorized)', async () => {
    const e = await rejectsWith(anon.loadModel(M), 'unauthorized');
    assert.match(e.details.serverMessage ?? '', /restricted/);
    assert.equal(e.details.status, 403);
    await rejectsWith(anon.repositoryIndex(), 'unauthorized');
    const wrongKey = new TritonClient({ baseUrl: server!.url, adminKey: 'wrong' });
    try {
      await rejectsWith(wrongKey.unloadModel(M), 'unauthorized');
    } finally {
      await wrongKey.destroy();
    }
  });

  test('load (with warmup) reports progress and makes the model ready', async () => {
    const progress: string[] = [];
    await admin.loadModel(M, { onProgress: (p) => progress.push(p.state ?? 'none'), progressIntervalMs: 200 });
    assert.equal(await anon.isModelReady(M), true);
    assert.equal((await admin.modelState(M))?.state, 'READY');
    const cfg = await admin.modelConfig(M);
    assert.equal(cfg.max_batch_size, 8);
    assert.equal((cfg.model_warmup as unknown[]).length, 1, 'the load ran the warmup sample');
    await rejectsWith(anon.modelConfig(M), 'unauthorized');
    const meta = await anon.modelMetadata(M);
    assert.deepEqual(meta.inputs.find((i) => i.name === 'prompt'), { name: 'prompt', datatype: 'BYTES', shape: [-1, 1] });
    // Starting the Python stub and importing torch alone takes well over one 200 ms poll interval.
    assert.ok(progress.includes('LOADING'), `progress: ${progress.join(',')}`);
    for (const s of progress) assert.ok(['none', 'LOADING', 'READY'].includes(s), s);
  });

  test('streamed answer: deltas then one final with usage and history', async () => {
    const { text, deltas, final } = await collect(streamChat(anon, M, {
      prompt: '你好，介绍一下你自己', history: [{ role: 'system', content: 'You are helpful.' }], maxNewTokens: 12, temperature: 0,
    }, { idleTimeoutMs: 60_000 }));
    assert.ok(deltas >= 1);
    assert.ok(['stop', 'length'].includes(final.finishReason));
    assert.ok(final.promptTokens > 0);
    assert.ok(final.completionTokens > 0 && final.completionTokens <= 12);
    assert.equal(final.historyTrimmed, 0);
    assert.deepEqual(final.history.slice(0, 2), [{ role: 'system', content: 'You are helpful.' }, { role: 'user', content: '你好，介绍一下你自己' }]);
    const last = final.history[final.history.length - 1]!;
    assert.equal(last.role, 'assistant');
    assert.equal(last.content, text);
  });

  test('cancel mid-stream via AbortSignal; a concurrent stream completes; the server stays healthy', async () => {
    const before = (await anon.modelStatistics(M))[0]!;
    const cancelledBefore = sumMetric(await admin.metrics(), 'chatglm3_cancelled_requests_total', { model: M });
    const ac = new AbortController();
    let cancelledAfter = 0;
    const cancelled = (async () => {
      for await (const ev of streamChat(anon, M, { prompt: 'long answer please', history: [], maxNewTokens: 2048 }, { signal: ac.signal })) {
        if (ev.type === 'delta' && ++cancelledAfter === 3) ac.abort();
      }
    })();
    const other = collect(streamChat(anon, M, { prompt: 'short answer', history: [], maxNewTokens: 20 }));
    await rejectsWith(cancelled, 'cancelled');
    assert.equal(cancelledAfter, 3, 'no event is delivered after abort');
    const done = await other;
    assert.ok(done.final.completionTokens > 0);
    assert.equal(await anon.isLive(), true);
    assert.equal(await anon.isModelReady(M), true);
    // The server saw the cancellation: the model counts it (chatglm3_cancelled_requests_total, model.py), and
    // execute() returned (Triton counted both requests) long before the cancelled row's 2048 tokens at >= 25 ms a
    // step (the tiny engine never stops by itself; sleeping steps only get longer on a slow machine: > 51 s).
    const cancelledCount = async () => sumMetric(await admin.metrics(), 'chatglm3_cancelled_requests_total', { model: M });
    const deadline = Date.now() + 45_000;
    let after = (await anon.modelStatistics(M))[0]!;
    while ((after.inference_count - before.inference_count < 2 || await cancelledCount() < cancelledBefore + 1) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      after = (await anon.modelStatistics(M))[0]!;
    }
    assert.equal(await cancelledCount(), cancelledBefore + 1, 'the model counted one cancelled request');
    assert.ok(after.inference_count - before.inference_count >= 2, 'the cancelled request ended on the server long before its 2048 tokens');
  });

  test('8 concurrent streamChat requests are generated together (the scheduler\'s rows per decode step)', async (t) => {
    // Triton hands the requests over as they come (queue delay 0 for the continuous scheduler); the idle engine
    // gathers them and its decode steps run them together: its own counters show it, not Triton's executions.
    const counters = async () => {
      const text = await admin.metrics();
      return { steps: sumMetric(text, 'chatglm3_decode_steps_total', { model: M }), rows: sumMetric(text, 'chatglm3_decode_rows_total', { model: M }) };
    };
    const before = (await anon.modelStatistics(M))[0]!;
    const countsBefore = await counters();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) =>
      collect(streamChat(anon, M, { prompt: `question ${i}`, history: [], maxNewTokens: 6, temperature: 0.5 }))));
    for (const r of results) assert.ok(r.final.completionTokens > 0);
    const decoded = results.reduce((n, r) => n + r.final.completionTokens - 1, 0); // a row's first token comes from its prefill
    let counts = await counters();
    for (const deadline = Date.now() + 10_000; counts.rows - countsBefore.rows < decoded && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 100)); // the engine hands its figures over when it goes idle
      counts = await counters();
    }
    const rows = counts.rows - countsBefore.rows;
    const steps = counts.steps - countsBefore.steps;
    const after = (await anon.modelStatistics(M))[0]!;
    const d = diffStatistics(before, after);
    t.diagnostic(`8 requests: ${rows} rows in ${steps} decode steps; Triton: ${d.executionCount} executions, batch sizes ${JSON.stringify(d.batches)}`);
    assert.equal(d.inferenceCount, 8);
    assert.equal(rows, decoded, 'every token after a row\'s first came from a decode step');
    assert.ok(rows / steps > 2, `${rows} rows in ${steps} decode steps: one request at a time would be 1 row per step`);
    const total = summarizeStatistics(after);
    assert.ok(total.averageQueueNs > 0 && total.averageComputeNs > 0);
    const metrics = await admin.metrics();
    assert.ok(sumMetric(metrics, 'nv_inference_count', { model: M }) >= 8);
  });

  test('invalid requests fail alone with a typed invalid-request error carrying the model\'s message', async () => {
    const good = collect(streamChat(anon, M, { prompt: 'fine', history: [], maxNewTokens: 4 }));
    const huge = rejectsWith(() => collect(streamChat(anon, M, { prompt: 'x', history: [], temperature: 1e9 })), 'invalid-request', /temperature/);
    const nan = rejectsWith(() => collect(streamChat(anon, M, { prompt: 'x', history: [], temperature: Number.NaN })), 'invalid-request');
    const empty = rejectsWith(() => collect(streamChat(anon, M, { prompt: '   ', history: [] })), 'invalid-request', /prompt/);
    const [e1] = await Promise.all([huge, nan, empty]);
    assert.match(e1.details.serverMessage ?? '', /temperature/);
    assert.ok((await good).final.completionTokens > 0, 'the valid request in the same batch still completed');
  });

  test('streaming off: chatOnce (over /generate_stream), /infer with JSON and binary tensors, a full queue is server-busy', async () => {
    await admin.loadModel(SYNC);
    const once = await chatOnce(anon, SYNC, { prompt: 'hello', history: [], maxNewTokens: 5 });
    assert.ok(once.final.completionTokens > 0);
    assert.equal(once.final.history[once.final.history.length - 1]!.content, once.text);
    for (const binary of [false, true]) {
      const res = await anon.infer(SYNC, {
        binary,
        inputs: [
          { name: 'prompt', datatype: 'BYTES', shape: [1, 1], data: ['你好'] },
          { name: 'max_new_tokens', datatype: 'INT64', shape: [1, 1], data: [3] },
        ],
      });
      const out = Object.fromEntries(res.outputs.map((o) => [o.name, o.data[0]]));
      assert.equal(typeof out.response, 'string', `binary=${binary}`);
      assert.ok(['stop', 'length'].includes(out.finish_reason as string));
      assert.ok((out.completion_tokens as number) > 0 && (out.completion_tokens as number) <= 3);
    }
    // The decoupled model cannot be called over /infer; the error says so. chatOnce never calls /generate (on this
    // model Triton answers it with 200 and an error, and the answer is generated anyway): it answers from it too.
    await rejectsWith(anon.infer(M, { inputs: [{ name: 'prompt', datatype: 'BYTES', shape: [1, 1], data: ['x'] }] }), 'unexpected', /streaming setting/);
    const whole = await chatOnce(anon, M, { prompt: 'x', history: [], maxNewTokens: 4 });
    assert.equal(whole.final.history[whole.final.history.length - 1]!.content, whole.text);
    // A full queue (max_queue_size 1) rejects at once with a typed server-busy error; the admitted ones answer.
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => chatOnce(anon, SYNC, { prompt: 'busy?', history: [], maxNewTokens: 40 })));
    const busy = outcomes.filter((o) => o.status === 'rejected');
    assert.ok(busy.length >= 1, 'some requests were rejected');
    assert.ok(outcomes.some((o) => o.status === 'fulfilled'), 'some requests were answered');
    for (const o of busy) {
      const reason = (o as PromiseRejectedResult).reason as TritonError;
      assert.equal(reason.code, 'server-busy', reason.message);
      assert.match(reason.details.serverMessage ?? '', /Exceeds maximum queue size/);
    }
    await admin.unloadModel(SYNC);
    await admin.waitForState(SYNC, 'UNAVAILABLE', { intervalMs: 200 });
  });

  test('unload returns at once; the index reaches UNAVAILABLE; requests then fail with model-not-loaded', async () => {
    await admin.unloadModel(M);
    const row = await admin.waitForState(M, 'UNAVAILABLE', { intervalMs: 200, timeoutMs: 60_000 });
    assert.equal(row.reason, 'unloaded');
    assert.equal(await anon.isModelReady(M), false);
    await rejectsWith(() => collect(streamChat(anon, M, { prompt: 'x', history: [] })), 'model-not-loaded');
  });

  test('a rendered config this machine cannot run fails to load with Triton\'s own message', async (t) => {
    // The same settings with the default GPU instances (KIND_GPU on GPU 0); this machine has none.
    const res = await installRepository({ source, destination: repository, settings: { ...cpuSettings(), queueDelayMs: 300, instanceKind: 'gpu' } });
    // The settings render every catalog entry's config; nothing else is rewritten.
    assert.deepEqual(res.changed, MODEL_IDS.map((id) => `${id}/config.pbtxt`).sort(), 'only the configs were rewritten');
    const e = await rejectsWith(admin.loadModel(M), 'model-load-failed');
    t.diagnostic(`load failure: ${e.message}`);
    assert.ok(e.details.serverMessage && e.details.serverMessage.length > 0);
    assert.ok(e.message.includes(e.details.serverMessage!.trim()), 'Triton\'s reason is kept verbatim');
    const row = await admin.modelState(M);
    assert.equal(row?.state, 'UNAVAILABLE');
    assert.ok(row?.reason && row.reason !== 'unloaded');
    assert.equal(await anon.isLive(), true);
  });
});
