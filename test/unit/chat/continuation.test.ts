// The request that continues an answer cut at the length limit (core/chat/continuation.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildContinuationRequest, CONTINUE_PROMPT } from '../../../src/core/chat/continuation';
import type { Conversation, StoredMessage } from '../../../src/core/chat/conversation';

const msg = (id: string, role: 'user' | 'assistant', content: string, status: StoredMessage['status'] = 'complete'): StoredMessage =>
  ({ id, role, content, status, createdAt: 1 });

const conversation = (messages: StoredMessage[], systemPrompt?: string): Conversation =>
  ({ id: 'c', title: 't', createdAt: 1, updatedAt: 1, messages, ...(systemPrompt ? { systemPrompt } : {}) });

describe('buildContinuationRequest', () => {
  const turns = [msg('q1', 'user', 'first'), msg('a1', 'assistant', 'one'), msg('q2', 'user', 'second'), msg('a2', 'assistant', 'cut off mid-', 'streaming')];

  it('asks the model to go on, with the cut answer as its own last turn and the earlier turns before it', () => {
    const r = buildContinuationRequest(conversation(turns, 'Be brief.'), 'a2', { historyLen: 10, maxNewTokens: 64 });
    assert.ok(r.ok);
    assert.equal(r.request.prompt, CONTINUE_PROMPT);
    assert.deepEqual(r.request.history, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'first' }, { role: 'assistant', content: 'one' },
      { role: 'user', content: 'second' }, { role: 'assistant', content: 'cut off mid-' },
    ]);
    assert.equal(r.request.maxNewTokens, 64);
  });

  it('keeps the cut turn when the history setting keeps none, and drops older turns first for the budget', () => {
    const none = buildContinuationRequest(conversation(turns), 'a2', { historyLen: 0 });
    assert.ok(none.ok);
    assert.deepEqual(none.request.history.map((m) => m.content), ['second', 'cut off mid-']);
    const long = [msg('q0', 'user', 'x '.repeat(300)), msg('a0', 'assistant', 'y '.repeat(300)), ...turns];
    const tight = buildContinuationRequest(conversation(long), 'a2', { maxInputTokens: 80 });
    assert.ok(tight.ok);
    assert.deepEqual(tight.request.history.map((m) => m.content), ['first', 'one', 'second', 'cut off mid-']);
    assert.equal(tight.trimmedByTokens, 2);
  });

  it('refuses when the cut answer itself does not fit, and for anything but the last answer', () => {
    const huge = [msg('q', 'user', 'q'), msg('a', 'assistant', 'word '.repeat(2000), 'streaming')];
    const r = buildContinuationRequest(conversation(huge), 'a', { maxInputTokens: 500 });
    assert.deepEqual([r.ok, !r.ok && r.code], [false, 'too-long-to-continue']);
    assert.equal(buildContinuationRequest(conversation(turns), 'a1').ok, false);
    assert.equal(buildContinuationRequest(conversation(turns), 'q2').ok, false);
    assert.equal(buildContinuationRequest(conversation([]), 'a2').ok, false);
  });
});
