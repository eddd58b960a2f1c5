// The endpoint's responses against its own zod schemas, with a scripted Triton stream behind it (no server): whole
// answers, SSE chunks, the usage chunk, the inputs of a raw continuation and of stop sequences, and an error after the
// stream began.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  chatCompletionChunkSchema, chatCompletionSchema, completionSchema, errorBodySchema, startOpenAiServer, type RunningOpenAiServer,
} from '../../../src/core/openai';
import { TritonError, type TritonClient } from '../../../src/core/triton';

/** generate_stream events of one answer: deltas, then the final outputs (or an error at delta `failAfter`). */
function scripted(deltas: string[], options: { failAfter?: number; finish?: string } = {}) {
  const calls: Record<string, unknown>[] = [];
  const fake = {
    async *generateStream(_model: string, body: Record<string, unknown>) {
      calls.push(body);
      for (const [i, d] of deltas.entries()) {
        if (options.failAfter === i) throw new TritonError('server-busy', 'server busy: the waiting queue is full', { operation: 'generate-stream' });
        yield { response: d };
      }
      yield { response: '', finish_reason: options.finish ?? 'stop', prompt_tokens: 11, completion_tokens: deltas.length, history_trimmed: 0, history: '[]' };
    },
  };
  return { client: fake as unknown as TritonClient, calls };
}

let current = scripted([]);
let server: RunningOpenAiServer;

async function post(path: string, body: Record<string, unknown>): Promise<{ status: number; text: string }> {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

const sseData = (text: string) => text.split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => b.slice(6));

describe('OpenAI endpoint responses', () => {
  before(async () => {
    server = await startOpenAiServer({
      backend: { client: () => current.client, model: 'chatglm3-6b', defaults: () => ({ temperature: 0.8, topP: 0.8, maxNewTokens: 512 }), idleTimeoutMs: 10_000 },
      host: '127.0.0.1', port: 0,
    });
  });
  after(async () => server?.close());

  test('non-streaming chat: one choice with the whole text and the server\'s usage; the request carries every input', async () => {
    current = scripted(['Hel', 'lo', '!']);
    const r = await post('/chat/completions', { model: 'chatglm3-6b', messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'hi' }], seed: 5 });
    assert.equal(r.status, 200);
    const body = chatCompletionSchema.parse(JSON.parse(r.text));
    assert.equal(body.choices[0]!.message.content, 'Hello!');
    assert.equal(body.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(body.usage, { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
    assert.deepEqual(current.calls[0], { prompt: 'hi', history: JSON.stringify([{ role: 'system', content: 'S' }]), temperature: 0.8, top_p: 0.8, seed: 5, max_new_tokens: 512 });
  });

  test('streaming chat: a role chunk, content chunks, the finish chunk, the usage chunk, then [DONE]', async () => {
    current = scripted(['a', 'b'], { finish: 'length' });
    const r = await post('/chat/completions', { model: 'chatglm3-6b', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    const data = sseData(r.text);
    assert.equal(data.at(-1), '[DONE]');
    const chunks = data.slice(0, -1).map((d) => chatCompletionChunkSchema.parse(JSON.parse(d)));
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1, 'one id for every chunk');
    assert.deepEqual(chunks[0]!.choices[0]!.delta, { role: 'assistant', content: '' });
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'ab');
    assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, 'length');
    assert.deepEqual(chunks.at(-1)!.choices, []);
    assert.deepEqual(chunks.at(-1)!.usage, { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
  });

  test('completions: a raw continuation with stop sequences; the model gets raw_prompt and stop, usage is its count', async () => {
    current = scripted(['one two ', 'th']);
    const r = await post('/completions', { model: 'chatglm3-6b', prompt: 'count', stop: ['three', '\n'], max_tokens: 9, temperature: 0 });
    const body = completionSchema.parse(JSON.parse(r.text));
    assert.equal(body.choices[0]!.text, 'one two th');
    assert.equal(body.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(body.usage, { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
    assert.deepEqual(current.calls[0], { prompt: '', raw_prompt: 'count', stop: JSON.stringify(['three', '\n']), temperature: 0, top_p: 0.8, max_new_tokens: 9 });
    // chat/completions: a chat turn, with the same stop input.
    current = scripted(['ok']);
    await post('/chat/completions', { model: 'chatglm3-6b', messages: [{ role: 'user', content: 'hi' }], stop: 'END' });
    assert.deepEqual(current.calls[0], { prompt: 'hi', history: '[]', stop: '["END"]', temperature: 0.8, top_p: 0.8, max_new_tokens: 512 });
  });

  test('an error after the stream began arrives as an OpenAI error event, without [DONE]', async () => {
    current = scripted(['x', 'y', 'z'], { failAfter: 2 });
    const r = await post('/chat/completions', { model: 'chatglm3-6b', messages: [{ role: 'user', content: 'hi' }], stream: true });
    assert.equal(r.status, 200);
    const data = sseData(r.text);
    assert.ok(!data.includes('[DONE]'));
    const error = errorBodySchema.parse(JSON.parse(data.at(-1)!));
    assert.equal(error.error.code, 'server_busy');
    // An error before the first event is a plain HTTP error.
    current = scripted(['x'], { failAfter: 0 });
    const early = await post('/chat/completions', { model: 'chatglm3-6b', messages: [{ role: 'user', content: 'hi' }], stream: true });
    assert.equal(early.status, 503);
    assert.equal(errorBodySchema.parse(JSON.parse(early.text)).error.code, 'server_busy');
  });
});
