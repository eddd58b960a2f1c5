import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildChatRequest } from '../../../src/core/chat/requestBuilder';
import { estimateTokens } from '../../../src/core/chat/tokenEstimate';
import type { Conversation, StoredMessage } from '../../../src/core/chat/conversation';

let n = 0;
const msg = (role: 'user' | 'assistant', content: string, status: StoredMessage['status'] = 'complete'): StoredMessage =>
  ({ id: `m${(n += 1)}`, role, content, status, createdAt: n });

function conv(messages: StoredMessage[], systemPrompt?: string): Conversation {
  return { id: 'c1', title: 't', createdAt: 0, updatedAt: 0, messages, ...(systemPrompt ? { systemPrompt } : {}) };
}

function turns(k: number, size = 10): StoredMessage[] {
  const out: StoredMessage[] = [];
  for (let i = 0; i < k; i += 1) out.push(msg('user', `q${i} ${'x'.repeat(size)}`), msg('assistant', `a${i} ${'y'.repeat(size)}`));
  return out;
}

describe('token estimate', () => {
  it('counts CJK about one token a character and Latin text more cheaply', () => {
    assert.equal(estimateTokens(''), 0);
    const cjk = estimateTokens('你好世界，今天天气很好');
    assert.ok(cjk >= 11, `CJK estimate ${cjk}`);
    const latin = estimateTokens('The quick brown fox jumps over the lazy dog');
    // real SentencePiece: ~10 tokens; conservative must not be below that
    assert.ok(latin >= 10 && latin <= 25, `latin estimate ${latin}`);
    assert.ok(estimateTokens('😀😀') >= 8);
  });
});

describe('buildChatRequest', () => {
  it('uses the last question as prompt and complete turns as ChatGLM3 history, system prompt first', () => {
    const r = buildChatRequest(conv([...turns(2), msg('user', 'now?')], 'Be brief.'), { temperature: 0.5, topP: 0.9, topK: 50, repetitionPenalty: 1.05, maxNewTokens: 64 });
    assert.ok(r.ok);
    assert.equal(r.request.prompt, 'now?');
    assert.deepEqual(r.request.history.map((m) => m.role), ['system', 'user', 'assistant', 'user', 'assistant']);
    assert.equal(r.request.history[0].content, 'Be brief.');
    assert.deepEqual([r.request.temperature, r.request.topP, r.request.maxNewTokens], [0.5, 0.9, 64]);
    assert.deepEqual([r.request.topK, r.request.repetitionPenalty], [50, 1.05]);
    assert.equal(r.trimmedByTurns + r.trimmedByTokens, 0);
  });

  it('ignores a trailing streaming answer (the one being generated)', () => {
    const r = buildChatRequest(conv([...turns(1), msg('user', 'q'), msg('assistant', '', 'streaming')]));
    assert.ok(r.ok);
    assert.equal(r.request.prompt, 'q');
    assert.equal(r.request.history.length, 2);
  });

  it('leaves out turns whose answer was stopped, failed or interrupted (question and partial answer)', () => {
    const r = buildChatRequest(conv([
      msg('user', 'ok q'), msg('assistant', 'ok a'),
      msg('user', 'stopped q'), msg('assistant', 'part', 'stopped'),
      msg('user', 'failed q'), msg('assistant', 'part', 'failed'),
      msg('user', 'orphan q'),
      msg('user', 'int q'), msg('assistant', 'part', 'interrupted'),
      msg('user', 'current'),
    ]));
    assert.ok(r.ok);
    assert.deepEqual(r.request.history.map((m) => m.content), ['ok q', 'ok a']);
    assert.equal(r.skippedIncomplete, 4);
  });

  it('trims by turns (historyLen), oldest first, and passes historyLen on', () => {
    const r = buildChatRequest(conv([...turns(5), msg('user', 'q')]), { historyLen: 2 });
    assert.ok(r.ok);
    assert.deepEqual(r.request.history.map((m) => m.content.split(' ')[0]), ['q3', 'a3', 'q4', 'a4']);
    assert.equal(r.trimmedByTurns, 6);
    assert.equal(r.request.historyLen, 2);
    const none = buildChatRequest(conv([...turns(2), msg('user', 'q')]), { historyLen: 0 });
    assert.ok(none.ok);
    assert.deepEqual(none.request.history, []);
    assert.equal(none.trimmedByTurns, 4);
  });

  it('trims by the token budget, keeps the system prompt, and reports it', () => {
    const c = conv([...turns(10, 300), msg('user', '最后的问题')], '系统提示');
    const all = buildChatRequest(c);
    assert.ok(all.ok);
    const budget = Math.floor(all.estimatedInputTokens / 2);
    const r = buildChatRequest(c, { maxInputTokens: budget });
    assert.ok(r.ok);
    assert.ok(r.estimatedInputTokens <= budget, `${r.estimatedInputTokens} > ${budget}`);
    assert.ok(r.trimmedByTokens > 0 && r.trimmedByTokens % 2 === 0);
    assert.equal(r.request.history[0].role, 'system');
    assert.equal(r.request.history.at(-1)?.content.startsWith('a9'), true, 'the newest turn is kept');
    assert.equal(r.request.history.length, 1 + 20 - r.trimmedByTokens);
  });

  it('reports a prompt that cannot fit, and a conversation without a question', () => {
    const big = buildChatRequest(conv([msg('user', '字'.repeat(5000))]), { maxInputTokens: 1000 });
    assert.equal(big.ok, false);
    assert.equal(!big.ok && big.code, 'prompt-too-long');
    const none = buildChatRequest(conv([]));
    assert.equal(!none.ok && none.code, 'no-question');
  });
});
