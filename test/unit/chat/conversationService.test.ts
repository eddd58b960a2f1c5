import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatError, ConversationService } from '../../../src/core/chat/conversationService';
import { MemoryConversationStore } from '../../../src/core/chat/store';
import type { Conversation } from '../../../src/core/chat/conversation';

function setup(initial: Conversation[] = []) {
  let t = 1_000;
  let n = 0;
  const store = new MemoryConversationStore(initial);
  const service = new ConversationService(store, { now: () => (t += 10), newId: () => `id${(n += 1)}`, persistDelayMs: 60_000 });
  return { store, service };
}

const final = { finishReason: 'stop' as const, promptTokens: 12, completionTokens: 5, historyTrimmed: 0 };

describe('ConversationService', () => {
  it('flushes a user message to the store before returning (nothing typed is lost)', async () => {
    const { store, service } = setup();
    const c = service.create();
    await service.appendUserMessage(c.id, '  How do I\n reverse a list in Python?  ');
    const saved = store.snapshot();
    assert.equal(saved.length, 1);
    assert.equal(saved[0].messages[0].content, '  How do I\n reverse a list in Python?  ');
    assert.equal(saved[0].title, 'How do I reverse a list in Python?');
  });

  it('keeps deltas in memory (throttled) and persists the complete answer with its usage at finish', async () => {
    const { store, service } = setup();
    const c = service.create();
    await service.appendUserMessage(c.id, 'hi');
    const a = service.startAnswer(c.id);
    const savesBefore = store.saves;
    service.appendDelta(c.id, a.id, 'Hel');
    service.appendDelta(c.id, a.id, 'lo');
    assert.equal(store.saves, savesBefore, 'deltas must not write synchronously');
    assert.equal(service.get(c.id)?.messages[1].content, 'Hello');
    await service.finish(c.id, a.id, final);
    const saved = store.snapshot()[0].messages[1];
    assert.equal(saved.content, 'Hello');
    assert.equal(saved.status, 'complete');
    assert.equal(saved.promptTokens, 12);
    assert.equal(saved.completionTokens, 5);
  });

  it('the throttled save happens after persistDelayMs', async () => {
    const store = new MemoryConversationStore();
    const service = new ConversationService(store, { persistDelayMs: 20 });
    const c = service.create();
    await service.appendUserMessage(c.id, 'q');
    const a = service.startAnswer(c.id);
    service.appendDelta(c.id, a.id, 'partial');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(store.snapshot()[0].messages[1].content, 'partial');
    assert.equal(store.snapshot()[0].messages[1].status, 'streaming');
  });

  it('stop and fail keep the partial answer and mark it', async () => {
    const { store, service } = setup();
    const c = service.create();
    await service.appendUserMessage(c.id, 'q1');
    const a1 = service.startAnswer(c.id);
    service.appendDelta(c.id, a1.id, 'half an ans');
    await service.stop(c.id, a1.id);
    await service.appendUserMessage(c.id, 'q2');
    const a2 = service.startAnswer(c.id);
    service.appendDelta(c.id, a2.id, 'before the crash');
    await service.fail(c.id, a2.id, 'connection reset');
    const [m1, m2] = store.snapshot()[0].messages.filter((m) => m.role === 'assistant');
    assert.deepEqual([m1.content, m1.status, m1.finishReason], ['half an ans', 'stopped', 'cancelled']);
    assert.deepEqual([m2.content, m2.status, m2.error], ['before the crash', 'failed', 'connection reset']);
    assert.throws(() => service.appendDelta(c.id, a2.id, 'late'), (e: unknown) => e instanceof ChatError && e.code === 'not-streaming');
  });

  it('refuses a second question while an answer streams', async () => {
    const { service } = setup();
    const c = service.create();
    await service.appendUserMessage(c.id, 'q');
    service.startAnswer(c.id);
    await assert.rejects(service.appendUserMessage(c.id, 'again'), (e: unknown) => e instanceof ChatError && e.code === 'answer-in-progress');
    await assert.rejects(service.appendUserMessage(c.id, '   '), (e: unknown) => e instanceof ChatError && (e.code === 'empty-text' || e.code === 'answer-in-progress'));
  });

  it('regenerate drops the last answer and the request asks the same question again', async () => {
    const { service } = setup();
    const c = service.create();
    await service.appendUserMessage(c.id, 'first');
    const a = service.startAnswer(c.id);
    service.appendDelta(c.id, a.id, 'one');
    await service.finish(c.id, a.id, final);
    await service.appendUserMessage(c.id, 'second');
    const b = service.startAnswer(c.id);
    service.appendDelta(c.id, b.id, 'bad answer');
    await service.finish(c.id, b.id, final);

    const q = await service.regenerate(c.id);
    assert.equal(q.content, 'second');
    assert.deepEqual(service.get(c.id)?.messages.map((m) => m.content), ['first', 'one', 'second']);
    const b2 = service.startAnswer(c.id);
    const built = service.buildRequest(c.id);
    assert.ok(built.ok);
    assert.equal(built.request.prompt, 'second');
    assert.deepEqual(built.request.history, [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'one' }]);
    assert.equal(service.get(c.id)?.messages.at(-1)?.id, b2.id);
  });

  it('edit-and-resend replaces the last question and drops its answer', async () => {
    const { service } = setup();
    const c = service.create();
    await service.appendUserMessage(c.id, 'tpyo question');
    const a = service.startAnswer(c.id);
    await service.fail(c.id, a.id, 'boom');
    const edited = await service.editLast(c.id, 'typo question');
    assert.equal(edited.content, 'typo question');
    const conv = service.get(c.id);
    assert.deepEqual(conv?.messages.map((m) => [m.role, m.content]), [['user', 'typo question']]);
    assert.equal(conv?.title, 'typo question');
    await assert.rejects(service.editLast(c.id, ''), (e: unknown) => e instanceof ChatError && e.code === 'empty-text');
  });

  it('an answer still streaming into a deleted conversation ends quietly and is not saved', async () => {
    const { store, service } = setup();
    const c = service.create();
    await service.appendUserMessage(c.id, 'q');
    const a = service.startAnswer(c.id);
    await service.delete(c.id);
    service.appendDelta(c.id, a.id, 'late text');
    const done = await service.stop(c.id, a.id);
    assert.equal(done.status, 'stopped');
    assert.deepEqual(store.snapshot(), []);
    assert.equal(service.get(c.id), undefined);
    assert.throws(() => service.appendDelta(c.id, a.id, 'x'), (e: unknown) => e instanceof ChatError && e.code === 'not-found');
  });

  it('editing the first question keeps a title the user chose', async () => {
    const { service } = setup();
    const c = service.create();
    await service.appendUserMessage(c.id, 'first');
    await service.rename(c.id, 'My title');
    await service.editLast(c.id, 'first, edited');
    assert.equal(service.get(c.id)?.title, 'My title');
  });

  it('does not persist conversations that have no message yet', async () => {
    const { store, service } = setup();
    const empty = service.create();
    const used = service.create();
    await service.appendUserMessage(used.id, 'hello');
    assert.deepEqual(store.snapshot().map((c) => c.id), [used.id]);
    assert.deepEqual(service.list().map((c) => c.id), [used.id], 'nor listed in the history');
    assert.ok(service.get(empty.id), 'but it can be written in');
  });

  it('lists by updatedAt (newest first), renames and deletes', async () => {
    const { store, service } = setup();
    const a = service.create();
    await service.appendUserMessage(a.id, 'alpha');
    const b = service.create();
    await service.appendUserMessage(b.id, 'beta');
    assert.deepEqual(service.list().map((s) => s.title), ['beta', 'alpha']);
    await service.appendUserMessage(a.id, 'alpha again');
    assert.deepEqual(service.list().map((s) => s.title), ['alpha', 'beta']);
    const updatedAt = service.get(b.id)!.updatedAt;
    await service.rename(b.id, '  Beta   renamed ');
    assert.equal(service.get(b.id)?.title, 'Beta renamed');
    assert.equal(service.get(b.id)?.updatedAt, updatedAt, 'renaming is not activity: the chat keeps its time');
    assert.deepEqual(service.list().map((s) => s.title), ['alpha', 'Beta renamed'], 'and its place in the list');
    await service.delete(a.id);
    assert.deepEqual(store.snapshot().map((c) => c.title), ['Beta renamed']);
    await assert.rejects(service.delete(a.id), (e: unknown) => e instanceof ChatError && e.code === 'not-found');
  });

  it('answers left streaming by a killed process come back interrupted, with their text', async () => {
    const { store, service } = setup();
    const c = service.create();
    await service.appendUserMessage(c.id, 'q');
    const a = service.startAnswer(c.id);
    service.appendDelta(c.id, a.id, 'partial text');
    await service.flush(); // what the throttled save would have written before the kill
    const reloaded = new ConversationService(new MemoryConversationStore(store.snapshot()));
    await reloaded.init();
    const m = reloaded.get(c.id)?.messages[1];
    assert.equal(m?.status, 'interrupted');
    assert.equal(m?.content, 'partial text');
    // and it is not sent back to the model as history
    await reloaded.appendUserMessage(c.id, 'next');
    const built = reloaded.buildRequest(c.id);
    assert.ok(built.ok);
    assert.deepEqual(built.request.history, []);
    assert.equal(built.skippedIncomplete, 1);
  });

  it('records client-side plus model-side trimming on the finished answer', async () => {
    const { service } = setup();
    const c = service.create();
    for (const q of ['a', 'b', 'c']) {
      await service.appendUserMessage(c.id, q);
      const a = service.startAnswer(c.id);
      service.appendDelta(c.id, a.id, `answer ${q}`);
      await service.finish(c.id, a.id, final);
    }
    await service.appendUserMessage(c.id, 'd');
    const a = service.startAnswer(c.id);
    const built = service.buildRequest(c.id, { historyLen: 1 });
    assert.ok(built.ok);
    assert.equal(built.trimmedByTurns, 4);
    const done = await service.finish(c.id, a.id, { ...final, historyTrimmed: 2 });
    assert.equal(done.historyTrimmed, 6);
  });
});

describe('ConversationService: edit, regenerate and continue any turn; kinds; undo of delete', () => {
  async function threeTurns() {
    const t = setup();
    const c = t.service.create();
    const ids: { q: string; a: string }[] = [];
    for (const q of ['one', 'two', 'three']) {
      const question = await t.service.appendUserMessage(c.id, q);
      const a = t.service.startAnswer(c.id);
      t.service.appendDelta(c.id, a.id, `answer ${q}`);
      await t.service.finish(c.id, a.id, final);
      ids.push({ q: question.id, a: a.id });
    }
    return { ...t, id: c.id, ids };
  }
  const contents = (service: ConversationService, id: string) => service.get(id)?.messages.map((m) => m.content);

  it('editing an earlier question replaces it and drops every later turn; the request then asks it', async () => {
    const { service, store, id, ids } = await threeTurns();
    const edited = await service.editQuestion(id, ids[1]!.q, 'two, better');
    assert.equal(edited.id, ids[1]!.q, 'the question keeps its id');
    assert.deepEqual(contents(service, id), ['one', 'answer one', 'two, better']);
    assert.deepEqual(store.snapshot()[0]!.messages.map((m) => m.content), ['one', 'answer one', 'two, better'], 'saved at once');
    service.startAnswer(id);
    const built = service.buildRequest(id);
    assert.ok(built.ok);
    assert.equal(built.request.prompt, 'two, better');
    assert.deepEqual(built.request.history, [{ role: 'user', content: 'one' }, { role: 'assistant', content: 'answer one' }]);
  });

  it('editing the first question renames an automatic title only; answers and unknown ids cannot be edited', async () => {
    const { service, id, ids } = await threeTurns();
    await service.editQuestion(id, ids[0]!.q, 'uno');
    assert.equal(service.get(id)?.title, 'uno');
    assert.deepEqual(contents(service, id), ['uno']);
    await assert.rejects(service.editQuestion(id, 'missing', 'x'), (e: unknown) => e instanceof ChatError && e.code === 'nothing-to-edit');
    const { service: s2, id: id2, ids: ids2 } = await threeTurns();
    await assert.rejects(s2.editQuestion(id2, ids2[0]!.a, 'x'), (e: unknown) => e instanceof ChatError && e.code === 'nothing-to-edit');
    await assert.rejects(s2.editQuestion(id2, ids2[0]!.q, '  '), (e: unknown) => e instanceof ChatError && e.code === 'empty-text');
    assert.equal(s2.get(id2)?.messages.length, 6, 'a refused edit changes nothing');
  });

  it('regenerating an earlier answer drops it and every later turn, leaving its question last', async () => {
    const { service, id, ids } = await threeTurns();
    const question = await service.regenerateAnswer(id, ids[0]!.a);
    assert.equal(question.content, 'one');
    assert.deepEqual(contents(service, id), ['one']);
    const again = service.startAnswer(id);
    assert.equal(service.get(id)?.messages.at(-1)?.id, again.id);
    await assert.rejects(service.regenerateAnswer(id, ids[1]!.a), (e: unknown) => e instanceof ChatError && e.code === 'answer-in-progress');
    await service.stop(id, again.id);
    await assert.rejects(service.regenerateAnswer(id, ids[0]!.q), (e: unknown) => e instanceof ChatError && e.code === 'nothing-to-regenerate', 'a question is not an answer');
  });

  it('an answer cut at the length limit is continued in place: deltas append, tokens of both parts are counted', async () => {
    const { service, store } = setup();
    const c = service.create();
    await service.appendUserMessage(c.id, 'write a poem');
    const a = service.startAnswer(c.id);
    service.appendDelta(c.id, a.id, 'Roses are red,');
    await service.finish(c.id, a.id, { ...final, finishReason: 'length', completionTokens: 8 });
    const reopened = service.startContinuation(c.id, a.id);
    assert.equal(reopened.status, 'streaming');
    const built = service.buildContinueRequest(c.id, a.id, { historyLen: 0 });
    assert.ok(built.ok);
    assert.match(built.request.prompt, /^Continue your last answer/);
    assert.deepEqual(built.request.history, [{ role: 'user', content: 'write a poem' }, { role: 'assistant', content: 'Roses are red,' }], 'the cut turn is kept even with historyLen 0');
    assert.equal(built.request.historyLen, 1);
    service.appendDelta(c.id, a.id, ' violets are blue.');
    const done = await service.finish(c.id, a.id, { ...final, finishReason: 'stop', completionTokens: 5, promptTokens: 30 });
    assert.deepEqual([done.content, done.status, done.finishReason, done.completionTokens, done.promptTokens], ['Roses are red, violets are blue.', 'complete', 'stop', 13, 30]);
    assert.equal(service.get(c.id)?.messages.length, 2, 'one answer, not two');
    assert.equal(store.snapshot()[0]!.messages[1]!.content, 'Roses are red, violets are blue.');
    assert.throws(() => service.startContinuation(c.id, a.id), (e: unknown) => e instanceof ChatError && e.code === 'nothing-to-continue', 'it no longer ends at the limit');
  });

  it('only the last answer, complete at the length limit, can be continued', async () => {
    const { service, id, ids } = await threeTurns();
    assert.throws(() => service.startContinuation(id, ids[2]!.a), (e: unknown) => e instanceof ChatError && e.code === 'nothing-to-continue', 'finished with stop');
    const c = service.create();
    await service.appendUserMessage(c.id, 'q');
    const a = service.startAnswer(c.id);
    await service.finish(c.id, a.id, { ...final, finishReason: 'length' });
    await service.appendUserMessage(c.id, 'next');
    assert.throws(() => service.startContinuation(c.id, a.id), (e: unknown) => e instanceof ChatError && e.code === 'nothing-to-continue', 'not the last message');
  });

  it('a stopped answer with text can be continued in place; an empty stopped or a failed one cannot', async () => {
    const { service } = setup();
    const c = service.create();
    await service.appendUserMessage(c.id, 'q');
    const a = service.startAnswer(c.id);
    service.appendDelta(c.id, a.id, 'half');
    await service.stop(c.id, a.id);
    const reopened = service.startContinuation(c.id, a.id);
    assert.equal(reopened.status, 'streaming');
    service.appendDelta(c.id, a.id, ' and the rest.');
    const done = await service.finish(c.id, a.id, { ...final, finishReason: 'stop' });
    assert.deepEqual([done.content, done.status], ['half and the rest.', 'complete']);
    const empty = service.create();
    await service.appendUserMessage(empty.id, 'q');
    const e = service.startAnswer(empty.id);
    await service.stop(empty.id, e.id);
    assert.throws(() => service.startContinuation(empty.id, e.id), (x: unknown) => x instanceof ChatError && x.code === 'nothing-to-continue', 'stopped before any text');
  });

  it('a stopped continuation keeps all its text, marked stopped', async () => {
    const { service } = setup();
    const c = service.create();
    await service.appendUserMessage(c.id, 'q');
    const a = service.startAnswer(c.id);
    service.appendDelta(c.id, a.id, 'first part');
    await service.finish(c.id, a.id, { ...final, finishReason: 'length' });
    service.startContinuation(c.id, a.id);
    service.appendDelta(c.id, a.id, ', second');
    const stopped = await service.stop(c.id, a.id);
    assert.deepEqual([stopped.content, stopped.status], ['first part, second', 'stopped']);
  });

  it('a given title and the explain kind are kept and listed; chats default to kind chat', async () => {
    const { service } = setup();
    const e = service.create({ kind: 'explain', title: 'Explain utils.py:12–30' });
    await service.appendUserMessage(e.id, 'Explain what this python code from utils.py does.');
    const chat = service.create();
    await service.appendUserMessage(chat.id, 'hello');
    assert.deepEqual(service.list().map((s) => [s.title, s.kind]), [['hello', 'chat'], ['Explain utils.py:12–30', 'explain']]);
    assert.equal(service.get(chat.id)?.kind, undefined, 'chats are stored without a kind, as before');
  });

  it('delete returns the conversation and restore brings it back, saved', async () => {
    const { service, store, id } = await threeTurns();
    const removed = await service.delete(id);
    assert.deepEqual(store.snapshot(), []);
    await service.restore(removed);
    assert.deepEqual(store.snapshot().map((c) => c.messages.length), [6]);
    assert.deepEqual(service.list().map((c) => c.id), [id]);
    await service.restore(removed);
    assert.equal(service.list().length, 1, 'restoring twice does not duplicate it');
  });
});

describe('ConversationService failures', () => {
  it('a failed save of a question rejects, keeps the question, and the next flush writes it', async () => {
    const store = new MemoryConversationStore();
    let failNext = true;
    const flaky = {
      load: () => store.load(),
      save: async (c: readonly Conversation[]) => {
        if (failNext) { failNext = false; throw new Error('disk full'); }
        await store.save(c);
      },
    };
    const service = new ConversationService(flaky, { persistDelayMs: 60_000 });
    const c = service.create();
    await assert.rejects(service.appendUserMessage(c.id, 'precious words'), /disk full/);
    assert.equal(service.get(c.id)?.messages[0].content, 'precious words');
    await service.flush();
    assert.equal(store.snapshot()[0].messages[0].content, 'precious words');
  });
});
