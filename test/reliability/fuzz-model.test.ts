// Hostile input through the real tritonserver: generated malformed requests (huge strings, invalid UTF-8 as raw
// bytes in binary BYTES tensors and in JSON, deep and enormous `history`, code in a Python-literal history, wrong
// types and shapes, NaN/inf, missing and unknown inputs, broken bodies) sent in concurrent batches together with
// well-formed requests. Each hostile request gets an answer or an error with a message; the server stays live after
// every batch; the well-formed requests in the same batches answer exactly as when sent alone (greedy, temperature 0).
// Default: 120 requests; TRITON_CHATGLM_SOAK=1: 1,000. TRITON_CHATGLM_FUZZ_SEED replays a run.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { CATEGORIES, generateCases, type FuzzRequest } from './support/fuzz-cases';
import { chatRequest, collectStream, MODEL, SOAK, startTestServer, type Collected, type TestServer } from './support/server';

const SYNC = 'chatglm3-6b-sync';
const TOTAL = SOAK ? 1000 : 120;
const BATCH = SOAK ? 20 : 12;
const SEED = Number(process.env.TRITON_CHATGLM_FUZZ_SEED ?? Date.now() % 1_000_000);
const CONTROLS = ['control one: what is a tensor?', 'control two: 你好，介绍一下你自己', 'control three: list three colours'];

type Outcome =
  | { kind: 'answer'; status: number }
  | { kind: 'error'; status: number; message: string }
  | { kind: 'bad'; status?: number; detail: string };

let server: TestServer;
let dispatcher: Agent;
let work: string;
const baseline = new Map<string, Collected>();

function classify(endpoint: FuzzRequest['endpoint'], status: number, text: string): Outcome {
  const errorOf = (obj: unknown): string | undefined => {
    const e = (obj as { error?: unknown } | null)?.error;
    return typeof e === 'string' ? e : undefined;
  };
  if (endpoint === 'stream' && text.trimStart().startsWith('data:')) {
    const events: unknown[] = [];
    for (const block of text.split(/\r?\n\r?\n/)) {
      const data = block.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
      if (!data) continue;
      try { events.push(JSON.parse(data)); } catch { return { kind: 'bad', status, detail: `unparsable event ${data.slice(0, 100)}` }; }
    }
    const err = events.map(errorOf).find((m) => m !== undefined);
    if (err !== undefined) return err.trim() ? { kind: 'error', status, message: err } : { kind: 'bad', status, detail: 'empty error' };
    const last = events.at(-1) as { finish_reason?: unknown } | undefined;
    if (status === 200 && last?.finish_reason !== undefined) return { kind: 'answer', status };
    return { kind: 'bad', status, detail: `stream without final or error: ${text.slice(-200)}` };
  }
  let body: unknown;
  try { body = JSON.parse(text); } catch { return { kind: 'bad', status, detail: `not JSON: ${text.slice(0, 200)}` }; }
  const err = errorOf(body);
  if (err !== undefined) return err.trim() ? { kind: 'error', status, message: err } : { kind: 'bad', status, detail: 'empty error' };
  if (status !== 200) return { kind: 'bad', status, detail: `HTTP ${status} without an error message` };
  if (endpoint === 'generate' && (body as { finish_reason?: unknown }).finish_reason !== undefined) return { kind: 'answer', status };
  if (endpoint === 'infer' && Array.isArray((body as { outputs?: unknown }).outputs)) return { kind: 'answer', status };
  return { kind: 'bad', status, detail: `200 without an answer: ${text.slice(0, 200)}` };
}

async function send(c: FuzzRequest): Promise<Outcome> {
  const path = c.endpoint === 'stream' ? `/v2/models/${MODEL}/generate_stream` : `/v2/models/${SYNC}/${c.endpoint}`;
  try {
    const res = await request(`${server.url}${path}`, {
      method: 'POST', body: c.body, headers: c.headers, dispatcher, headersTimeout: 120_000, bodyTimeout: 120_000,
    });
    return classify(c.endpoint, res.statusCode, await res.body.text());
  } catch (e) {
    const err = e as { code?: string; message?: string };
    return { kind: 'bad', detail: `transport: ${err.code ?? ''} ${err.message ?? String(e)}` };
  }
}

describe('fuzzing the model through the server', { timeout: SOAK ? 3_600_000 : 600_000 }, () => {
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'reliability-fuzz-'));
    server = await startTestServer({ variants: { [SYNC]: { decoupled: false } }, load: [MODEL, SYNC] });
    dispatcher = new Agent({ connections: 64 });
    for (const prompt of CONTROLS) {
      const r = await collectStream(server.client, chatRequest(prompt, { maxNewTokens: 12 }));
      assert.equal(r.error, undefined, String(r.error));
      baseline.set(prompt, r);
    }
  });
  after(async () => {
    await dispatcher?.destroy();
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test(`${TOTAL} hostile requests (seed ${SEED}) in concurrent batches with well-formed ones: answer or error each, server never dies`, async () => {
    const marker = join(work, 'code-ran');
    const cases = generateCases(SEED, TOTAL, SOAK).map((c) => (c.category === 'code-in-history' ? { ...c, body: Buffer.from(c.body.toString('utf8').split('MARKER').join(marker)) } : c));
    const tally = new Map<string, { answer: number; error: number; statuses: Set<number> }>();
    const bad: string[] = [];
    let controlsChecked = 0;
    for (let start = 0, batchNo = 0; start < cases.length; start += BATCH, batchNo++) {
      const batch = cases.slice(start, start + BATCH);
      const controls = [CONTROLS[batchNo % CONTROLS.length]!, CONTROLS[(batchNo + 1) % CONTROLS.length]!];
      const [outcomes, controlResults] = await Promise.all([
        Promise.all(batch.map(send)),
        Promise.all(controls.map((p) => collectStream(server.client, chatRequest(p, { maxNewTokens: 12 }), { idleTimeoutMs: 120_000 }))),
      ]);
      outcomes.forEach((o, i) => {
        const c = batch[i]!;
        const t = tally.get(c.category) ?? { answer: 0, error: 0, statuses: new Set<number>() };
        tally.set(c.category, t);
        if (o.kind === 'bad') bad.push(`${c.category} (${c.endpoint}, ${c.note}): ${o.detail}`);
        else { t[o.kind] += 1; t.statuses.add(o.status); }
      });
      controlResults.forEach((r, i) => {
        const want = baseline.get(controls[i]!)!;
        assert.equal(r.error, undefined, `batch ${batchNo}: well-formed request failed: ${String(r.error)}`);
        assert.equal(r.text, want.text, `batch ${batchNo}: a well-formed request answers as when sent alone`);
        assert.deepEqual(r.final, want.final);
        controlsChecked += 1;
      });
      assert.equal(await server.client.isLive(), true, `live after batch ${batchNo}`);
      assert.equal(await server.client.isModelReady(MODEL), true, `${MODEL} ready after batch ${batchNo}`);
      assert.equal(await server.client.isModelReady(SYNC), true, `${SYNC} ready after batch ${batchNo}`);
      process.kill(server.pid, 0); // throws if tritonserver is gone
    }
    const summary = Object.fromEntries([...tally].map(([k, v]) => [k, { answer: v.answer, error: v.error, statuses: [...v.statuses].sort() }]));
    console.log(`fuzz summary (seed ${SEED}, ${TOTAL} requests, ${controlsChecked} well-formed checked): ${JSON.stringify(summary)}`);
    assert.deepEqual(bad, [], 'every hostile request got an answer or an error message');
    assert.deepEqual([...tally.keys()].sort(), [...CATEGORIES].sort(), 'every category was sent');
    assert.equal(existsSync(marker), false, 'code in a Python-literal history was never run');
    for (const c of ['invalid-utf8-binary', 'deep-json-history', 'missing-inputs', 'code-in-history', 'broken-body']) {
      assert.ok((tally.get(c)?.error ?? 0) > 0, `${c} is refused with an error`);
    }
  });
});
