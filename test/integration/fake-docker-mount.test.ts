// The fake docker's `-v HOST:/models` behaves like a bind mount: a config.pbtxt re-rendered on the host after
// `docker run` (a changed tritonChatglm.maxBatchSize) is what the container's real tritonserver loads next, and
// stopping the container leaves no process (tritonserver, supervisor, mirror) behind.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { installRepository } from '../../src/core/repository';
import { DEFAULT_MODEL_ID as MODEL_NAME } from '../../src/core/models/catalog';
import { ContainerManager, resolveSettings } from '../../src/core/server';
import { TestTritonClient } from '../support/testTritonClient';
import { createFakeDocker, freePort, makeFakeWeights, projectRoot } from '../fake-docker/harness';

/** Pids (not ours) whose command line or environment mentions `marker` (Linux /proc). */
function processesMentioning(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    for (const file of ['cmdline', 'environ']) {
      try {
        if (readFileSync(`/proc/${pid}/${file}`, 'utf8').includes(marker)) { pids.push(pid); break; }
      } catch { /* gone or not ours to read */ }
    }
  }
  return pids;
}

test('a re-rendered host repository reaches the container like a bind mount', async (t) => {
  const fake = createFakeDocker();
  const tmp = mkdtempSync(join(tmpdir(), 'fake-mount-it-'));
  const managers: ContainerManager[] = [];
  t.after(() => {
    for (const m of managers) m.dispose();
    fake.cleanup();
    for (const pid of processesMentioning(fake.stateDir)) {
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
    rmSync(tmp, { recursive: true, force: true });
  });
  const source = join(projectRoot, 'triton/model_repository');
  const destination = join(tmp, 'model_repository');
  const repo = await installRepository({ source, destination, settings: { maxBatchSize: 8 } });
  const settings = resolveSettings({
    dockerPath: fake.dockerPath,
    weightsPath: makeFakeWeights(tmp),
    repositoryPath: repo.path,
    httpPort: await freePort(), grpcPort: await freePort(), metricsPort: await freePort(),
  });
  const manager = new ContainerManager(settings, { env: fake.env, livenessTimeoutMs: 90_000 });
  managers.push(manager);
  const handle = await manager.start();
  const client = new TestTritonClient({ baseUrl: handle.url, adminKey: handle.adminKey, adminHeader: handle.adminHeader });
  try {
    await client.loadModel(MODEL_NAME, { timeoutMs: 180_000 });
    assert.equal((await client.modelConfig(MODEL_NAME)).max_batch_size, 8);

    const changed = await installRepository({ source, destination, settings: { maxBatchSize: 4 } });
    assert.ok(changed.changed.includes(`${MODEL_NAME}/config.pbtxt`), changed.changed.join(', '));
    await client.unloadModel(MODEL_NAME);
    await client.waitForState(MODEL_NAME, 'UNAVAILABLE', { timeoutMs: 120_000 });
    await client.loadModel(MODEL_NAME, { timeoutMs: 180_000 });
    const config = await client.modelConfig(MODEL_NAME);
    assert.equal(config.max_batch_size, 4);
    // Still the container's CPU adaptation of the new file, not the host file as is.
    assert.equal((config.instance_group as Array<{ kind: string }>)[0]?.kind, 'KIND_CPU');
  } finally {
    await client.close();
  }

  await manager.stop();
  assert.deepEqual(fake.containerIds(), []);
  assert.deepEqual(processesMentioning(fake.stateDir), [], 'no tritonserver, supervisor or mirror left');
});

interface Mirror { sync(): void; start(intervalMs?: number): void; close(): void }
type CreateMirror = (o: { source: string; dest: string; tmpFile: string; transform?: (key: string, data: Buffer) => Buffer }) => Mirror;

test('the mirror copies changes, re-transforms, keeps host mtimes and removes deleted files', async (t) => {
  const { createMirror } = (await import(pathToFileURL(join(__dirname, '../fake-docker/bind-mount.mjs')).href)) as { createMirror: CreateMirror };
  const root = mkdtempSync(join(tmpdir(), 'fake-mirror-'));
  const [source, dest] = [join(root, 'host'), join(root, 'copy')];
  mkdirSync(join(source, 'm/1'), { recursive: true });
  mkdirSync(dest);
  writeFileSync(join(source, 'm/config.pbtxt'), 'max_batch_size: 8');
  writeFileSync(join(source, 'm/1/model.py'), 'v1');
  const mirror = createMirror({
    source, dest, tmpFile: join(root, 'tmp'),
    transform: (key, data) => (key.endsWith('config.pbtxt') ? Buffer.from(`${data.toString()} # patched`) : data),
  });
  t.after(() => { mirror.close(); rmSync(root, { recursive: true, force: true }); });
  const read = (key: string) => readFileSync(join(dest, key), 'utf8');

  mirror.sync();
  assert.equal(read('m/config.pbtxt'), 'max_batch_size: 8 # patched');
  assert.equal(read('m/1/model.py'), 'v1');
  // A bind mount shows the host file's own mtime (Triton decides reloads by mtimes); sub-µs rounding aside.
  assert.ok(Math.abs(statSync(join(dest, 'm/1/model.py')).mtimeMs - statSync(join(source, 'm/1/model.py')).mtimeMs) < 0.01);

  writeFileSync(join(source, 'm/config.pbtxt'), 'max_batch_size: 4');
  rmSync(join(source, 'm/1'), { recursive: true });
  mkdirSync(join(source, 'm/2'));
  writeFileSync(join(source, 'm/2/model.py'), 'v2');
  mirror.sync();
  assert.equal(read('m/config.pbtxt'), 'max_batch_size: 4 # patched');
  assert.equal(existsSync(join(dest, 'm/1')), false, 'a directory deleted on the host is deleted in the copy');
  assert.equal(read('m/2/model.py'), 'v2');
  assert.equal(existsSync(join(root, 'tmp')), false);

  // Left running, it follows the host without being asked.
  mirror.start(50);
  writeFileSync(join(source, 'm/config.pbtxt'), 'max_batch_size: 2');
  const deadline = Date.now() + 30_000;
  while (read('m/config.pbtxt') !== 'max_batch_size: 2 # patched' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(read('m/config.pbtxt'), 'max_batch_size: 2 # patched');

  // After close() it never writes again, not even to recreate a removed copy.
  mirror.close();
  rmSync(dest, { recursive: true });
  writeFileSync(join(source, 'm/config.pbtxt'), 'max_batch_size: 1');
  mirror.sync();
  assert.equal(existsSync(dest), false);
});
