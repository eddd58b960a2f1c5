// Attachments persisted with the conversation: a file written before attachments existed loads unchanged (and its
// questions still build requests), attachments round-trip, a damaged attachment is caught by the store's validation
// like any other damage, and the conversation service keeps a question's attachments through an edit.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Attachment } from '../../../src/core/chat/attachments';
import { formatUserMessage } from '../../../src/core/chat/attachmentsLayout';
import { ConversationService } from '../../../src/core/chat/conversationService';
import { FileConversationStore } from '../../../src/core/chat/fileStore';
import { buildChatRequest } from '../../../src/core/chat/requestBuilder';
import { MemoryConversationStore } from '../../../src/core/chat/store';

const dirs: string[] = [];
after(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }); });
async function storeFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'chat-attachments-'));
  dirs.push(dir);
  return join(dir, 'conversations.json');
}

/** A conversations.json as the extension wrote it before attachments (format version 1, no `attachments` keys). */
const OLD_FILE = `{
 "version": 1,
 "conversations": [
  {
   "id": "0b6f1f6e-4d4b-4a57-8d0b-2f2d7bfa8f4a",
   "title": "What does a dynamic batcher do?",
   "createdAt": 1733040000000,
   "updatedAt": 1733040042000,
   "messages": [
    { "id": "u1", "role": "user", "content": "What does a dynamic batcher do?", "status": "complete", "createdAt": 1733040000000 },
    { "id": "a1", "role": "assistant", "content": "It merges requests.", "status": "complete", "createdAt": 1733040001000,
      "finishReason": "stop", "promptTokens": 20, "completionTokens": 5 },
    { "id": "u2", "role": "user", "content": "Why?", "status": "complete", "createdAt": 1733040040000 },
    { "id": "a2", "role": "assistant", "content": "Fewer steps", "status": "streaming", "createdAt": 1733040041000 }
   ]
  }
 ]
}`;

const selection: Attachment = {
  id: 'att-1', kind: 'selection', path: 'src/geometry.py', uri: 'file:///w/src/geometry.py', languageId: 'python',
  lines: { start: 3, end: 4 }, content: 'def circle_area(radius):\n    return math.pi * radius ** 2\n',
};

describe('attachments in the conversation store', () => {
  it('loads a file written before attachments existed, unchanged and without problems', async () => {
    const path = await storeFile();
    await writeFile(path, OLD_FILE);
    const loaded = await new FileConversationStore(path).load();
    assert.deepEqual(loaded.problems, []);
    assert.equal(loaded.conversations.length, 1);
    const c = loaded.conversations[0]!;
    assert.deepEqual(c.messages.map((m) => [m.id, m.status, 'attachments' in m]), [
      ['u1', 'complete', false], ['a1', 'complete', false], ['u2', 'complete', false], ['a2', 'interrupted', false],
    ]);
    const r = buildChatRequest({ ...c, messages: c.messages.slice(0, 3) });
    assert.ok(r.ok);
    assert.equal(r.request.prompt, 'Why?', 'an old question is sent as it was');
    assert.equal(r.request.history[0]!.content, 'What does a dynamic batcher do?');
  });

  it('an old file saved again by this version keeps everything and adds nothing', async () => {
    const path = await storeFile();
    await writeFile(path, OLD_FILE);
    const store = new FileConversationStore(path);
    const { conversations } = await store.load();
    await store.save(conversations);
    const written = JSON.parse(await readFile(path, 'utf8')) as { version: number; conversations: unknown[] };
    assert.equal(written.version, 1);
    assert.doesNotMatch(JSON.stringify(written), /attachments/);
  });

  it('round-trips attachments through the service and the file', async () => {
    const path = await storeFile();
    const service = new ConversationService(new FileConversationStore(path));
    await service.init();
    const c = service.create();
    await service.appendUserMessage(c.id, 'What does it return?', [selection]);
    await service.flush();
    const again = new ConversationService(new FileConversationStore(path));
    assert.deepEqual(await again.init(), []);
    const m = again.get(c.id)!.messages[0]!;
    assert.deepEqual(m.attachments, [selection]);
    assert.equal(again.buildRequest(c.id).ok && (again.buildRequest(c.id) as { request: { prompt: string } }).request.prompt,
      formatUserMessage('What does it return?', [selection]));
  });

  it('a damaged attachment makes its conversation invalid (kept aside), the others load', async () => {
    const path = await storeFile();
    const good = JSON.parse(OLD_FILE) as { conversations: { id: string; messages: Record<string, unknown>[] }[] };
    const bad = structuredClone(good.conversations[0]!);
    bad.id = 'bad-one';
    bad.messages[0]!.attachments = [{ ...selection, lines: { start: 5, end: 2 } }];
    await writeFile(path, JSON.stringify({ version: 1, conversations: [good.conversations[0], bad] }));
    const loaded = await new FileConversationStore(path).load();
    assert.deepEqual(loaded.conversations.map((c) => c.id), ['0b6f1f6e-4d4b-4a57-8d0b-2f2d7bfa8f4a']);
    assert.equal(loaded.problems[0]?.code, 'invalid-conversations');
  });

  it('the service stores a copy (later changes to the caller\'s list do not leak in); an edited question keeps its attachments', async () => {
    const store = new MemoryConversationStore();
    const service = new ConversationService(store);
    const c = service.create();
    const mine = [structuredClone(selection)];
    await service.appendUserMessage(c.id, 'first', mine);
    mine[0]!.content = 'changed afterwards';
    mine.push({ ...selection, id: 'att-2' });
    assert.deepEqual(service.get(c.id)!.messages[0]!.attachments, [selection]);
    await service.editLast(c.id, 'first, reworded');
    const edited = service.get(c.id)!.messages[0]!;
    assert.equal(edited.content, 'first, reworded');
    assert.deepEqual(edited.attachments, [selection]);
  });
});
