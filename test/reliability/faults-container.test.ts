// Faults and security of the managed container, through the fake docker (which runs the real tritonserver):
// ports on 127.0.0.1, the model-repository API enforced by Triton with our per-container key, the key kept out of
// every log; the server killed mid-answer (typed error fast, partial answer kept as failed, restart brings it all
// back); the docker daemon going away while the server runs; a port already taken.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { ConversationService } from '../../src/core/chat/conversationService';
import { MemoryConversationStore } from '../../src/core/chat/store';
import { installRepository } from '../../src/core/repository';
import { DEFAULT_MODEL_ID as MODEL_NAME } from '../../src/core/models/catalog';
import { ContainerManager, isServerError, resolveSettings, type ServerHandle, type ServerSettings } from '../../src/core/server';
import { TritonClient } from '../../src/core/triton/client';
import { TritonError } from '../../src/core/triton/errors';
import { createFakeDocker, freePort, makeFakeWeights, projectRoot, type FakeDocker } from '../fake-docker/harness';
import { answerThroughService, assertTritonError, chatRequest, collectStream } from './support/server';

let fake: FakeDocker;
let tmp: string;
let settings: ServerSettings;
let manager: ContainerManager;
let handle: ServerHandle;
const commands: string[] = [];
const logLines: string[] = [];
const errorsSeen: unknown[] = [];
const keys: string[] = [];

function newManager(s: ServerSettings): ContainerManager {
  return new ContainerManager(s, { env: fake.env, onCommand: (l) => commands.push(l), livenessTimeoutMs: 120_000 });
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    errorsSeen.push(e);
    return e;
  }
  assert.fail('expected a rejection');
}

async function loadAndAnswer(h: ServerHandle): Promise<string> {
  const client = new TritonClient({ baseUrl: h.url, adminKey: h.adminKey, adminHeader: h.adminHeader });
  try {
    await client.loadModel(MODEL_NAME, { timeoutMs: 240_000 });
    const r = await collectStream(client, chatRequest('are you back?'));
    assert.equal(r.error, undefined, String(r.error));
    assert.ok(r.final && r.text.length > 0);
    return r.text;
  } finally {
    await client.close();
  }
}

describe('managed container: faults and security', { timeout: 900_000 }, () => {
  before(async () => {
    // 20 ms per token keeps a long answer streaming for seconds, so the kill lands mid-answer.
    fake = createFakeDocker({ TINY_ENGINE_STEP_DELAY_MS: '20' });
    tmp = mkdtempSync(join(tmpdir(), 'reliability-container-'));
    const repo = await installRepository({ source: join(projectRoot, 'triton/model_repository'), destination: join(tmp, 'model_repository') });
    settings = resolveSettings({
      dockerPath: fake.dockerPath, weightsPath: makeFakeWeights(tmp), repositoryPath: repo.path,
      containerName: `reliability-${process.pid}`,
      httpPort: await freePort(), grpcPort: await freePort(), metricsPort: await freePort(),
    });
    manager = newManager(settings);
    handle = await manager.start({ onLog: (l) => logLines.push(l) });
    keys.push(handle.adminKey);
  });
  after(() => {
    manager?.dispose();
    fake?.cleanup();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('ports are published on 127.0.0.1 only (docker args and the running container)', () => {
    const run = commands.find((c) => c.includes(' run -d '));
    assert.ok(run, 'the docker run command was logged');
    const published = [...run.matchAll(/ -p (\S+)/g)].map((m) => m[1]!);
    assert.deepEqual(published, [
      `127.0.0.1:${settings.httpPort}:8000`, `127.0.0.1:${settings.grpcPort}:8001`, `127.0.0.1:${settings.metricsPort}:8002`,
    ]);
    const info = JSON.parse(fake.docker(['container', 'inspect', handle.containerId]).stdout)[0];
    for (const [port, bindings] of Object.entries(info.HostConfig.PortBindings as Record<string, { HostIp: string }[]>)) {
      assert.deepEqual(bindings.map((b) => b.HostIp), ['127.0.0.1'], `${port} bound to loopback`);
    }
    assert.equal(handle.bindAddress, '127.0.0.1');
  });

  test('the model-repository API requires our key, enforced by Triton itself (403 without, OK with)', async () => {
    assert.match(handle.adminKey, /^[0-9a-f]{48}$/, 'a 192-bit random key');
    const anon = new TritonClient({ baseUrl: handle.url });
    const wrong = new TritonClient({ baseUrl: handle.url, adminKey: 'f'.repeat(48) });
    const admin = new TritonClient({ baseUrl: handle.url, adminKey: handle.adminKey });
    try {
      for (const [who, c] of [['no key', anon], ['wrong key', wrong]] as const) {
        const e = assertTritonError(await rejection(c.loadModel(MODEL_NAME, { timeoutMs: 60_000 })), 'unauthorized', `load with ${who}`);
        assert.equal(e.details.status, 403, `Triton answered 403 to a load with ${who}`);
        assertTritonError(await rejection(c.repositoryIndex()), 'unauthorized', `index with ${who}`);
      }
      const raw = await fetch(`${handle.url}/v2/repository/models/${MODEL_NAME}/load`, { method: 'POST' });
      assert.equal(raw.status, 403);
      await admin.loadModel(MODEL_NAME, { timeoutMs: 240_000 });
      assert.equal(await anon.isModelReady(MODEL_NAME), true, 'loaded with the key; inference APIs stay open');
      assertTritonError(await rejection(anon.unloadModel(MODEL_NAME)), 'unauthorized', 'unload without key');
      assert.equal(await anon.isModelReady(MODEL_NAME), true, 'the refused unload changed nothing');
    } finally {
      await Promise.all([anon.close(), wrong.close(), admin.close()]);
    }
  });

  test('the server dies mid-answer: typed error within 2 s, partial answer kept as failed, restart brings it all back', async () => {
    const client = new TritonClient({ baseUrl: handle.url, adminKey: handle.adminKey });
    const svc = new ConversationService(new MemoryConversationStore(), { persistDelayMs: 10 });
    const pid = (await manager.inspect())!.pid;
    assert.ok(pid > 0, 'the container has a process');
    let killedAt = 0;
    const r = await answerThroughService(svc, client, 'tell me a long story', {
      maxNewTokens: 400,
      onDelta: (received) => {
        if (!killedAt && received.length >= 5) { killedAt = Date.now(); process.kill(pid, 'SIGKILL'); }
      },
    });
    const surfacedMs = Date.now() - killedAt;
    await client.destroy();
    assert.ok(killedAt > 0, 'killed mid-answer');
    errorsSeen.push(r.error);
    const e = assertTritonError(r.error, 'server-not-running', 'server killed mid-stream');
    assert.equal(e.details.serverLive, false, 'the health check after the cut found no server (not "connection lost")');
    assert.ok(surfacedMs < 2000, `the error surfaced ${surfacedMs} ms after the kill (limit 2000 ms)`);
    console.log(`kill: ${e.code}/${e.details.networkCode} ${surfacedMs} ms after SIGKILL; ${r.received.length} chars kept`);
    const conv = svc.get(r.conversationId)!;
    const answer = conv.messages.find((m) => m.id === r.messageId)!;
    assert.equal(answer.status, 'failed');
    assert.equal(answer.content, r.received, 'the partial answer is kept exactly');
    assert.ok(answer.content.length >= 5);
    assert.equal(answer.error, e.message);

    const status = await manager.status();
    assert.equal(status.state, 'exited', 'status reports the dead container');
    if (status.state === 'exited') assert.equal(status.exitCode, 137);

    handle = await manager.restart({ onLog: (l) => logLines.push(l) });
    keys.push(handle.adminKey);
    assert.notEqual(keys[1], keys[0], 'a new container gets a new key');
    await loadAndAnswer(handle);
    // The failed answer can be produced again in the same conversation.
    const again = new TritonClient({ baseUrl: handle.url });
    try {
      await svc.regenerate(r.conversationId);
      const answer = svc.startAnswer(r.conversationId);
      const built = svc.buildRequest(r.conversationId, { temperature: 0, maxNewTokens: 8 });
      assert.ok(built.ok);
      const answered = await collectStream(again, built.request);
      assert.ok(answered.final, String(answered.error));
      for (const d of [answered.text]) svc.appendDelta(r.conversationId, answer.id, d);
      await svc.finish(r.conversationId, answer.id, answered.final);
      assert.equal(svc.get(r.conversationId)!.messages.at(-1)!.status, 'complete');
    } finally {
      await again.close();
    }
  });

  test('the docker daemon goes away while the server runs: status/stop give daemon-unreachable, nothing crashes; it recovers', async () => {
    fake.setFail('daemon-down');
    try {
      for (const [what, call] of [['status', () => manager.status()], ['stop', () => manager.stop()], ['attach', () => manager.attach()]] as const) {
        const e = await rejection(call());
        assert.ok(isServerError(e), `${what}: a ServerError, got ${String(e)}`);
        assert.equal(e.code, 'daemon-unreachable', `${what}: ${e.message}`);
        assert.match(e.fix, /Start Docker/);
      }
      const client = new TritonClient({ baseUrl: handle.url });
      try {
        assert.equal(await client.isLive(), true, 'the server itself keeps running');
        assert.ok((await collectStream(client, chatRequest('still here?'))).final, 'and answering');
      } finally {
        await client.close();
      }
    } finally {
      fake.setFail(undefined);
    }
    const status = await manager.status();
    assert.equal(status.state, 'running', 'status recovers when the daemon is back');
    if (status.state === 'running') assert.equal(status.handle.containerId, handle.containerId);
  });

  test('a port already taken: preflight and start give port-allocated and leave no container behind', async (t) => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    t.after(() => new Promise<void>((r) => blocker.close(() => r())));
    const taken = (blocker.address() as { port: number }).port;
    const other = resolveSettings({ ...settings, containerName: `reliability-port-${process.pid}`, httpPort: taken, grpcPort: await freePort(), metricsPort: await freePort() });
    // A daemon of its own: on the shared one, start() would (rightly) attach to our running container by its label.
    const otherDocker = createFakeDocker();
    const m = new ContainerManager(other, { env: otherDocker.env, onCommand: (l) => commands.push(l), livenessTimeoutMs: 120_000 });
    t.after(() => { m.dispose(); otherDocker.cleanup(); });
    const report = await m.preflight();
    const ports = report.checks.find((c) => c.id === 'ports');
    assert.equal(ports?.level, 'error');
    assert.equal(ports?.error?.code, 'port-allocated');
    assert.match(ports!.error!.message, new RegExp(String(taken)));
    const started = await rejection(m.start());
    assert.ok(isServerError(started) && started.code === 'port-allocated', String(started));
    // Without preflight docker itself refuses (its own "address already in use" text) and the created container is removed.
    const direct = await rejection(m.start({ preflight: false }));
    assert.ok(isServerError(direct) && direct.code === 'port-allocated', String(direct));
    assert.equal((await m.status()).state, 'absent', 'no container left behind');
    // Docker's own "port is already allocated" (another container holds it).
    otherDocker.setFail('port-allocated');
    try {
      const e = await rejection(m.start({ preflight: false }));
      assert.ok(isServerError(e) && e.code === 'port-allocated', String(e));
    } finally {
      otherDocker.setFail(undefined);
    }
    assert.equal((await m.status()).state, 'absent');
    assert.equal((await manager.status()).state, 'running', 'our running server is untouched');
  });

  test('the admin key never appears in commands, container logs, errors or printed clients', async () => {
    const client = new TritonClient({ baseUrl: handle.url, adminKey: handle.adminKey });
    const tail = await manager.logTail(undefined, 500);
    await manager.stop();
    assert.equal((await manager.status()).state, 'absent');
    const texts = [
      ...commands, ...logLines, ...tail, inspect(client), inspect(handle.adminKey.length),
      ...errorsSeen.map((e) => (e instanceof TritonError ? JSON.stringify(e.toJSON()) : e instanceof Error ? `${e.message} ${inspect(e)}` : String(e))),
    ];
    await client.close();
    assert.ok(commands.some((c) => c.includes('<redacted>')), 'the key was redacted from the docker run line');
    assert.ok(logLines.length > 0, 'container log lines were captured');
    for (const key of keys) {
      const leaks = texts.filter((s) => s.includes(key));
      assert.deepEqual(leaks, [], 'no log line, command or error contains the key');
    }
  });
});
