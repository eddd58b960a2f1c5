// OpenAI request → ChatGLM3 request: the schemas, the mapping onto the chat core's history format and every
// refusal (a 400 naming the field). Pure: no server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  chatCompletionRequestSchema, completionRequestSchema, fieldName, fromZodError, mapChatCompletion, mapCompletion,
  modelSamplingDefaults, OpenAiError,
} from '../../../src/core/openai';
import { DEFAULT_MODEL_SETTINGS } from '../../../src/core/repository';

const defaults = modelSamplingDefaults(DEFAULT_MODEL_SETTINGS);
const chat = (body: Record<string, unknown>) => mapChatCompletion(chatCompletionRequestSchema.parse({ model: 'chatglm3-6b', ...body }), defaults);
const text = (body: Record<string, unknown>) => mapCompletion(completionRequestSchema.parse({ model: 'chatglm3-6b', ...body }), defaults);
const user = (content: unknown) => ({ role: 'user', content });

function refused(fn: () => unknown, param: string, message?: RegExp): OpenAiError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof OpenAiError, `expected an OpenAiError for ${param}, got ${String(caught)}`);
  assert.equal(caught.status, 400);
  assert.equal(caught.param, param);
  assert.equal(caught.type, 'invalid_request_error');
  if (message) assert.match(caught.message, message);
  return caught;
}

test('messages: the last user message is the prompt, the ones before it the history in order (developer = system)', () => {
  const m = chat({
    messages: [
      { role: 'developer', content: 'Be brief.' },
      user('What is 2+2?'),
      { role: 'assistant', content: '4' },
      user([{ type: 'text', text: 'And' }, { type: 'text', text: '3+3?' }]),
    ],
  });
  assert.equal(m.request.prompt, 'And\n3+3?');
  assert.deepEqual(m.request.history, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'What is 2+2?' },
    { role: 'assistant', content: '4' },
  ]);
  assert.equal(m.stream, false);
  assert.deepEqual(m.stop, []);
});

test('sampling: absent values are the model defaults (every request sends the same inputs); given ones pass through', () => {
  const plain = chat({ messages: [user('hi')] });
  assert.deepEqual([plain.request.temperature, plain.request.topP, plain.request.maxNewTokens, plain.request.seed], [0.8, 0.8, 512, undefined]);
  const set = chat({ messages: [user('hi')], temperature: 0, top_p: 0.5, max_tokens: 7, seed: 42, stop: 'END', stream: true, stream_options: { include_usage: true } });
  assert.deepEqual([set.request.temperature, set.request.topP, set.request.maxNewTokens, set.request.seed], [0, 0.5, 7, 42]);
  assert.deepEqual(set.stop, ['END']);
  assert.equal(set.stream, true);
  assert.equal(set.includeUsage, true);
  // max_completion_tokens is the newer name and wins over max_tokens.
  assert.equal(chat({ messages: [user('hi')], max_tokens: 9, max_completion_tokens: 5 }).request.maxNewTokens, 5);
  // top_p 0 keeps only the most likely token: greedy.
  const greedy = chat({ messages: [user('hi')], top_p: 0, temperature: 1 });
  assert.deepEqual([greedy.request.temperature, greedy.request.topP], [0, 1]);
  // Neutral values of unsupported features are accepted.
  const neutral = chat({ messages: [user('hi')], n: 1, logprobs: false, frequency_penalty: 0, presence_penalty: 0, tools: [], tool_choice: 'none', response_format: { type: 'text' }, user: 'u-1', logit_bias: {} });
  assert.equal(neutral.request.prompt, 'hi');
});

test('refused with the field named: n > 1, tools, images, logprobs, tool roles, penalties, structured output', () => {
  refused(() => chat({ messages: [user('hi')], n: 2 }), 'n', /n > 1/);
  refused(() => chat({ messages: [user('hi')], tools: [{ type: 'function', function: { name: 'f' } }] }), 'tools');
  refused(() => chat({ messages: [user('hi')], tool_choice: 'auto' }), 'tool_choice');
  refused(() => chat({ messages: [user('hi')], functions: [{ name: 'f' }] }), 'functions');
  refused(() => chat({ messages: [user([{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:x' } }])] }), 'messages[0].content[1].type', /image_url/);
  refused(() => chat({ messages: [user([{ type: 'input_audio', input_audio: {} }])] }), 'messages[0].content[0].type');
  refused(() => chat({ messages: [user('hi')], logprobs: true }), 'logprobs');
  refused(() => chat({ messages: [user('hi')], top_logprobs: 2 }), 'top_logprobs');
  refused(() => chat({ messages: [user('hi'), { role: 'tool', content: 'x', tool_call_id: 'a' }] }), 'messages[1].role');
  refused(() => chat({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'a' }] }, user('hi')] }), 'messages[0].tool_calls');
  refused(() => chat({ messages: [user('hi')], frequency_penalty: 0.5 }), 'frequency_penalty');
  refused(() => chat({ messages: [user('hi')], presence_penalty: -1 }), 'presence_penalty');
  refused(() => chat({ messages: [user('hi')], logit_bias: { 5: 10 } }), 'logit_bias');
  refused(() => chat({ messages: [user('hi')], response_format: { type: 'json_object' } }), 'response_format');
  refused(() => chat({ messages: [user('hi')], modalities: ['text', 'audio'] }), 'modalities');
  refused(() => chat({ messages: [user('hi')], stop: ['ok', ''] }), 'stop[1]');
  refused(() => chat({ messages: [user('hi')], stream_options: { include_usage: true } }), 'stream_options');
});

test('the question must be a non-empty user message at the end', () => {
  refused(() => chat({ messages: [user('hi'), { role: 'assistant', content: 'hello' }] }), 'messages', /last message must have role 'user'/);
  refused(() => chat({ messages: [{ role: 'system', content: 'x' }, user('  ')] }), 'messages[1].content');
});

test('schema: wrong types and ranges name their field', () => {
  const problem = (body: Record<string, unknown>) => {
    const r = chatCompletionRequestSchema.safeParse(body);
    assert.equal(r.success, false);
    return fromZodError((r as { error: Parameters<typeof fromZodError>[0] }).error);
  };
  assert.equal(problem({ model: 'm', messages: [user('x')], temperature: '0.8' }).param, 'temperature');
  assert.equal(problem({ model: 'm', messages: [user('x')], temperature: 3 }).param, 'temperature');
  assert.equal(problem({ model: 'm', messages: [user('x')], max_tokens: 1.5 }).param, 'max_tokens');
  assert.equal(problem({ model: 'm', messages: [] }).param, 'messages');
  assert.equal(problem({ model: 'm', messages: [{ role: 'wizard', content: 'x' }] }).param, 'messages[0].role');
  assert.equal(problem({ model: 'm', messages: [user(5)] }).param, 'messages[0].content');
  assert.equal(problem({ messages: [user('x')] }).param, 'model');
  assert.equal(problem({ model: 'm', messages: [user('x')], stop: ['a', 'b', 'c', 'd', 'e'] }).param, 'stop');
  const e = problem({ model: 'm', messages: [user('x')], top_p: 'high' });
  assert.equal(e.status, 400);
  assert.equal(e.code, 'invalid_type');
  assert.deepEqual(Object.keys(e.body().error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(fieldName(['messages', 3, 'content', 0, 'type']), 'messages[3].content[0].type');
});

test('completions: a raw continuation of one prompt (raw, no history); echo, suffix, best_of, logprobs, several prompts', () => {
  const m = text({ prompt: 'def add(a, b):', max_tokens: 16, stop: ['\n\n'] });
  assert.equal(m.raw, true);
  assert.equal(m.request.prompt, 'def add(a, b):');
  assert.deepEqual(m.request.history, []);
  assert.equal(m.request.maxNewTokens, 16);
  assert.deepEqual(m.stop, ['\n\n']);
  assert.equal(m.echo, false);
  assert.equal(chat({ messages: [user('hi')] }).raw, false, 'chat/completions stays a chat turn');
  const one = text({ prompt: ['one prompt'], echo: true });
  assert.equal(one.echo, true);
  assert.equal(one.request.prompt, 'one prompt');
  assert.equal(text({ prompt: '    ' }).request.prompt, '    ', 'whitespace is text to continue');
  refused(() => text({ prompt: 'x', suffix: 'y' }), 'suffix');
  refused(() => text({ prompt: 'x', best_of: 3 }), 'best_of');
  refused(() => text({ prompt: 'x', n: 2 }), 'n');
  refused(() => text({ prompt: 'x', logprobs: 0 }), 'logprobs');
  refused(() => text({ prompt: '' }), 'prompt', /empty/);
  refused(() => text({ prompt: ['a', 'b'] }), 'prompt', /list of 2/);
  refused(() => text({ prompt: [] }), 'prompt', /list of 0/);
  refused(() => text({ prompt: 'x', stop: 'y'.repeat(257) }), 'stop', /at most 256/);
  const tokens = completionRequestSchema.safeParse({ model: 'm', prompt: [1, 2, 3] });
  assert.equal(tokens.success, false, 'token-id prompts are refused');
  assert.equal(fromZodError((tokens as { error: Parameters<typeof fromZodError>[0] }).error).param, 'prompt');
});
