// The OpenAI-compatible endpoint (src/core/openai) driven by the official `openai` npm client against the REAL
// tritonserver (CPU, tiny engine): models, non-streaming and streaming answers with the server's token counts,
// stop sequences, a client's abort freeing its row on the server, 8 streams decoded together, and errors in
// OpenAI's shape that fail alone.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import OpenAI from 'openai';
import { modelSamplingDefaults, startOpenAiServer, type RunningOpenAiServer } from '../../src/core/openai';
import { DEFAULT_MODEL_SETTINGS } from '../../src/core/repository';
import { streamChat } from '../../src/core/triton/chatglm';
import { TritonClient } from '../../src/core/triton/client';
import { sumMetric } from '../../src/core/triton/prometheus';

interface RunningTriton {
  url: string;
  metricsUrl: string;
  log(): string;
  stop(): Promise<void>;
}
interface TritonProcessModule {
  startTritonServer(options: { repository: string; env?: Record<string, string> }): Promise<RunningTriton>;
  prepareTestRepository(dest: string, overrides?: Record<string, unknown>): string;
  freePort(): Promise<number>;
  modelName: string;
}

const M = 'chatglm3-6b';
const KEY = `sk-test-${process.pid}`;
let work: string;
let triton: RunningTriton | undefined;
let client: TritonClient;
let endpoint: RunningOpenAiServer | undefined;
let openai: OpenAI;
let tp: TritonProcessModule;
const mainTs = join(__dirname, '../../src/cli/main.ts');

const metric = async (name: string) => sumMetric(await client.metrics(), name, { model: M });

/** The tiny engine's tokenizer (triton/testing/tiny_engine.py): bytes 0..255 are ids 3..258, then its specials. */
const BYTE_IDS = (text: string) => [...Buffer.from(text, 'utf8')].map((b) => b + 3);
const TINY = { gmask: 3 + 256 + 1, sop: 3 + 256 + 3, user: 3 + 256 + 6, assistant: 3 + 256 + 7 };
const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8');
/** A stop sequence inside `text` after some text: the first two characters that differ from the first one. */
function stopInside(text: string): { stop: string; before: string } {
  const chars = [...text];
  const at = chars.findIndex((c) => c !== chars[0]);
  assert.ok(at > 0 && at + 2 <= chars.length, `a long enough, varied answer to cut: ${JSON.stringify(text)}`);
  const before = chars.slice(0, at).join('');
  return { stop: chars.slice(at, at + 2).join(''), before };
}

/** The prompt ids of the last row the engine admitted. */
const lastPromptIds = (): number[] => {
  const lines = readFileSync(join(work, 'prompts.jsonl'), 'utf8').trim().split('\n');
  return (JSON.parse(lines.at(-1)!) as { ids: number[] }).ids;
};

/** Polls until `check` holds (the server frees a row at its next step); the last value for the message. */
async function eventually<T>(read: () => Promise<T>, check: (v: T) => boolean, what: string, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let v = await read();
  while (!check(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  assert.ok(check(v), `${what} (last value ${JSON.stringify(v)})`);
  return v;
}

const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are brief.' },
  { role: 'user', content: 'Hello' },
  { role: 'assistant', content: 'Hi!' },
  { role: 'user', content: 'Explain this code' },
];

async function badRequest(p: Promise<unknown>, status: number, param: string | null): Promise<InstanceType<typeof OpenAI.APIError>> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  assert.ok(e instanceof OpenAI.APIError, `expected an APIError, got ${String(e)}`);
  assert.equal(e.status, status, e.message);
  assert.equal(e.param ?? null, param, e.message);
  return e;
}

describe('OpenAI endpoint with the openai client against tritonserver', { timeout: 600_000 }, () => {
  before(async () => {
    tp = (await import(pathToFileURL(join(__dirname, '../support/triton-process.mjs')).href)) as TritonProcessModule;
    work = mkdtempSync(join(tmpdir(), 'openai-it-'));
    const repository = tp.prepareTestRepository(join(work, 'repo'));
    // Slow decoding a little so a request can be cancelled mid-stream (the tiny engine never stops by itself).
    // The prompt log: the ids each row's prompt had, to check the layout of a raw continuation.
    triton = await tp.startTritonServer({ repository, env: { TINY_ENGINE_STEP_DELAY_MS: '25', TINY_ENGINE_PROMPT_LOG: join(work, 'prompts.jsonl') } });
    client = new TritonClient({ baseUrl: triton.url, metricsUrl: triton.metricsUrl });
    await client.loadModel(M);
    endpoint = await startOpenAiServer({
      backend: { client: () => client, model: M, defaults: () => modelSamplingDefaults(DEFAULT_MODEL_SETTINGS), idleTimeoutMs: 60_000 },
      host: '127.0.0.1', port: 0, apiKey: KEY,
    });
    openai = new OpenAI({ baseURL: endpoint.url, apiKey: KEY, maxRetries: 0 });
  });

  after(async () => {
    await endpoint?.close();
    await client?.destroy();
    await triton?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('models.list names the served model', async () => {
    const page = await openai.models.list();
    assert.deepEqual(page.data.map((m) => m.id), [M]);
  });

  test('non-streaming: the answer and usage are the chat core\'s own for the same request', async () => {
    const done = await openai.chat.completions.create({ model: M, messages, max_tokens: 12, temperature: 0, seed: 7 });
    const choice = done.choices[0]!;
    assert.equal(done.object, 'chat.completion');
    assert.equal(choice.message.role, 'assistant');
    // The same question through the chat core directly: identical text and the server's own token counts.
    let text = '';
    let final;
    for await (const ev of streamChat(client, M, {
      prompt: 'Explain this code', history: [{ role: 'system', content: 'You are brief.' }, { role: 'user', content: 'Hello' }, { role: 'assistant', content: 'Hi!' }],
      temperature: 0, topP: 0.8, maxNewTokens: 12, seed: 7,
    })) {
      if (ev.type === 'delta') text += ev.text;
      else final = ev;
    }
    assert.ok(final);
    assert.equal(choice.message.content, text);
    assert.equal(choice.finish_reason, final.finishReason);
    assert.deepEqual(done.usage, { prompt_tokens: final.promptTokens, completion_tokens: final.completionTokens, total_tokens: final.promptTokens + final.completionTokens });
    assert.equal(done.usage?.completion_tokens, 12, 'the tiny engine writes until max_tokens');
  });

  test('streaming: chunks add up to the non-streamed answer; include_usage sends the counts last; [DONE] ends it', async () => {
    const request = { model: M, messages, max_tokens: 10, temperature: 0, seed: 3 };
    const whole = await openai.chat.completions.create(request);
    const stream = await openai.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks += 1;
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(usage, undefined, 'the usage chunk is the last one');
      if (chunk.choices.length === 0) { usage = chunk.usage; continue; }
      text += chunk.choices[0]!.delta.content ?? '';
      if (chunk.choices[0]!.finish_reason) finish = chunk.choices[0]!.finish_reason;
    }
    assert.ok(chunks >= 3, `${chunks} chunks`);
    assert.equal(text, whole.choices[0]!.message.content);
    assert.equal(finish, 'length');
    assert.deepEqual(usage, whole.usage);
    // The wire format itself: SSE `data:` lines ending with `data: [DONE]`.
    const raw = await fetch(`${endpoint!.url}/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...request, stream: true }),
    });
    assert.match(raw.headers.get('content-type') ?? '', /^text\/event-stream/);
    const body = await raw.text();
    assert.ok(body.endsWith('data: [DONE]\n\n'), body.slice(-200));
    assert.ok(!body.includes('"usage"'), 'no usage chunk unless asked for');
  });

  test('stop: the answer ends before the stop sequence, the row ends at that step, usage counts the tokens generated', async () => {
    const full = (await openai.chat.completions.create({ model: M, messages, max_tokens: 40, temperature: 0, seed: 11 })).choices[0]!.message.content ?? '';
    const { stop, before: expected } = stopInside(full);
    const cancelledBefore = await metric('chatglm3_cancelled_requests_total');
    // Byte tokens: the model generated its metadata line ("\n"), the text before the stop and the stop itself, and
    // ended the row at the token that completed the stop (the tokens OpenAI and vLLM count).
    const generated = 1 + utf8Length(expected + stop);
    // max_tokens 2048: without the stop, the tiny engine would write for a minute.
    const cut = await openai.chat.completions.create({ model: M, messages, max_tokens: 2048, temperature: 0, seed: 11, stop: [stop] });
    assert.equal(cut.choices[0]!.message.content, expected);
    assert.equal(cut.choices[0]!.finish_reason, 'stop');
    const whole = await openai.chat.completions.create({ model: M, messages, max_tokens: 4, temperature: 0, seed: 11 });
    assert.deepEqual(cut.usage, { prompt_tokens: whole.usage!.prompt_tokens, completion_tokens: generated, total_tokens: whole.usage!.prompt_tokens + generated });
    // Streamed, the same cut and the same counts.
    const stream = await openai.chat.completions.create({ model: M, messages, max_tokens: 2048, temperature: 0, seed: 11, stop, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, expected);
    assert.deepEqual(usage, cut.usage);
    // The model ended both rows itself: nothing was cancelled, no row is left.
    await eventually(() => metric('chatglm3_active_rows'), (n) => n === 0, 'the stopped rows are free');
    assert.equal(await metric('chatglm3_cancelled_requests_total'), cancelledBefore, 'ended by the model, not cancelled');
  });

  test('a client that aborts cancels its request on Triton: the row is freed', async () => {
    const cancelledBefore = await metric('chatglm3_cancelled_requests_total');
    const ac = new AbortController();
    const stream = await openai.chat.completions.create({ model: M, messages, max_tokens: 2048, stream: true }, { signal: ac.signal });
    let chunks = 0;
    let finished = false;
    // The openai client ends the iteration quietly when its signal aborts.
    for await (const chunk of stream) {
      if (chunk.choices[0]?.finish_reason) finished = true;
      if (++chunks === 3) {
        // Triton refreshes its metrics every couple of seconds: wait until they show the row taken.
        await eventually(() => metric('chatglm3_active_rows'), (n) => n === 1, 'the request holds a row while it streams');
        ac.abort();
      }
    }
    assert.equal(finished, false, 'the answer was cut, not finished');
    await eventually(() => metric('chatglm3_active_rows'), (n) => n === 0, 'the aborted request\'s row is free');
    await eventually(() => metric('chatglm3_cancelled_requests_total'), (n) => n === cancelledBefore + 1, 'the model counted the cancellation');
  });

  test('8 concurrent streams are decoded together (the scheduler\'s rows metric)', async (t) => {
    const steps0 = await metric('chatglm3_decode_steps_total');
    const rows0 = await metric('chatglm3_decode_rows_total');
    let maxRows = 0;
    let running = true;
    const watch = (async () => {
      while (running) {
        maxRows = Math.max(maxRows, await metric('chatglm3_active_rows'));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    // 120 tokens at >= 25 ms a step: longer than Triton's metrics refresh interval (2 s), so the watch sees them.
    const answers = await Promise.all(Array.from({ length: 8 }, async (_, i) => {
      const stream = await openai.chat.completions.create({ model: M, messages: [{ role: 'user', content: `question ${i}` }], max_tokens: 120, temperature: 0, stream: true, stream_options: { include_usage: true } });
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
      return usage;
    }));
    running = false;
    await watch;
    for (const u of answers) assert.equal(u?.completion_tokens, 120);
    const steps = (await metric('chatglm3_decode_steps_total')) - steps0;
    const rows = (await metric('chatglm3_decode_rows_total')) - rows0;
    t.diagnostic(`8 streams: ${steps} decode steps, ${rows} rows (${(rows / steps).toFixed(2)} per step), at most ${maxRows} active rows seen`);
    assert.equal(maxRows, 8, 'all 8 requests held a row at the same time');
    assert.ok(rows / steps > 2, `rows per step ${rows / steps}`);
  });

  test('completions: a raw continuation of the prompt (no chat layout), streamed and not, with echo, stop and usage', async () => {
    const prompt = 'def add(a, b):';
    const request = { model: M, prompt, max_tokens: 8, temperature: 0 };
    const done = await openai.completions.create(request);
    assert.equal(done.object, 'text_completion');
    assert.deepEqual(lastPromptIds(), [TINY.gmask, TINY.sop, ...BYTE_IDS(prompt)], 'the prefix tokens and the text, no role tokens');
    assert.deepEqual(done.usage, { prompt_tokens: 2 + prompt.length, completion_tokens: 8, total_tokens: 10 + prompt.length });
    assert.equal(done.choices[0]!.finish_reason, 'length');
    const text = done.choices[0]!.text;
    // No metadata line: the 8 tokens are 8 bytes of text (a CJK character cut short by max_tokens is dropped).
    assert.ok(utf8Length(text) >= 6 && utf8Length(text) <= 8, JSON.stringify(text));
    // The same words as a chat turn get the chat layout.
    await openai.chat.completions.create({ model: M, messages: [{ role: 'user', content: prompt }], max_tokens: 1 });
    assert.deepEqual(lastPromptIds(), [TINY.gmask, TINY.sop, TINY.user, ...BYTE_IDS(`\n${prompt}`), TINY.assistant]);
    // A prompt as an array of one string is the same request; echo puts the prompt before the continuation.
    assert.equal((await openai.completions.create({ ...request, prompt: [prompt] })).choices[0]!.text, text);
    const echoed = await openai.completions.create({ ...request, echo: true });
    assert.equal(echoed.choices[0]!.text, `${prompt}${text}`);
    let streamed = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of await openai.completions.create({ ...request, stream: true, stream_options: { include_usage: true } })) {
      streamed += chunk.choices[0]?.text ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(streamed, text);
    assert.deepEqual(usage, done.usage);
    // A stop sequence: the text before it; usage counts the tokens generated up to the one that completed it.
    const long = (await openai.completions.create({ ...request, max_tokens: 30 })).choices[0]!.text;
    const { stop, before } = stopInside(long);
    const cut = await openai.completions.create({ ...request, max_tokens: 2048, stop });
    assert.equal(cut.choices[0]!.text, before);
    assert.equal(cut.choices[0]!.finish_reason, 'stop');
    assert.equal(cut.usage?.completion_tokens, utf8Length(before + stop));
    let cutStreamed = '';
    for await (const chunk of await openai.completions.create({ ...request, max_tokens: 2048, stop: [stop], stream: true })) cutStreamed += chunk.choices[0]?.text ?? '';
    assert.equal(cutStreamed, before);
    await eventually(() => metric('chatglm3_active_rows'), (n) => n === 0, 'the stopped rows are free');
  });

  test('completions: what a raw continuation cannot do is a 400 naming the field', async () => {
    const completion = (extra: Record<string, unknown>) => openai.completions.create({ model: M, prompt: 'x', max_tokens: 4, ...extra } as OpenAI.CompletionCreateParamsNonStreaming);
    await badRequest(completion({ prompt: ['a', 'b'] }), 400, 'prompt');
    await badRequest(completion({ prompt: '' }), 400, 'prompt');
    await badRequest(completion({ prompt: [1, 2, 3] }), 400, 'prompt');
    await badRequest(completion({ suffix: 'b' }), 400, 'suffix');
    await badRequest(completion({ best_of: 2 }), 400, 'best_of');
    await badRequest(completion({ n: 2 }), 400, 'n');
    await badRequest(completion({ logprobs: 1 }), 400, 'logprobs');
    await badRequest(completion({ stop: ['a', 'b', 'c', 'd', 'e'] }), 400, 'stop');
    await badRequest(completion({ max_tokens: 100_000, stream: true }), 400, null);
  });

  test('errors in OpenAI\'s shape, each failing alone while another stream goes on', async () => {
    const other = (async () => {
      let n = 0;
      for await (const chunk of await openai.chat.completions.create({ model: M, messages, max_tokens: 30, stream: true })) n += chunk.choices[0]?.delta.content ? 1 : 0;
      return n;
    })();
    const chat = (extra: Record<string, unknown>) => openai.chat.completions.create({ model: M, messages, max_tokens: 4, ...extra } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
    await badRequest(chat({ n: 2 }), 400, 'n');
    await badRequest(chat({ tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] }), 400, 'tools');
    await badRequest(chat({ logprobs: true }), 400, 'logprobs');
    await badRequest(openai.chat.completions.create({ model: M, max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } }] }] }), 400, 'messages[0].content[0].type');
    await badRequest(chat({ temperature: 'hot' }), 400, 'temperature');
    await badRequest(chat({ model: 'gpt-4o' }), 404, 'model');
    // The model's own refusal (max_new_tokens beyond its limit) is a 400 too, streamed or not: no 200 stream.
    const tooMany = await badRequest(chat({ max_tokens: 100_000 }), 400, null);
    assert.match(tooMany.message, /max_new_tokens/);
    await badRequest(chat({ max_tokens: 100_000, stream: true }), 400, null);
    await badRequest(new OpenAI({ baseURL: endpoint!.url, apiKey: 'sk-wrong', maxRetries: 0 }).models.list(), 401, null);
    assert.ok((await other) > 0, 'the concurrent stream was answered');
    await eventually(() => metric('chatglm3_active_rows'), (n) => n === 0, 'no row left taken');
  });

  test('the CLI: serve-openai answers the openai client until Ctrl+C; another address without a key is refused', async () => {
    const port = await tp.freePort();
    const env = { ...process.env, TRITON_CHATGLM_OPENAI_API_KEY: '' };
    const child = spawn(process.execPath, ['--import', 'tsx', mainTs, 'serve-openai', '--url', triton!.url, '--port', String(port)], { env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += String(d); });
    child.stderr.on('data', (d) => { err += String(d); });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually(async () => out, (o) => o.includes('press Ctrl+C'), `serve-openai started (stderr: ${err})`, 60_000);
      assert.match(out, new RegExp(`at http://127\\.0\\.0\\.1:${port}/v1`));
      const viaCli = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'none', maxRetries: 0 });
      assert.deepEqual((await viaCli.models.list()).data.map((m) => m.id), [M]);
      const done = await viaCli.chat.completions.create({ model: M, messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 });
      assert.equal(done.usage?.completion_tokens, 3);
    } finally {
      child.kill('SIGINT');
    }
    assert.equal(await exited, 130, 'Ctrl+C stops it (exit code 130, as for any interrupted command)');
    const exposed = spawnSync(process.execPath, ['--import', 'tsx', mainTs, 'serve-openai', '--url', triton!.url, '--host', '0.0.0.0', '--port', String(port)], { env, encoding: 'utf8', timeout: 60_000 });
    assert.notEqual(exposed.status, 0);
    assert.match(exposed.stderr, /API key/);
  });
});
