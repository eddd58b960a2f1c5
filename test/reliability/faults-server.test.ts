// Faults between our client and a running tritonserver (no docker): a stalled server (SIGSTOP), a connection cut
// mid-answer and an answer delivered in tiny delayed pieces (through test/support/tcp-proxy.mjs), and a model whose
// load fails (Triton's reason reaches the typed error verbatim; a fixed configuration then loads).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConversationService } from '../../src/core/chat/conversationService';
import { MemoryConversationStore } from '../../src/core/chat/store';
import { initialState, transition } from '../../src/core/state/lifecycle';
import { TritonClient } from '../../src/core/triton/client';
import { TritonError } from '../../src/core/triton/errors';
import {
  answerThroughService, assertTritonError, chatRequest, collectStream, startTcpProxy, startTestServer, waitFor, type TestServer,
} from './support/server';

const BROKEN = 'chatglm3-6b-broken';

let server: TestServer;

describe('faults between client and server', { timeout: 600_000 }, () => {
  before(async () => {
    // 20 ms per token: a 200-token answer takes seconds, long enough to interfere with it mid-stream.
    server = await startTestServer({ env: { TINY_ENGINE_STEP_DELAY_MS: '20' } });
  });
  after(async () => { await server?.stop(); });

  test('a stalled server (SIGSTOP, connection open, no bytes): the idle timeout fires with a typed timeout error', async (t) => {
    const client = new TritonClient({ baseUrl: server.url });
    let stopped = false;
    t.after(async () => {
      if (stopped) process.kill(server.pid, 'SIGCONT');
      await client.destroy();
    });
    const idleMs = 1500;
    let stoppedAt = 0;
    const r = await collectStream(client, chatRequest('stall here', { maxNewTokens: 400 }), {
      idleTimeoutMs: idleMs,
      onDelta: () => {
        if (!stopped) { process.kill(server.pid, 'SIGSTOP'); stopped = true; stoppedAt = Date.now(); }
      },
    });
    const waited = Date.now() - stoppedAt;
    assert.ok(stopped, 'the server was stopped mid-answer');
    const e = assertTritonError(r.error, 'timeout', 'stalled stream');
    assert.match(e.message, new RegExp(`sent nothing for ${idleMs} ms`));
    assert.equal(e.details.timeoutMs, idleMs);
    assert.ok(r.text.length > 0, 'the part received before the stall is kept');
    assert.ok(waited >= idleMs - 50, `the timeout fired after the idle limit (${waited} ms)`);
    console.log(`stall: timeout after ${waited} ms of silence (limit ${idleMs} ms), ${r.text.length} chars kept`);
    process.kill(server.pid, 'SIGCONT');
    stopped = false;
    assert.equal(await waitFor('live after SIGCONT', () => server.client.isLive()), true);
    const again = await collectStream(server.client, chatRequest('after the stall'));
    assert.equal(again.error, undefined, String(again.error));
    assert.ok(again.final, 'the server answers after it resumes');
  });

  test('a connection cut mid-answer (proxy closes after N bytes) while the server runs: connection-lost, the partial answer kept and marked failed', async (t) => {
    const proxy = await startTcpProxy({ targetPort: server.httpPort });
    const client = new TritonClient({ baseUrl: proxy.url });
    t.after(async () => { await client.destroy(); await proxy.close(); });
    const svc = new ConversationService(new MemoryConversationStore(), { persistDelayMs: 10 });
    proxy.setMode({ cutAfterBytes: 1200 });
    const r = await answerThroughService(svc, client, 'a long answer that will be cut', { maxNewTokens: 300 });
    assert.equal(proxy.stats.cut, 1, 'the proxy cut the connection');
    // The server still answers its health check after the cut: the connection was lost on the way.
    const e = assertTritonError(r.error, 'connection-lost', 'cut stream');
    assert.ok(e.details.networkCode, `network code recorded (${e.details.networkCode})`);
    assert.equal(e.details.serverLive, true);
    assert.ok(r.received.length > 0, 'some of the answer arrived before the cut');
    const stored = svc.get(r.conversationId)!.messages.find((m) => m.id === r.messageId)!;
    assert.equal(stored.status, 'failed');
    assert.equal(stored.content, r.received, 'the partial answer is kept exactly');
    assert.equal(stored.error, e.message);
    assert.equal(svc.get(r.conversationId)!.messages[0]!.content, 'a long answer that will be cut', 'the question is kept');
    console.log(`cut: ${e.code}/${e.details.networkCode} after ${proxy.stats.bytesToClient} bytes, ${r.received.length} chars kept`);
    // The server is unaffected: the same proxy, now transparent, serves a full answer.
    proxy.setMode({});
    const ok = await collectStream(client, chatRequest('after the cut'));
    assert.equal(ok.error, undefined, String(ok.error));
    assert.ok(ok.final);
  });

  test('the server goes away mid-answer (every connection dropped, nothing listening): still server-not-running', async () => {
    const proxy = await startTcpProxy({ targetPort: server.httpPort });
    const client = new TritonClient({ baseUrl: proxy.url });
    let closedAt = 0;
    try {
      const r = await collectStream(client, chatRequest('a long answer whose server disappears', { maxNewTokens: 300 }), {
        onDelta: () => { if (!closedAt) { closedAt = Date.now(); void proxy.close(); } },
      });
      const e = assertTritonError(r.error, 'server-not-running', 'server gone');
      assert.equal(e.details.serverLive, false, 'the health check after the cut found nothing');
      assert.ok(r.text.length > 0);
      console.log(`gone: ${e.code}/${e.details.networkCode} ${Date.now() - closedAt} ms after the port closed`);
    } finally {
      await client.destroy();
    }
    // The real server behind the proxy was never disturbed.
    assert.ok((await collectStream(server.client, chatRequest('still here'))).final);
  });

  test('an answer split into 1-byte pieces with delays assembles exactly as sent directly (SSE and UTF-8 split)', async (t) => {
    const proxy = await startTcpProxy({ targetPort: server.httpPort, mode: { chunkBytes: 1, delayMs: 1 } });
    const client = new TritonClient({ baseUrl: proxy.url });
    t.after(async () => { await client.destroy(); await proxy.close(); });
    const req = chatRequest('你好, split me into pieces', { maxNewTokens: 40 });
    const direct = await collectStream(server.client, req);
    const slow = await collectStream(client, req, { idleTimeoutMs: 30_000 });
    assert.equal(direct.error, undefined, String(direct.error));
    assert.equal(slow.error, undefined, String(slow.error));
    assert.ok([...direct.text].some((ch) => ch.codePointAt(0)! > 0x7f), 'the answer has multi-byte characters (split across pieces)');
    assert.ok(!slow.text.includes('\ufffd'), 'no replacement characters: UTF-8 was reassembled');
    assert.equal(slow.text, direct.text, 'same text through the slow proxy');
    assert.deepEqual(slow.final, direct.final, 'same final event');
    assert.ok(proxy.stats.bytesToClient > 500, 'the answer really went through the proxy byte by byte');
  });

  // Two ways a load fails: the engine cannot be created (a Python error in initialize) and a warmup sample that
  // Triton cannot read. Each time the index keeps the reason, the lifecycle goes to `failed`, and the repaired
  // configuration loads and answers.
  const LOAD_FAILURES = [
    { name: 'engine', expect: 'NoSuchEngine', breakIt: (cfg: string) => cfg.replace(/string_value: "tiny_engine:TinyEngine"/, 'string_value: "tiny_engine:NoSuchEngine"') },
    { name: 'warmup', expect: 'no-such-warmup.bin', breakIt: (cfg: string) => cfg.replace(/input_data_file: "prompt.bin"/, 'input_data_file: "no-such-warmup.bin"') },
  ];
  for (const failure of LOAD_FAILURES) {
    test(`a model whose load fails (${failure.name}): Triton's reason verbatim in model-load-failed, state failed, a fixed load succeeds`, async () => {
      const name = `${BROKEN}-${failure.name}`;
      server.addModelVariant(name, {});
      const cfg = join(server.repository, name, 'config.pbtxt');
      const good = readFileSync(cfg, 'utf8');
      const bad = failure.breakIt(good);
      assert.notEqual(bad, good, 'the configuration was broken');
      writeFileSync(cfg, bad);
      let caught: unknown;
      try {
        await server.client.loadModel(name, { timeoutMs: 240_000 });
      } catch (e) {
        caught = e;
      }
      const e = assertTritonError(caught, 'model-load-failed', `load with a broken ${failure.name}`);
      const reason = e.details.serverMessage ?? '';
      assert.ok(reason.includes(failure.expect), `Triton's reason names the cause: ${reason}`);
      assert.ok(e.message.includes(reason.trim()), 'the reason is in the message verbatim (trimmed)');
      const row = await server.client.modelState(name);
      assert.equal(row?.state, 'UNAVAILABLE');
      assert.ok(row?.reason?.includes(failure.expect), `the repository index keeps the reason: ${row?.reason}`);
      // waitForState (used while a load is in progress) reports the same failure with the index's reason.
      await assert.rejects(server.client.waitForState(name, 'READY', { timeoutMs: 10_000 }),
        (w: unknown) => w instanceof TritonError && w.code === 'model-load-failed' && w.message.includes(failure.expect));
      let state = transition(transition(transition(initialState('managed'), { type: 'startRequested' }).state, { type: 'serverUp' }).state, { type: 'loadRequested' }).state;
      state = transition(state, { type: 'loadFailed', error: { code: e.code, message: e.message } }).state;
      assert.equal(state.model, 'failed');
      assert.ok(state.modelError?.message.includes(failure.expect));
      console.log(`load failure (${failure.name}) reason: ${reason.split('\n')[0]!.slice(0, 300)}`);

      writeFileSync(cfg, good);
      await server.client.loadModel(name, { timeoutMs: 240_000 });
      assert.equal((await server.client.modelState(name))?.state, 'READY');
      const fixed = await collectStream(server.client, chatRequest('fixed?'), { model: name });
      assert.equal(fixed.error, undefined, String(fixed.error));
      assert.ok(fixed.final && fixed.text.length > 0, 'the fixed model answers');
      state = transition(transition(state, { type: 'loadRequested' }).state, { type: 'modelReady' }).state;
      assert.equal(state.model, 'ready');
      assert.equal(state.modelError, undefined);
      await server.client.unloadModel(name);
      // The first model was never disturbed.
      assert.ok((await collectStream(server.client, chatRequest('still fine'))).final);
    });
  }
});
