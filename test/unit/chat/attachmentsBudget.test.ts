// The token budget of a question with its attachments, and how the request builder uses it: over budget is told
// before sending with the largest attachment to offer dropping; older turns are trimmed around the current
// question, never its attachments.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Attachment } from '../../../src/core/chat/attachments';
import { attachmentTokens, checkBudget, fixedRequestTokens, largestAttachment, withoutAttachment } from '../../../src/core/chat/attachmentsBudget';
import { formatUserMessage } from '../../../src/core/chat/attachmentsLayout';
import type { Conversation, StoredMessage } from '../../../src/core/chat/conversation';
import { buildChatRequest } from '../../../src/core/chat/requestBuilder';

const file = (id: string, chars: number, path = `${id}.py`): Attachment => ({
  id, kind: 'file', path, uri: `file:///w/${path}`, languageId: 'python', content: `${'x = 1\n'.repeat(Math.ceil(chars / 6))}`,
});

let n = 0;
const msg = (role: 'user' | 'assistant', content: string, attachments?: Attachment[]): StoredMessage =>
  ({ id: `m${(n += 1)}`, role, content, status: 'complete', createdAt: n, ...(attachments ? { attachments } : {}) });
const conv = (messages: StoredMessage[], systemPrompt?: string): Conversation =>
  ({ id: 'c', title: 't', createdAt: 0, updatedAt: 0, messages, ...(systemPrompt ? { systemPrompt } : {}) });

describe('attachment budget', () => {
  it('fits: ok with the estimate of the whole fixed part', () => {
    const attachments = [file('a', 60)];
    const r = checkBudget({ question: 'why?', attachments, systemPrompt: 'Be brief.', maxInputTokens: 6144 });
    assert.ok(r.ok);
    assert.equal(r.tokens, fixedRequestTokens(formatUserMessage('why?', attachments), 'Be brief.'));
    assert.deepEqual(r.costs.map((c) => c.id), ['a']);
  });

  it('over budget: not ok, names the largest attachment (the first of equals)', () => {
    const attachments = [file('sm', 300), file('b1', 3000), file('b2', 3000)];
    const r = checkBudget({ question: 'explain', attachments, maxInputTokens: 800 });
    assert.ok(!r.ok);
    assert.equal(r.costs[1]!.tokens, r.costs[2]!.tokens);
    assert.equal(r.largest?.id, 'b1');
    assert.ok(r.tokens > 800);
    assert.equal(r.maxInputTokens, 800);
    assert.deepEqual(largestAttachment([]), undefined);
  });

  it('dropping the largest, step by step, until the question fits (what the user is offered each time)', () => {
    let attachments = [file('a', 600), file('b', 2400), file('c', 1200)];
    const dropped: string[] = [];
    for (;;) {
      const r = checkBudget({ question: 'q', attachments, maxInputTokens: 700 });
      if (r.ok) break;
      dropped.push(r.largest!.id);
      attachments = withoutAttachment(attachments, r.largest!.id);
    }
    assert.deepEqual(dropped, ['b', 'c']);
    assert.deepEqual(attachments.map((a) => a.id), ['a']);
  });

  it('a question too long on its own has nothing to drop', () => {
    const r = checkBudget({ question: 'word '.repeat(2000), attachments: [], maxInputTokens: 100 });
    assert.ok(!r.ok);
    assert.equal(r.largest, undefined);
  });

  it('per-attachment costs add up to the message cost (up to rounding of the estimate)', () => {
    const attachments = [file('a', 500), file('b', 900)];
    const total = fixedRequestTokens(formatUserMessage('q', attachments), undefined) - fixedRequestTokens('q', undefined);
    const sum = attachments.reduce((s, a) => s + attachmentTokens(a), 0);
    assert.ok(Math.abs(total - sum) <= attachments.length, `${total} vs ${sum}`);
  });
});

describe('request builder with attachments', () => {
  it('sends the current question with its attachments in the layout, and older questions with theirs', () => {
    const old = [file('old', 60)];
    const current = [file('cur', 60)];
    const r = buildChatRequest(conv([msg('user', 'first', old), msg('assistant', 'answer 1'), msg('user', 'second', current)]));
    assert.ok(r.ok);
    assert.equal(r.request.prompt, formatUserMessage('second', current));
    assert.equal(r.request.history[0]!.content, formatUserMessage('first', old));
    assert.equal(r.request.history[1]!.content, 'answer 1');
  });

  it('history trimming drops older turns (with their attachments) but never the current question\'s attachments', () => {
    const big = [file('old-big', 1800)];
    const current = [file('cur', 1200), file('cur2', 600)];
    const messages = [msg('user', 'one', big), msg('assistant', 'a1'), msg('user', 'two'), msg('assistant', 'a2'), msg('user', 'three', current)];
    const fixed = fixedRequestTokens(formatUserMessage('three', current), undefined);
    const r = buildChatRequest(conv(messages), { maxInputTokens: fixed + 40 });
    assert.ok(r.ok);
    assert.equal(r.request.prompt, formatUserMessage('three', current), 'the current attachments are all there');
    assert.deepEqual(r.request.history.map((m) => m.content), ['two', 'a2'], 'the oldest turn (with its big attachment) went');
    assert.equal(r.trimmedByTokens, 2);
    assert.ok(r.estimatedInputTokens <= fixed + 40);
  });

  it('the builder refuses what the budget check refuses (same estimate), instead of cutting it', () => {
    const current = [file('cur', 3000)];
    const budget = 500;
    assert.ok(!checkBudget({ question: 'q', attachments: current, systemPrompt: 'S', maxInputTokens: budget }).ok);
    const r = buildChatRequest(conv([msg('user', 'q', current)], 'S'), { maxInputTokens: budget });
    assert.ok(!r.ok);
    assert.equal(r.code, 'prompt-too-long');
    assert.equal(r.estimatedInputTokens, checkBudget({ question: 'q', attachments: current, systemPrompt: 'S', maxInputTokens: budget }).tokens);
  });
});
