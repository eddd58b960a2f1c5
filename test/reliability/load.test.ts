// Load: 200 concurrent streamed requests from our client against the real tritonserver with a bounded queue
// (the model's max_waiting 16; Triton's own queue is 16 + 1024, so that the model's "server busy" is the one
// refusal): each one completes or is refused with the typed server-busy error, none by Triton's queue, nothing
// hangs, and the server serves normally afterwards. Then Explain Selection's fan-out over 50 selections with the real client:
// in-flight requests stay within the concurrency setting, progress is reported per selection, each selection ends
// with an explanation or a clear error, and the scheduler generated the concurrent requests together.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { streamChat } from '../../src/core/triton/chatglm';
import { TritonError } from '../../src/core/triton/errors';
import { buildExplainPrompt } from '../../src/core/explain/explainPrompt';
import { fanout, type FanoutOutcome } from '../../src/core/explain/fanout';
import { SETTINGS } from '../../src/core/settings/settingsSchema';
import { sumMetric } from '../../src/core/triton/prometheus';
import { assertTritonError, chatRequest, collectStream, MODEL, startTestServer, waitFor, type TestServer } from './support/server';

const QUEUE = 16;
const CONCURRENT = 200;

let server: TestServer;

describe('load', { timeout: 600_000 }, () => {
  before(async () => {
    // A per-token delay keeps the rows busy long enough for the waiting queue to fill on any machine (execute()
    // hands requests to the model far faster than 8 rows at 20 ms a token free them).
    server = await startTestServer({ overrides: { maxQueueSize: QUEUE }, env: { TINY_ENGINE_STEP_DELAY_MS: '20' }, clientOptions: { connections: CONCURRENT + 8 } });
  });
  after(async () => { await server?.stop(); });

  test(`${CONCURRENT} concurrent streams: each completes or is refused as server-busy, and the server stays healthy`, async () => {
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: CONCURRENT }, async (_, i) => {
      const t0 = Date.now();
      // The overall signal is the "never hangs" bound: an abort would show up as a `cancelled` outcome and fail.
      const r = await collectStream(server.client, chatRequest(`load request ${i}: say something`, { maxNewTokens: 24 }), {
        idleTimeoutMs: 60_000, signal: AbortSignal.timeout(240_000),
      });
      return { ...r, ms: Date.now() - t0 };
    }));
    const wallMs = Date.now() - started;
    const completed = results.filter((r) => r.final && !r.error);
    const busy = results.filter((r) => r.error instanceof TritonError && r.error.code === 'server-busy');
    const other = results.filter((r) => !completed.includes(r) && !busy.includes(r));
    const summary = {
      completed: completed.length, busy: busy.length, other: other.length, wallMs,
      maxBusyMs: Math.max(0, ...busy.map((r) => r.ms)), maxCompletedMs: Math.max(0, ...completed.map((r) => r.ms)),
      busyMessage: busy[0] ? (busy[0].error as Error).message : undefined,
    };
    console.log(`load summary: ${JSON.stringify(summary)}`);
    assert.deepEqual(other.map((r) => (r.error instanceof Error ? `${(r.error as TritonError).code ?? r.error.name}: ${r.error.message}` : 'no final')), [],
      'every request completed or was refused as server-busy');
    for (const r of completed) {
      assert.ok(r.text.length > 0, 'a completed answer has text');
      assert.equal(r.final!.finishReason, 'length');
    }
    assert.ok(completed.length >= 1, 'some requests were served');
    assert.ok(busy.length >= 1, `a queue of ${QUEUE} cannot take ${CONCURRENT} requests at once: some were refused`);
    for (const r of busy) assert.match((r.error as Error).message, /queue/i, 'the busy error says the queue is full');
    const fromTriton = busy.filter((r) => /exceeds maximum queue size/i.test((r.error as TritonError).details.serverMessage ?? ''));
    assert.equal(fromTriton.length, 0, 'the model\'s own bound refuses, never Triton\'s queue (one refusal path)');

    assert.equal(await server.client.isLive(), true, 'live after the load');
    assert.equal(await server.client.isModelReady(MODEL), true, 'model still ready after the load');
    const normal = await collectStream(server.client, chatRequest('after the storm'));
    assert.equal(normal.error, undefined, String(normal.error));
    assert.ok(normal.final && normal.text.length > 0, 'a normal request works afterwards');
  });

  test('Explain Selection fan-out over 50 selections: bounded in-flight, progress per item, each ends explained or with a clear error', async () => {
    const limit = SETTINGS.explainMaxConcurrency.default;
    const selections = Array.from({ length: 50 }, (_, i) => ({
      text: `function f${i}(x) {\n  return x * ${i} + ${'`'.repeat(i % 5)};\n}`, languageId: 'javascript', fileName: `file${i % 7}.js`,
    }));
    const prompts = selections.map((s) => buildExplainPrompt(s, SETTINGS.explainMaxSelectionChars.default, (lang, file) => `Explain this ${lang} code from ${file}.`));
    const before = (await server.client.modelStatistics(MODEL))[0]!;
    const decodeCounts = async () => {
      const text = await server.client.metrics();
      return { steps: sumMetric(text, 'chatglm3_decode_steps_total', { model: MODEL }), rows: sumMetric(text, 'chatglm3_decode_rows_total', { model: MODEL }) };
    };
    const decodeBefore = await decodeCounts();
    let inFlight = 0;
    let maxInFlight = 0;
    const settledOrder: number[] = [];
    const outcomes = await fanout(prompts, async (p, _i, signal) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        let text = '';
        let finished = false;
        for await (const ev of streamChat(server.client, MODEL, chatRequest(p.prompt, { maxNewTokens: 12 }), { idleTimeoutMs: 60_000, ...(signal ? { signal } : {}) })) {
          if (ev.type === 'delta') text += ev.text;
          else finished = true;
        }
        assert.ok(finished, 'the stream ended with its final event');
        return text;
      } finally {
        inFlight -= 1;
      }
    }, { concurrency: limit, onSettled: (index) => settledOrder.push(index) });
    // Triton updates its counters just after the last response of an execution: wait for them to settle.
    const afterStats = await waitFor('statistics to count all 50 requests', async () => {
      const st = (await server.client.modelStatistics(MODEL))[0]!;
      return st.inference_count - before.inference_count >= 50 ? st : undefined;
    }, 15_000, 100);
    // The engine hands its figures over when it goes idle: wait for that (no active rows) before reading them.
    await waitFor('the engine to go idle', async () => (sumMetric(await server.client.metrics(), 'chatglm3_active_rows', { model: MODEL }) === 0 ? true : undefined), 15_000, 100);
    const decodeAfter = await decodeCounts();

    const summary = {
      limit, maxInFlight, explained: outcomes.filter((o) => o.status === 'fulfilled').length,
      failed: outcomes.filter((o) => o.status === 'rejected').length,
      inferences: afterStats.inference_count - before.inference_count, executions: afterStats.execution_count - before.execution_count,
      decodeSteps: decodeAfter.steps - decodeBefore.steps, decodeRows: decodeAfter.rows - decodeBefore.rows,
    };
    console.log(`explain fan-out summary: ${JSON.stringify(summary)}`);
    assert.ok(maxInFlight <= limit, `at most ${limit} in flight, saw ${maxInFlight}`);
    assert.ok(maxInFlight > 1, 'selections are sent concurrently (so the batcher can merge them)');
    assert.deepEqual([...settledOrder].sort((a, b) => a - b), prompts.map((_, i) => i), 'progress reported exactly once per selection');
    outcomes.forEach((o: FanoutOutcome<string>, i) => {
      if (o.status === 'fulfilled') assert.ok(o.value.length > 0, `selection ${i} has an explanation`);
      else if (o.status === 'rejected') assertTritonError(o.error, (o.error as TritonError).code, `selection ${i}`);
      else assert.fail(`selection ${i} never started`);
    });
    // Within the queue bound nothing should be refused: the point of the limit.
    assert.equal(summary.explained, 50, 'every selection explained');
    assert.equal(summary.inferences, 50);
    // Triton hands requests over as they come (queue delay 0); the batching is the continuous scheduler's: its decode
    // steps generate for several selections at once (one at a time would be 1 row per step).
    assert.ok(summary.decodeRows / summary.decodeSteps > 2, `the scheduler generated requests together (${summary.decodeRows} rows in ${summary.decodeSteps} decode steps)`);
  });
});
