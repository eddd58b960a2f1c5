// The answer runner (core/chat/answerRunner.ts): one question to the model and its answer into the conversation,
// against undici's MockAgent playing Triton's generate_stream.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MockAgent } from 'undici';
import { AnswerRunner, type AnswerRunnerDeps } from '../../../src/core/chat/answerRunner';
import { ConversationService } from '../../../src/core/chat/conversationService';
import { MemoryConversationStore } from '../../../src/core/chat/store';
import type { StoredMessage } from '../../../src/core/chat/conversation';
import { TritonClient } from '../../../src/core/triton/client';
import type { TritonError } from '../../../src/core/triton/errors';

const BASE = 'http://triton.test:8000';
const FINAL = { response: '', finish_reason: 'stop', prompt_tokens: 3, completion_tokens: 2, history_trimmed: 0, history: '[]' };

function setup(options: { model?: string; client?: boolean; modelFailed?: (e: TritonError) => void; explainFailure?: (e: unknown) => Promise<unknown> } = {}) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const pool = agent.get(BASE);
  const client = new TritonClient({ baseUrl: BASE, dispatcher: agent });
  const service = new ConversationService(new MemoryConversationStore(), { persistDelayMs: 60_000 });
  const events: string[] = [];
  const settled: StoredMessage[] = [];
  let tracked = 0;
  let checks = 0;
  const deps: AnswerRunnerDeps = {
    service,
    client: () => (options.client === false ? undefined : client),
    modelName: () => options.model ?? 'chatglm3-6b',
    settings: () => ({ streaming: true, temperature: 0.5, topP: 0.9, topK: 40, repetitionPenalty: 1.1, maxNewTokens: 64, historyTurns: 10, streamIdleTimeoutMs: 5_000, requestTimeoutMs: 5_000 }),
    track: (request) => { tracked++; return request; },
    checkServer: () => { checks++; },
    ...(options.modelFailed ? { modelFailed: options.modelFailed } : {}),
    ...(options.explainFailure ? { explainFailure: options.explainFailure } : {}),
    describeFailure: (e) => ({ code: (e as { code?: string }).code ?? 'test', text: `failed: ${(e as Error).message}` }),
    describeRefusal: (refusal) => `refused: ${refusal.code}`,
    log: { error: () => undefined },
    onBusyChanged: (id) => events.push(`busy ${id}`),
    onDelta: (_id, _messageId, text) => events.push(`delta ${text}`),
    onSettled: (_id, message) => settled.push(message),
  };
  return { agent, pool, service, runner: new AnswerRunner(deps), events, settled, tracked: () => tracked, checks: () => checks };
}

async function question(service: ConversationService, text: string): Promise<string> {
  const c = service.create();
  await service.appendUserMessage(c.id, text);
  return c.id;
}

test('a streamed answer: deltas to the view and the conversation, the final state saved, the request tracked', async () => {
  const t = setup();
  let body: Record<string, unknown> = {};
  t.pool.intercept({ path: '/v2/models/chatglm3-6b/generate_stream', method: 'POST', body: (b) => { body = JSON.parse(b) as Record<string, unknown>; return true; } })
    .reply(200, `data: {"response":"Hel"}\n\ndata: {"response":"lo"}\n\ndata: ${JSON.stringify(FINAL)}\n\n`);
  const id = await question(t.service, 'hi');
  const outcome = await t.runner.answer(id);
  assert.deepEqual(outcome, { status: 'complete', text: 'Hello' });
  assert.deepEqual(t.events, [`busy ${id}`, 'delta Hel', 'delta lo', `busy ${id}`]);
  assert.equal(t.settled.length, 1);
  assert.equal(t.settled[0]!.status, 'complete');
  assert.equal(t.service.get(id)!.messages.at(-1)!.content, 'Hello');
  assert.equal(t.tracked(), 1);
  assert.deepEqual([body.prompt, body.temperature, body.top_p, body.max_new_tokens, body.history_len], ['hi', 0.5, 0.9, 64, 10]);
  assert.deepEqual([body.top_k, body.repetition_penalty, body.seed], [40, 1.1, undefined], 'top-k and the penalty from the settings');
  assert.equal(t.runner.isAnswering(id), false);
});

test('the answer is asked of the session\'s model (its Triton name in the URL) and stored with it', async () => {
  const t = setup({ model: 'glm-4-9b-chat' });
  t.pool.intercept({ path: '/v2/models/glm-4-9b-chat/generate_stream', method: 'POST' })
    .reply(200, `data: {"response":"GLM"}\n\ndata: ${JSON.stringify(FINAL)}\n\n`);
  const id = await question(t.service, 'hi');
  assert.deepEqual(await t.runner.answer(id), { status: 'complete', text: 'GLM' });
  assert.equal(t.service.get(id)!.messages.at(-1)!.model, 'glm-4-9b-chat', 'the answer is stored with the model that wrote it');
});

test('a question too long for the model is answered by a failed message saying so; nothing is sent', async () => {
  const t = setup();
  const id = await question(t.service, '长'.repeat(20_000));
  const outcome = await t.runner.answer(id);
  assert.deepEqual(outcome, { status: 'failed', text: '', error: 'refused: prompt-too-long' });
  const last = t.service.get(id)!.messages.at(-1)!;
  assert.deepEqual([last.role, last.status, last.error], ['assistant', 'failed', 'refused: prompt-too-long']);
  assert.equal(t.tracked(), 0, 'no request was made');
  t.agent.assertNoPendingInterceptors();
});

test('aborting the caller\'s signal stops the answer: kept as stopped', async () => {
  const t = setup();
  const id = await question(t.service, 'hi');
  const outcome = await t.runner.answer(id, AbortSignal.abort());
  assert.equal(outcome.status, 'stopped');
  assert.equal(t.service.get(id)!.messages.at(-1)!.status, 'stopped');
  assert.equal(t.checks(), 0);
});

test('no server: the answer fails with the reason, and the session is asked to look at the server', async () => {
  const t = setup({ client: false });
  const id = await question(t.service, 'hi');
  const outcome = await t.runner.answer(id);
  assert.equal(outcome.status, 'failed');
  assert.match(outcome.error ?? '', /Not connected/);
  assert.equal(t.service.get(id)!.messages.at(-1)!.error, outcome.error);
  assert.equal(t.checks(), 1);
});

test('"the model failed" ends the answer with that reason and tells the session (Reload Model)', async () => {
  const failed: string[] = [];
  const t = setup({ modelFailed: (e) => failed.push(e.code) });
  t.pool.intercept({ path: '/v2/models/chatglm3-6b/generate_stream', method: 'POST' })
    .reply(400, 'data: {"error":"the model failed: CUDA error: an illegal memory access was encountered; reload it"}\n\n');
  const id = await question(t.service, 'hi');
  const outcome = await t.runner.answer(id);
  assert.equal(outcome.status, 'failed');
  assert.match(outcome.error ?? '', /reload it/);
  assert.deepEqual(failed, ['model-failed']);
  assert.equal(t.checks(), 0);
});

test('a second answer in the same conversation is refused while the first streams', async () => {
  const t = setup();
  t.pool.intercept({ path: '/v2/models/chatglm3-6b/generate_stream', method: 'POST' }).reply(200, `data: ${JSON.stringify(FINAL)}\n\n`).delay(50);
  const id = await question(t.service, 'hi');
  const first = t.runner.answer(id);
  await assert.rejects(t.runner.answer(id), (e: unknown) => (e as { code?: string }).code === 'answer-in-progress');
  assert.equal((await first).status, 'complete');
});

test('continue: the cut answer goes to the model as its last turn, the new text is appended to the same message', async () => {
  const t = setup();
  // undici may call a body matcher more than once per request: keep each distinct body once.
  const bodies: Record<string, unknown>[] = [];
  const capture = (b: unknown) => {
    if (!bodies.some((x) => JSON.stringify(x) === String(b))) bodies.push(JSON.parse(String(b)) as Record<string, unknown>);
    return true;
  };
  t.pool.intercept({ path: '/v2/models/chatglm3-6b/generate_stream', method: 'POST', body: capture })
    .reply(200, `data: {"response":"Roses are"}\n\ndata: ${JSON.stringify({ ...FINAL, finish_reason: 'length', completion_tokens: 64 })}\n\n`);
  t.pool.intercept({ path: '/v2/models/chatglm3-6b/generate_stream', method: 'POST', body: capture })
    .reply(200, `data: {"response":" red."}\n\ndata: ${JSON.stringify({ ...FINAL, completion_tokens: 3 })}\n\n`);
  const id = await question(t.service, 'a poem');
  assert.equal((await t.runner.answer(id)).status, 'complete');
  const answer = t.service.get(id)!.messages.at(-1)!;
  assert.equal(answer.finishReason, 'length');
  t.events.length = 0;
  const outcome = await t.runner.continue(id, answer.id);
  assert.deepEqual(outcome, { status: 'complete', text: ' red.' });
  assert.deepEqual(t.events, [`busy ${id}`, 'delta  red.', `busy ${id}`]);
  const after = t.service.get(id)!.messages;
  assert.equal(after.length, 2, 'still one question and one answer');
  assert.deepEqual([after[1]!.id, after[1]!.content, after[1]!.finishReason, after[1]!.completionTokens], [answer.id, 'Roses are red.', 'stop', 67]);
  assert.equal(bodies.length, 2);
  assert.match(String(bodies[1]!.prompt), /^Continue your last answer/);
  assert.deepEqual(JSON.parse(String(bodies[1]!.history)), [{ role: 'user', content: 'a poem' }, { role: 'assistant', content: 'Roses are' }]);
  assert.equal(t.settled.at(-1)!.id, answer.id);
});

test('continue refuses an answer that did not stop at the length limit; nothing is sent', async () => {
  const t = setup();
  t.pool.intercept({ path: '/v2/models/chatglm3-6b/generate_stream', method: 'POST' }).reply(200, `data: ${JSON.stringify(FINAL)}\n\n`);
  const id = await question(t.service, 'hi');
  await t.runner.answer(id);
  const answer = t.service.get(id)!.messages.at(-1)!;
  await assert.rejects(t.runner.continue(id, answer.id), (e: unknown) => (e as { code?: string }).code === 'nothing-to-continue');
  assert.equal(t.runner.isAnswering(id), false);
  t.agent.assertNoPendingInterceptors();
});

// Issue #27: the container killed while the answer streamed is reported as its exit, not as "cannot reach Triton".
test('a stream cut by a container that exited is stored and reported as that exit; the conversation is kept', async () => {
  const exited = Object.assign(new Error('The Triton container stopped unexpectedly with exit code 137.'), { code: 'container-exited' });
  const asked: unknown[] = [];
  const t = setup({ explainFailure: async (e) => { asked.push(e); return exited; } });
  t.pool.intercept({ path: '/v2/models/chatglm3-6b/generate_stream', method: 'POST' }).replyWithError(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
  t.pool.intercept({ path: '/v2/health/live', method: 'GET' }).replyWithError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })).persist();
  const id = await question(t.service, 'hi');
  const outcome = await t.runner.answer(id);
  assert.equal(outcome.status, 'failed');
  assert.equal(asked.length, 1);
  assert.equal((asked[0] as TritonError).code, 'server-not-running');
  assert.equal(outcome.error, 'failed: The Triton container stopped unexpectedly with exit code 137.');
  assert.equal(t.service.get(id)!.messages.at(-1)!.status, 'failed');
  assert.equal(t.service.get(id)!.messages.length, 2, 'the question stays, with the failed answer after it');
});
