import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildChatRequest } from '../../../src/core/chat/requestBuilder';
import { estimateTokens, MESSAGE_OVERHEAD_TOKENS, PROMPT_OVERHEAD_TOKENS } from '../../../src/core/composer/tokenEstimate';
import { countLmTokens, toChatRequest, type LmMessage, type LmRole } from '../../../src/core/lm';

const limits = { maxInputTokens: 6144, maxOutputTokens: 2048 };
const m = (role: LmRole, ...texts: string[]): LmMessage => ({ role, parts: texts.map((text) => ({ kind: 'text', text })) });
const opts = { limits, defaultMaxNewTokens: 512 };

describe('VS Code messages onto ChatGLM3 requests', () => {
  it('maps system, user and assistant text onto the system prompt, the history and the question', () => {
    const r = toChatRequest([m('system', 'Be brief.'), m('user', 'What is ', 'pi?'), m('assistant', 'About 3.14.'), m('user', 'And e?')], opts);
    assert.ok(r.ok);
    assert.equal(r.request.prompt, 'And e?');
    assert.deepEqual(r.request.history, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is pi?' },
      { role: 'assistant', content: 'About 3.14.' },
    ]);
    assert.equal(r.request.maxNewTokens, 512);
  });

  it('builds the same request as the chat panel does for the same conversation', () => {
    const r = toChatRequest([m('system', 'S'), m('user', 'q1'), m('assistant', 'a1'), m('user', 'q2')], opts);
    const panel = buildChatRequest({ id: 'c', title: '', createdAt: 0, updatedAt: 0, systemPrompt: 'S', messages: [
      { id: '1', role: 'user', content: 'q1', status: 'complete', createdAt: 0 },
      { id: '2', role: 'assistant', content: 'a1', status: 'complete', createdAt: 0 },
      { id: '3', role: 'user', content: 'q2', status: 'complete', createdAt: 0 },
    ] }, { maxNewTokens: 512 });
    assert.ok(r.ok && panel.ok);
    assert.deepEqual(r.request, panel.request);
    assert.equal(r.inputTokens, panel.estimatedInputTokens);
  });

  it('joins messages of one role in a row into one turn, and leaves out empty ones', () => {
    const r = toChatRequest([m('user', 'context'), m('user', 'question'), m('assistant', ''), m('user', '  ')], opts);
    assert.ok(r.ok);
    assert.equal(r.request.prompt, 'context\n\nquestion');
    assert.deepEqual(r.request.history, []);
  });

  it('refuses a tool call, a tool result or data by name, never dropping it', () => {
    const r = toChatRequest([m('user', 'hi'), { role: 'assistant', parts: [{ kind: 'other', what: 'tool call' }] }, m('user', 'go on')], opts);
    assert.ok(!r.ok);
    assert.equal(r.error.code, 'unsupported-part');
    assert.ok(r.error.code === 'unsupported-part' && r.error.messageIndex === 1 && r.error.what === 'tool call');
    assert.match(r.error.message, /Message 2 holds a tool call/);
  });

  it('refuses a role it does not know', () => {
    const r = toChatRequest([{ role: undefined, roleName: '7', parts: [{ kind: 'text', text: 'x' }] }, m('user', 'q')], opts);
    assert.ok(!r.ok && r.error.code === 'unsupported-role');
    assert.match(r.error.message, /role 7/);
  });

  it('needs a user message last', () => {
    for (const messages of [[], [m('system', 's')], [m('user', 'q'), m('assistant', 'a')]]) {
      const r = toChatRequest(messages, opts);
      assert.ok(!r.ok && r.error.code === 'no-question', JSON.stringify(messages));
    }
  });

  it('fails over the input budget with the budget in the message, and cuts nothing', () => {
    const long = 'word '.repeat(600);
    const small = { ...opts, limits: { maxInputTokens: 500, maxOutputTokens: 2048 } };
    const r = toChatRequest([m('user', long), m('assistant', 'ok'), m('user', 'short')], small);
    assert.ok(!r.ok && r.error.code === 'over-budget');
    assert.ok(r.error.code === 'over-budget' && r.error.maxInputTokens === 500 && r.error.tokens > 500);
    assert.match(r.error.message, /input budget of 500 tokens/);
    // Within the budget the whole history goes.
    const ok = toChatRequest([m('user', 'q1'), m('assistant', 'a1'), m('user', 'q2')], small);
    assert.ok(ok.ok && ok.request.history.length === 2);
  });

  it('takes max tokens and sampling from modelOptions, clamped to the server limit; refuses a wrong type', () => {
    const r = toChatRequest([m('user', 'q')], { ...opts, temperature: 0.8, modelOptions: { maxTokens: 99_999, temperature: 0.1, top_p: 0.5 } });
    assert.ok(r.ok);
    assert.equal(r.request.maxNewTokens, 2048);
    assert.equal(r.request.temperature, 0.1);
    assert.equal(r.request.topP, 0.5);
    const bad = toChatRequest([m('user', 'q')], { ...opts, modelOptions: { temperature: 'hot' } });
    assert.ok(!bad.ok && bad.error.code === 'bad-option' && bad.error.what === 'temperature');
    const unknown = toChatRequest([m('user', 'q')], { ...opts, modelOptions: { someVendorOption: true } });
    assert.ok(unknown.ok, 'options of other vendors are ignored');
  });
});

describe('token counts', () => {
  it('count a text by the token meter estimate and a message with its role overhead', () => {
    assert.equal(countLmTokens('hello world'), estimateTokens('hello world'));
    assert.equal(countLmTokens(m('user', 'hello ', 'world')), estimateTokens('hello world') + MESSAGE_OVERHEAD_TOKENS);
  });

  it('never come to less than what the request is checked against (the sum plus the framing)', () => {
    const messages = [m('system', 'Be brief.'), m('user', '你好，世界'), m('assistant', 'Hello!'), m('user', 'Explain `x => x * 2` 😀')];
    const r = toChatRequest(messages, opts);
    assert.ok(r.ok);
    const counted = messages.reduce((sum, x) => sum + countLmTokens(x), 0);
    assert.equal(counted + PROMPT_OVERHEAD_TOKENS, r.inputTokens);
  });
});
