// Child process of store-crash.test.ts: what the extension host does while chatting, as fast as it can, until it
// is killed. Each question is flushed before "committed <conversation> <message>" is printed (the service's
// promise), each finished answer likewise; the parent then kills this process at a random moment.
import { ConversationService } from '../../../src/core/chat/conversationService';
import { FileConversationStore } from '../../../src/core/chat/fileStore';
import { contentFor } from './store-content';

async function main(): Promise<void> {
  const path = process.argv[2];
  if (!path) throw new Error('usage: store-writer <file>');
  const svc = new ConversationService(new FileConversationStore(path), { persistDelayMs: 5 });
  const problems = await svc.init();
  process.stdout.write(`loaded ${svc.list().length} ${problems.map((p) => p.code).join(',') || 'clean'}\n`);
  let conversationId: string | undefined;
  for (let i = 0; ; i++) {
    if (i % 3 === 0 || !conversationId) conversationId = svc.create().id;
    const question = await svc.appendUserMessage(conversationId, 'placeholder');
    // Content derived from the id, so the parent can tell a torn or mixed-up message from a good one.
    await svc.editLast(conversationId, contentFor(question.id));
    process.stdout.write(`committed ${conversationId} ${question.id}\n`);
    const answer = svc.startAnswer(conversationId);
    if (!svc.buildRequest(conversationId, {}).ok) throw new Error('request not built');
    svc.appendDelta(conversationId, answer.id, contentFor(answer.id));
    await new Promise((r) => setTimeout(r, 7)); // let a throttled save of the streaming answer start
    await svc.finish(conversationId, answer.id, { finishReason: 'stop', promptTokens: 1, completionTokens: 1, historyTrimmed: 0 });
    process.stdout.write(`committed ${conversationId} ${answer.id}\n`);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`store-writer failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
