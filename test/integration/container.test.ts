// The container manager against the fake docker, which runs the real tritonserver (CPU, tiny engine) as the
// "container": start → live → load + streamed answer → attach (same container) → the server dies → status shows
// it exited with its log tail → restart → stop; then each docker failure mode → its typed error.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { installRepository } from '../../src/core/repository';
import { DEFAULT_MODEL_ID as MODEL_NAME } from '../../src/core/models/catalog';
import {
  ContainerManager, isServerError, resolveSettings, type ServerHandle, type ServerSettings, type ServerStatus,
} from '../../src/core/server';
import { streamChat, TritonClient } from '../../src/core/triton';
import { createFakeDocker, freePort, makeFakeWeights, projectRoot, type FakeDocker, type FakeDockerFailMode } from '../fake-docker/harness';

interface Env {
  fake: FakeDocker;
  settings: ServerSettings;
  commands: string[];
  manager(): ContainerManager;
}

async function environment(t: { after(fn: () => void | Promise<void>): void }, fakeEnv: NodeJS.ProcessEnv = {}): Promise<Env> {
  const fake = createFakeDocker(fakeEnv);
  const tmp = mkdtempSync(join(tmpdir(), 'container-it-'));
  const managers: ContainerManager[] = [];
  t.after(() => {
    for (const m of managers) m.dispose();
    fake.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });
  const repo = await installRepository({ source: join(projectRoot, 'triton/model_repository'), destination: join(tmp, 'model_repository') });
  const settings = resolveSettings({
    dockerPath: fake.dockerPath,
    weightsPath: makeFakeWeights(tmp),
    repositoryPath: repo.path,
    httpPort: await freePort(), grpcPort: await freePort(), metricsPort: await freePort(),
  });
  const commands: string[] = [];
  return {
    fake, settings, commands,
    manager() {
      const m = new ContainerManager(settings, { env: fake.env, onCommand: (l) => commands.push(l), livenessTimeoutMs: 90_000 });
      managers.push(m);
      return m;
    },
  };
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function chat(handle: ServerHandle, prompt: string): Promise<{ text: string; finish: string }> {
  const client = new TritonClient({ baseUrl: handle.url, adminKey: handle.adminKey, adminHeader: handle.adminHeader });
  try {
    let text = '';
    let finish = '';
    for await (const ev of streamChat(client, MODEL_NAME, { prompt, history: [], maxNewTokens: 8 })) {
      if (ev.type === 'delta') text += ev.text;
      else finish = ev.finishReason;
    }
    return { text, finish };
  } finally {
    await client.close();
  }
}

test('container lifecycle through the fake docker', async (t) => {
  const env = await environment(t);
  const first = env.manager();
  const logLines: string[] = [];
  const progress: string[] = [];
  let handle!: ServerHandle;

  await t.test('start: preflight, docker run, live; logs stream to the sink', async () => {
    handle = await first.start({ onLog: (l) => logLines.push(l), onProgress: (p) => progress.push(p) });
    assert.equal(handle.attached, false);
    assert.equal(handle.url, `http://127.0.0.1:${env.settings.httpPort}`);
    assert.match(handle.adminKey, /^[0-9a-f]{48}$/);
    assert.deepEqual(progress, ['preflight', 'running', 'waiting-live', 'live']);
    const live = await fetch(`${handle.url}/v2/health/live`);
    assert.equal(live.status, 200);
    await waitFor('a log line', async () => (logLines.some((l) => l.includes('Started HTTPService')) ? true : undefined));
    assert.equal(env.fake.containerIds().length, 1);
  });

  await t.test('the admin key is never in a command line we log', () => {
    assert.ok(env.commands.some((c) => c.startsWith(`${env.settings.dockerPath} run -d`)));
    for (const c of env.commands) assert.ok(!c.includes(handle.adminKey), c);
  });

  await t.test('the ports are published on 127.0.0.1 and the repository API needs the key', async () => {
    const inspect = JSON.parse(env.fake.docker(['container', 'inspect', handle.containerId]).stdout);
    assert.equal(inspect[0].HostConfig.PortBindings['8000/tcp'][0].HostIp, '127.0.0.1');
    const denied = await fetch(`${handle.url}/v2/repository/models/${MODEL_NAME}/load`, { method: 'POST' });
    assert.equal(denied.status >= 400, true);
    assert.match(await denied.text(), /restricted/i);
  });

  await t.test('load with the key and stream an answer', async () => {
    const client = new TritonClient({ baseUrl: handle.url, adminKey: handle.adminKey });
    try {
      await client.loadModel(MODEL_NAME, { timeoutMs: 180_000 });
      assert.equal(await client.isModelReady(MODEL_NAME), true);
    } finally {
      await client.close();
    }
    const answer = await chat(handle, 'Hello');
    assert.ok(answer.text.length > 0, 'some streamed text');
    assert.ok(['stop', 'length'].includes(answer.finish));
  });

  await t.test('attach after a "window reload" finds the same container; start never makes a second one', async () => {
    const reloaded = env.manager();
    const attached = await reloaded.attach();
    assert.ok(attached);
    assert.equal(attached.containerId, handle.containerId);
    assert.equal(attached.adminKey, handle.adminKey);
    assert.equal(attached.httpPort, env.settings.httpPort);
    assert.equal(attached.attached, true);
    const again = await reloaded.start();
    assert.equal(again.containerId, handle.containerId);
    assert.equal(again.attached, true);
    assert.equal(env.fake.containerIds().length, 1);
    const status = await reloaded.status();
    assert.equal(status.state, 'running');
  });

  await t.test('a window whose container-name setting changed still finds ours by label', async () => {
    const renamed = new ContainerManager({ ...env.settings, containerName: 'renamed-setting' }, { env: env.fake.env });
    try {
      const found = await renamed.attach();
      assert.equal(found?.containerId, handle.containerId);
      assert.equal(found?.adminKey, handle.adminKey);
      assert.equal(renamed.containerRef, env.settings.containerName);
      assert.equal((await renamed.start()).containerId, handle.containerId);
      assert.equal((await renamed.listManaged()).length, 1);
      assert.equal(env.fake.containerIds().length, 1);
    } finally {
      renamed.dispose();
    }
  });

  await t.test('the server process dies → status says exited, with the log tail', async () => {
    const pid = Number(env.fake.docker(['inspect', '--format', '{{.State.Pid}}', handle.containerId]).stdout.trim());
    assert.ok(pid > 0);
    process.kill(pid, 'SIGKILL');
    const status = await waitFor('exited', async () => {
      const s: ServerStatus = await first.status();
      return s.state === 'exited' ? s : undefined;
    });
    assert.equal(status.exitCode, 137);
    assert.ok(status.logTail.length > 0);
    assert.ok(status.logTail.some((l) => /Started HTTPService|successfully loaded|chatglm3-6b/.test(l)), status.logTail.join('\n'));
    assert.equal(await first.attach(), undefined, 'a dead container is not attached to');
  });

  await t.test('restart replaces it with a live one (still one container, a new key)', async () => {
    const restarted = await first.restart();
    assert.notEqual(restarted.containerId, handle.containerId);
    assert.notEqual(restarted.adminKey, handle.adminKey);
    assert.equal((await fetch(`${restarted.url}/v2/health/live`)).status, 200);
    assert.equal(env.fake.containerIds().length, 1);
    handle = restarted;
  });

  await t.test('stop removes the container; stopping again is harmless', async () => {
    await first.stop();
    assert.deepEqual(env.fake.containerIds(), []);
    assert.deepEqual(await first.status(), { state: 'absent' });
    await first.stop();
    await assert.rejects(fetch(`${handle.url}/v2/health/live`));
  });
});

test('a container that dies while starting → container-exited with its last log lines', async (t) => {
  const env = await environment(t, { FAKE_DOCKER_TRITON_ARGS: '--load-model=no_such_model' });
  const m = env.manager();
  await assert.rejects(m.start(), (e: unknown) => {
    assert.ok(isServerError(e));
    assert.equal(e.code, 'container-exited');
    assert.ok(e.logTail && e.logTail.length > 0);
    assert.match(e.detail ?? '', /failed to load all models/);
    return true;
  });
  const status = await m.status();
  assert.equal(status.state, 'exited');
});

const runFailures: { mode: FakeDockerFailMode; code: string }[] = [
  { mode: 'daemon-down', code: 'daemon-unreachable' },
  { mode: 'permission-denied', code: 'permission-denied' },
  { mode: 'no-nvidia', code: 'nvidia-runtime-missing' },
  { mode: 'port-allocated', code: 'port-allocated' },
  { mode: 'image-missing', code: 'image-missing' },
];

for (const f of runFailures) {
  test(`docker run fails with "${f.mode}" → ${f.code}, and no container is left behind`, async (t) => {
    const env = await environment(t);
    env.fake.setFail(f.mode);
    const m = env.manager();
    await assert.rejects(m.start({ preflight: false }), (e: unknown) => isServerError(e) && e.code === f.code && e.fix.length > 0);
    env.fake.setFail(undefined);
    assert.deepEqual(env.fake.containerIds(), []);
  });
}

test('a port taken by another program → port-allocated from preflight and from docker itself', async (t) => {
  const env = await environment(t);
  const { createServer } = await import('node:net');
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(env.settings.metricsPort, '127.0.0.1', r));
  t.after(() => blocker.close());
  const m = env.manager();
  await assert.rejects(m.start(), (e: unknown) => isServerError(e) && e.code === 'port-allocated' && e.message.includes(String(env.settings.metricsPort)));
  await assert.rejects(m.start({ preflight: false }), (e: unknown) => isServerError(e) && e.code === 'port-allocated');
  assert.deepEqual(env.fake.containerIds(), []);
});

test('a foreign container with our name is reported and left untouched', async (t) => {
  const env = await environment(t);
  const run = env.fake.docker(['run', '-d', '--name', env.settings.containerName, 'alpine:3', 'sleep', '1000']);
  assert.equal(run.status, 0, run.stderr);
  const m = env.manager();
  await assert.rejects(m.start(), (e: unknown) => isServerError(e) && e.code === 'name-conflict');
  await assert.rejects(m.stop(), (e: unknown) => isServerError(e) && e.code === 'name-conflict');
  assert.equal((await m.status()).state, 'foreign');
  assert.equal(env.fake.containerIds().length, 1);
});

test('missing image: preflight says so, buildImage builds it with progress lines, then start works', async (t) => {
  const env = await environment(t);
  env.fake.setFail('image-missing');
  const m = env.manager();
  assert.equal(await m.imagePresent(), false);
  await assert.rejects(m.start(), (e: unknown) => isServerError(e) && e.code === 'image-missing');
  const lines: string[] = [];
  await m.buildImage(join(projectRoot, 'test/fake-docker/build-context'), (l) => lines.push(l));
  assert.ok(lines.some((l) => /naming to .*triton-chatglm:24\.10/.test(l)), lines.join('\n'));
  assert.equal(await m.imagePresent(), true);
  const handle = await m.start();
  assert.equal((await fetch(`${handle.url}/v2/health/live`)).status, 200);
  await m.stop();
  assert.deepEqual(env.fake.containerIds(), []);
});

// Issue #27 on the fake: files of the host user's own with mode 0600 (umask 077) are readable by the server,
// which runs as that user (`--user`); the image's uid 1000 could not read them.
function privateFiles(settings: ServerSettings): void {
  chmodSync(join(settings.weightsPath, 'model-00001-of-00001.safetensors'), 0o600);
  chmodSync(join(settings.repositoryPath, 'chatglm3-6b', 'config.pbtxt'), 0o600);
}

test('a daemon that refuses --ulimit memlock: the run is retried without, and says so; 0600 files are read', async (t) => {
  const env = await environment(t);
  privateFiles(env.settings);
  env.fake.setFail('no-memlock');
  const dropped: string[] = [];
  const handle = await env.manager().start({ onUlimitsDropped: (why) => dropped.push(why) });
  assert.deepEqual(dropped, ['refused']);
  const runs = env.commands.filter((c) => / run /.test(c));
  assert.equal(runs.length, 2, runs.join('\n'));
  assert.match(runs[0]!, /--ulimit memlock=-1/);
  assert.doesNotMatch(runs[1]!, /--ulimit/);
  assert.equal(env.fake.containerIds().length, 1, 'the refused container was removed');
  const [c] = JSON.parse(env.fake.docker(['inspect', handle.containerId]).stdout);
  assert.deepEqual(c.HostConfig.Ulimits, []);
  assert.equal(c.Config.User, `${process.getuid!()}:${process.getgid!()}`);
  assert.equal(c.HostConfig.ShmSize, 2 * 2 ** 30, 'docker reports the shm size in bytes');
  assert.equal((await fetch(`${handle.url}/v2/health/live`)).status, 200);
});

test('rootless Docker: no --ulimit at all, the server runs as container root (= the host user); 0600 files are read', async (t) => {
  const env = await environment(t);
  privateFiles(env.settings);
  env.fake.setFail('rootless');
  const dropped: string[] = [];
  const m = env.manager();
  const handle = await m.start({ onUlimitsDropped: (why) => dropped.push(why) });
  assert.deepEqual(dropped, ['rootless']);
  const runs = env.commands.filter((c) => / run /.test(c));
  assert.equal(runs.length, 1);
  assert.doesNotMatch(runs[0]!, /--ulimit/);
  assert.match(runs[0]!, /--user 0:0 -e HOME=\/tmp/);
  assert.equal((await fetch(`${handle.url}/v2/health/live`)).status, 200);
  await m.stop();
});

test('the image\'s own user (no --user) cannot read 0600 files: the fake container says which, like a real one', async (t) => {
  const env = await environment(t);
  privateFiles(env.settings);
  const run = env.fake.docker(['run', '-d', '--name', 'as-image-user', '-v', `${env.settings.weightsPath}:/weights/chatglm3-6b:ro`, 'triton-chatglm:24.10', 'tritonserver', '--model-repository=/models']);
  assert.equal(run.status, 0, run.stderr);
  const [c] = JSON.parse(env.fake.docker(['inspect', 'as-image-user']).stdout);
  assert.equal(c.State.Status, 'exited');
  assert.match(env.fake.docker(['logs', 'as-image-user']).stdout, /Permission denied: '\/weights\/chatglm3-6b\/model-00001-of-00001\.safetensors'/);
});

test('docker binary missing → docker-missing', async (t) => {
  const env = await environment(t);
  const m = new ContainerManager({ ...env.settings, dockerPath: join(tmpdir(), 'no-such-docker-binary') });
  await assert.rejects(m.start({ preflight: false }), (e: unknown) => isServerError(e) && e.code === 'docker-missing');
  await assert.rejects(m.status(), (e: unknown) => isServerError(e) && e.code === 'docker-missing');
  assert.ok(readFileSync(join(projectRoot, 'test/fake-docker/docker'), 'utf8').startsWith('#!/usr/bin/env node'));
});
