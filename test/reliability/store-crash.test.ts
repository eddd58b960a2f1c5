// "VS Code killed while the conversation store is being written": a child process chats through the real
// ConversationService + FileConversationStore as fast as it can and is SIGKILLed at random moments, again and again
// on the same file. After every kill the file must load, cleanly, with every conversation and message the child had
// reported as committed, each one intact. Then a damaged store: the damaged file is kept aside, every conversation
// still valid is loaded (from the file and its backup), and the loss is reported.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { Conversation } from '../../src/core/chat/conversation';
import { FileConversationStore } from '../../src/core/chat/fileStore';
import { contentFor } from './support/store-content';
import { SOAK } from './support/server';

const KILLS = SOAK ? 100 : 20;
const dir = mkdtempSync(join(tmpdir(), 'reliability-store-'));
const root = join(__dirname, '../..');

/** Runs the writer until it has committed something, then kills it after a random delay; returns what it committed. */
function runAndKill(file: string, delayMs: number): Promise<{ committed: string[]; loadedLine: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'support/store-writer.ts'), file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const committed: string[] = [];
    let loadedLine = '';
    let stderr = '';
    let buffered = '';
    let armed = false;
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith('committed ')) committed.push(line.slice('committed '.length));
        else if (line.startsWith('loaded ')) loadedLine = line;
      }
      if (!armed && committed.length > 0) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString('utf8'); });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      // A line cut by the kill was never fully reported: it does not count as committed.
      if (signal !== 'SIGKILL') reject(new Error(`writer exited on its own (${code}): ${stderr}`));
      else resolve({ committed, loadedLine, stderr });
    });
  });
}

describe('conversation store under crashes and damage', { timeout: 600_000 }, () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  test(`killed while writing, ${KILLS} times: the file always loads with everything committed before the kill`, async () => {
    const file = join(dir, 'conversations.json');
    const committed = new Map<string, string>(); // message id -> conversation id
    let kills = 0;
    for (let i = 0; i < KILLS; i++) {
      const delay = Math.floor(Math.random() * 400);
      const run = await runAndKill(file, delay);
      kills += 1;
      if (i > 0) assert.match(run.loadedLine, /^loaded \d+ clean$/, `run ${i}: the writer found a clean file: ${run.loadedLine}`);
      for (const entry of run.committed) {
        const [conv, msg] = entry.split(' ');
        committed.set(msg!, conv!);
      }
      const loaded = await new FileConversationStore(file).load();
      assert.deepEqual(loaded.problems, [], `after kill ${i} (${delay} ms): the file loads without problems`);
      const where = new Map<string, Conversation>();
      for (const c of loaded.conversations) for (const m of c.messages) where.set(m.id, c);
      for (const [msg, conv] of committed) {
        const c = where.get(msg);
        assert.ok(c, `after kill ${i}: committed message ${msg} is in the file`);
        assert.equal(c.id, conv, 'in its own conversation');
      }
      for (const c of loaded.conversations) {
        for (const m of c.messages) {
          // A question is first stored as 'placeholder', then edited; an answer may be saved before its text.
          const ok = m.content === contentFor(m.id) || m.content === 'placeholder' || m.content === '';
          assert.ok(ok, `message ${m.id} is intact (${m.content.length} chars)`);
          if (committed.has(m.id)) assert.equal(m.content, contentFor(m.id), `committed message ${m.id} has its full text`);
        }
      }
    }
    const size = readFileSync(file).length;
    console.log(`store crash: ${kills} kills, ${committed.size} committed messages all present, final file ${(size / 1024).toFixed(0)} KiB`);
    assert.ok(committed.size >= KILLS, 'the writer committed messages before being killed');
  });

  const conv = (id: string, updatedAt: number): Conversation => ({
    id, title: `title ${id}`, createdAt: 1, updatedAt,
    messages: [
      { id: `${id}-q`, role: 'user', content: contentFor(`${id}-q`), status: 'complete', createdAt: 1 },
      { id: `${id}-a`, role: 'assistant', content: contentFor(`${id}-a`), status: 'complete', createdAt: 2, finishReason: 'stop' },
    ],
  });

  test('a truncated store: damaged file kept aside, every complete conversation loaded, the loss reported', async () => {
    const file = join(dir, 'truncated.json');
    const store = new FileConversationStore(file);
    await store.load();
    await store.save(['A', 'B', 'C', 'D'].map((id, i) => conv(id, 10 + i)));
    await store.save(['A', 'B', 'C', 'D', 'E', 'F'].map((id, i) => conv(id, 20 + i))); // .bak now holds A-D
    const text = readFileSync(file, 'utf8');
    const damaged = text.slice(0, text.indexOf('"F-a"') + 40); // cut inside conversation F
    writeFileSync(file, damaged);
    const loaded = await new FileConversationStore(file, () => 1234).load();
    assert.deepEqual(loaded.conversations.map((c) => c.id).sort(), ['A', 'B', 'C', 'D', 'E']);
    for (const c of loaded.conversations) assert.equal(c.updatedAt, 20 + 'ABCDEF'.indexOf(c.id), `${c.id}: the newest copy (from the damaged file)`);
    const corrupt = loaded.problems.find((p) => p.code === 'corrupt-file');
    assert.ok(corrupt, `reported: ${JSON.stringify(loaded.problems)}`);
    assert.equal(corrupt.dropped, 1, 'one conversation could not be recovered');
    assert.ok(corrupt.keptAsidePath && existsSync(corrupt.keptAsidePath), 'the damaged file is kept');
    assert.equal(readFileSync(corrupt.keptAsidePath, 'utf8'), damaged, 'byte for byte');
    assert.ok(existsSync(`${file}.bak`), 'the backup is still there');
  });

  test('a store with a broken and an invalid conversation: the rest loads, the broken one comes back from the backup', async () => {
    const file = join(dir, 'broken.json');
    const store = new FileConversationStore(file);
    await store.load();
    await store.save(['A', 'B', 'C', 'D'].map((id, i) => conv(id, 10 + i)));
    await store.save(['A', 'B', 'C', 'D', 'E', 'F'].map((id, i) => conv(id, 20 + i)));
    let text = readFileSync(file, 'utf8');
    text = text.replace('"title": "title C"', '"title" "title C"'); // JSON syntax error inside C
    text = text.replace(/("id": "E-q",\s*"role": )"user"/, '$1 42'); // E: valid JSON, invalid conversation
    writeFileSync(file, text);
    const loaded = await new FileConversationStore(file, () => 5678).load();
    const ids = loaded.conversations.map((c) => c.id).sort();
    assert.deepEqual(ids, ['A', 'B', 'C', 'D', 'F'], 'all valid ones, C from the backup; E is lost');
    assert.equal(loaded.conversations.find((c) => c.id === 'C')!.updatedAt, 12, 'C is the backup copy');
    const corrupt = loaded.problems.find((p) => p.code === 'corrupt-file');
    assert.equal(corrupt?.dropped, 2, `C and E reported: ${JSON.stringify(loaded.problems)}`);
    assert.ok(loaded.problems.some((p) => p.code === 'restored-from-backup' && /1 conversation/.test(p.message)));
    assert.ok(corrupt?.keptAsidePath && readFileSync(corrupt.keptAsidePath, 'utf8') === text, 'the damaged file is kept as it was');
    for (const c of loaded.conversations) for (const m of c.messages) assert.equal(m.content, contentFor(m.id));
    // Saving what was recovered gives a clean file again.
    const again = new FileConversationStore(file);
    await again.save(loaded.conversations);
    const clean = await new FileConversationStore(file).load();
    assert.deepEqual(clean.problems, []);
    assert.equal(clean.conversations.length, 5);
  });
});
