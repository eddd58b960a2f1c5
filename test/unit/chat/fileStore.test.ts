import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConversationService } from '../../../src/core/chat/conversationService';
import { FileConversationStore, parseStoreFile } from '../../../src/core/chat/fileStore';
import type { Conversation } from '../../../src/core/chat/conversation';

const dirs: string[] = [];
after(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }); });

async function tempFile(): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'chat-store-'));
  dirs.push(dir);
  return { dir, file: join(dir, 'nested', 'conversations.json') };
}

function conversation(id: string, text: string, updatedAt = 1): Conversation {
  return {
    id, title: text, createdAt: 1, updatedAt,
    messages: [
      { id: `${id}-u`, role: 'user', content: text, status: 'complete', createdAt: 1 },
      { id: `${id}-a`, role: 'assistant', content: `answer to {${text}} with "quotes" and } braces`, status: 'complete', createdAt: 2 },
    ],
  };
}

describe('FileConversationStore', () => {
  it('round-trips conversations (creating the folder) and starts empty without a file', async () => {
    const { file } = await tempFile();
    const store = new FileConversationStore(file);
    assert.deepEqual(await store.load(), { conversations: [], problems: [] });
    const data = [conversation('a', '你好'), conversation('b', 'hello')];
    await store.save(data);
    const loaded = await new FileConversationStore(file).load();
    assert.deepEqual(loaded.conversations, data);
    assert.deepEqual(loaded.problems, []);
  });

  it('writes atomically (no temp files left) and keeps the previous good file as .bak', async () => {
    const { file } = await tempFile();
    const store = new FileConversationStore(file);
    await store.save([conversation('a', 'one')]);
    assert.equal(existsSync(`${file}.bak`), false, 'no backup before there is a previous file');
    await store.save([conversation('a', 'one'), conversation('b', 'two')]);
    const bak = JSON.parse(await readFile(`${file}.bak`, 'utf8'));
    assert.deepEqual(bak.conversations.map((c: Conversation) => c.id), ['a']);
    const names = await readdir(join(file, '..'));
    assert.deepEqual(names.sort(), ['conversations.json', 'conversations.json.bak']);
  });

  it('turns streaming answers into interrupted on load, keeping the partial text', async () => {
    const { file } = await tempFile();
    const c = conversation('a', 'q');
    c.messages[1] = { ...c.messages[1], status: 'streaming', content: 'partial' };
    await new FileConversationStore(file).save([c]);
    const loaded = await new FileConversationStore(file).load();
    assert.equal(loaded.conversations[0].messages[1].status, 'interrupted');
    assert.equal(loaded.conversations[0].messages[1].content, 'partial');
  });

  it('truncated JSON: recovers every complete conversation plus the backup, sets the damaged file aside and reports it', async () => {
    const { file } = await tempFile();
    const store = new FileConversationStore(file, () => 1234);
    await store.save([conversation('old', 'only in backup', 1)]);
    await store.save([conversation('a', 'first', 2), conversation('b', 'second', 3), conversation('c', 'third', 4)]);
    const full = await readFile(file, 'utf8');
    const cut = full.slice(0, full.indexOf('"id": "c"') + 20); // mid-way through the third conversation
    await writeFile(file, cut);

    const result = await new FileConversationStore(file, () => 1234).load();
    assert.deepEqual(result.conversations.map((c) => c.id).sort(), ['a', 'b', 'old']);
    const corrupt = result.problems.find((p) => p.code === 'corrupt-file');
    assert.ok(corrupt, JSON.stringify(result.problems));
    assert.equal(corrupt.dropped, 1);
    assert.equal(corrupt.keptAsidePath, `${file}.corrupt-1234`);
    assert.equal(await readFile(`${file}.corrupt-1234`, 'utf8'), cut, 'the damaged file is kept byte for byte');
    assert.ok(result.problems.some((p) => p.code === 'restored-from-backup'));
    assert.equal(existsSync(file), false);
  });

  it('valid JSON with some invalid conversations keeps the valid ones and reports the rest', async () => {
    const { file } = await tempFile();
    const good = conversation('good', 'fine');
    await (await import('node:fs/promises')).mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, JSON.stringify({ version: 1, conversations: [good, { id: 'bad id!', messages: 'nope' }, 42] }));
    const result = await new FileConversationStore(file, () => 7).load();
    assert.deepEqual(result.conversations, [good]);
    assert.equal(result.problems[0].code, 'invalid-conversations');
    assert.equal(result.problems[0].dropped, 2);
    assert.ok(existsSync(`${file}.corrupt-7`));
  });

  it('a file of garbage is reported, kept aside, and the next save does not overwrite the good backup', async () => {
    const { file } = await tempFile();
    const store = new FileConversationStore(file, () => 9);
    await store.save([conversation('a', 'one')]);
    await store.save([conversation('a', 'one'), conversation('b', 'two')]);
    await writeFile(file, '\u0000\u0000garbage');
    const reloaded = new FileConversationStore(file, () => 9);
    const result = await reloaded.load();
    assert.deepEqual(result.conversations.map((c) => c.id), ['a']);
    assert.ok(result.problems.some((p) => p.code === 'corrupt-file'));
    await reloaded.save(result.conversations);
    const bak = JSON.parse(await readFile(`${file}.bak`, 'utf8'));
    assert.deepEqual(bak.conversations.map((c: Conversation) => c.id), ['a']);
    assert.deepEqual((await reloaded.load()).problems, []);
  });

  it('parseStoreFile salvages objects whose strings contain braces and escaped quotes', () => {
    const a = conversation('a', 'x { y } "z"');
    const text = JSON.stringify({ version: 1, conversations: [a, conversation('b', 'b')] });
    const r = parseStoreFile(text.slice(0, text.length - 30));
    assert.equal(r.damaged, true);
    assert.deepEqual(r.conversations, [a]);
    assert.equal(r.invalid, 1);
  });
});

describe('FileConversationStore shared by two windows', () => {
  it('keeps conversations the other window saved, and deletions stay deleted', async () => {
    const { file } = await tempFile();
    const a = new FileConversationStore(file);
    const b = new FileConversationStore(file);
    await a.load();
    await b.load();
    const fromA = conversation('fromA', 'window A', 1);
    const fromB = conversation('fromB', 'window B', 2);
    await a.save([fromA]);
    await new Promise((r) => setTimeout(r, 20)); // distinct mtimes
    await b.save([fromB]);
    assert.deepEqual((await new FileConversationStore(file).load()).conversations.map((c) => c.id).sort(), ['fromA', 'fromB']);
    // A keeps saving only what it holds: B's conversation is carried along even when the file did not change again
    await new Promise((r) => setTimeout(r, 20));
    await a.save([fromA]);
    await a.save([{ ...fromA, title: 'renamed in A', updatedAt: 5 }]);
    const after = (await new FileConversationStore(file).load()).conversations;
    assert.deepEqual(after.map((c) => c.id).sort(), ['fromA', 'fromB']);
    assert.equal(after.find((c) => c.id === 'fromA')?.title, 'renamed in A');
    // B deletes its conversation: it does not come back from A's next save
    await new Promise((r) => setTimeout(r, 20));
    await b.save([]);
    await new Promise((r) => setTimeout(r, 20));
    await a.save([fromA]);
    assert.deepEqual((await new FileConversationStore(file).load()).conversations.map((c) => c.id), ['fromA']);
  });

  it('loads a file saved by the version before conversation kinds (0.1.0), and saves chats in the same shape', async () => {
    const { file } = await tempFile();
    await (await import('node:fs/promises')).mkdir(join(file, '..'), { recursive: true });
    // Byte for byte what 0.1.0 wrote (JSON.stringify(..., null, 1)): no `kind`, an Explain conversation titled by
    // its question, a stopped answer and one cut at the length limit.
    const old = {
      version: 1,
      conversations: [
        {
          id: '5b1f4c1e-3c55-4a36-9a43-0e8b1f0a2f10', title: 'What does a dynamic batcher do?', createdAt: 1735689600000, updatedAt: 1735689660000,
          messages: [
            { id: 'q1', role: 'user', content: 'What does a dynamic batcher do?', status: 'complete', createdAt: 1735689600000 },
            { id: 'a1', role: 'assistant', content: 'It groups requests', status: 'complete', createdAt: 1735689601000, finishReason: 'length', promptTokens: 12, completionTokens: 96 },
          ],
        },
        {
          id: 'e2', title: 'Explain what this python code from geometry.py does. Be co…', createdAt: 1735689000000, updatedAt: 1735689010000, systemPrompt: 'Be brief.',
          messages: [
            { id: 'q2', role: 'user', content: 'Explain what this python code from geometry.py does.', status: 'complete', createdAt: 1735689000000 },
            { id: 'a2', role: 'assistant', content: 'It computes', status: 'stopped', createdAt: 1735689001000, finishReason: 'cancelled' },
          ],
        },
      ],
    };
    await writeFile(file, JSON.stringify(old, null, 1));
    const store = new FileConversationStore(file);
    const service = new ConversationService(store, { persistDelayMs: 60_000 });
    assert.deepEqual(await service.init(), [], 'no problem reported');
    assert.deepEqual(service.list().map((c) => [c.id, c.kind, c.messageCount]), [
      ['5b1f4c1e-3c55-4a36-9a43-0e8b1f0a2f10', 'chat', 2],
      ['e2', 'chat', 2],
    ]);
    assert.deepEqual(service.get('e2'), old.conversations[1], 'every field as it was');
    // The new operations work on it: continue the cut answer, then edit the question.
    service.startContinuation(old.conversations[0]!.id, 'a1');
    const built = service.buildContinueRequest(old.conversations[0]!.id, 'a1');
    assert.ok(built.ok);
    service.appendDelta(old.conversations[0]!.id, 'a1', ' into batches.');
    await service.finish(old.conversations[0]!.id, 'a1', { finishReason: 'stop', promptTokens: 40, completionTokens: 4, historyTrimmed: 0 });
    const saved = JSON.parse(await readFile(file, 'utf8')) as { version: number; conversations: Array<Record<string, unknown>> };
    assert.equal(saved.version, 1);
    assert.ok(saved.conversations.every((c) => !('kind' in c)), 'chats are still written without a kind');
    assert.equal((saved.conversations[0]!.messages as Array<{ content: string }>)[1]!.content, 'It groups requests into batches.');
  });

  it('round-trips an Explain conversation with its kind', async () => {
    const { file } = await tempFile();
    const explain: Conversation = { ...conversation('x', 'Explain a.py:3–9'), kind: 'explain' };
    await new FileConversationStore(file).save([explain]);
    assert.deepEqual((await new FileConversationStore(file).load()).conversations, [explain]);
  });
});
