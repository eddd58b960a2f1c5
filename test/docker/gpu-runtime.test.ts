// GPU flags on a machine without a GPU (test-only): the stub NVIDIA prestart hook on the private dockerd's PATH
// lets `--gpus all` and `"device=0,1"` reach runc unchanged; the preflight against a daemon that lists no
// `nvidia` runtime (a host with only the hook) and against one that does.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../fake-docker/harness';
import { buildCli, cli, makeWeights, projectRoot, realDocker, type RealDocker } from './harness';

const hookDir = join(projectRoot, 'test/docker/nvidia-hook');

let rd: RealDocker;
before(async () => { await buildCli(); rd = await realDocker(); });
after(async () => { await rd?.release(); });

const hookLines = () => (existsSync(rd.hookLog) ? readFileSync(rd.hookLog, 'utf8').split('\n').filter(Boolean) : []);

async function cliEnv(work: string, name: string): Promise<NodeJS.ProcessEnv> {
  return {
    ...rd.env,
    TRITON_CHATGLM_DOCKER: rd.dockerPath,
    TRITON_CHATGLM_IMAGE: rd.image,
    TRITON_CHATGLM_CONTAINER: name,
    TRITON_CHATGLM_PORT: String(await freePort()),
    TRITON_CHATGLM_GRPC_PORT: String(await freePort()),
    TRITON_CHATGLM_METRICS_PORT: String(await freePort()),
    TRITON_CHATGLM_REPOSITORY: join(work, 'model_repository'),
  };
}

test('--gpus all and "device=0,1" reach runc: the NVIDIA prestart hook runs with the devices asked for', () => {
  for (const [gpus, devices] of [['all', 'all'], ['"device=0,1"', '0,1'], ['device=1', '1']]) {
    const before = hookLines().length;
    const r = rd.docker(['run', '--rm', '--gpus', gpus, rd.image, 'true']);
    assert.equal(r.status, 0, `--gpus ${gpus}: ${r.stderr}`);
    const added = hookLines().slice(before);
    assert.deepEqual(added, [`prestart NVIDIA_VISIBLE_DEVICES=${devices}`], `--gpus ${gpus}`);
  }
  // Unquoted, a list is docker's own CSV error: the quoting gpusArg adds is what real docker needs.
  const bad = rd.docker(['run', '--rm', '--gpus', 'device=0,1', rd.image, 'true']);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /cannot set both Count and DeviceIDs/);
});

test('the CLI\'s --gpus 0,1 becomes docker\'s "device=0,1" and the container starts with those devices', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'docker-gpus-'));
  const env = await cliEnv(work, 'tcg-gpus');
  t.after(() => { rd.docker(['rm', '-f', 'tcg-gpus']); rmSync(work, { recursive: true, force: true }); });
  const before = hookLines().length;
  const r = await cli(['start', '--weights', makeWeights(work), '--gpus', '0,1'], env, work);
  assert.equal(r.code, 0, r.stderr);
  const requests = JSON.parse(rd.docker(['inspect', '--format', '{{json .HostConfig.DeviceRequests}}', 'tcg-gpus']).stdout) as
    { Count: number; DeviceIDs: string[]; Capabilities: string[][] }[];
  assert.deepEqual(requests.map((q) => [q.Count, q.DeviceIDs, q.Capabilities]), [[0, ['0', '1'], [['gpu']]]]);
  // At least the running container's hook (a first try refused over its ulimits runs the hook too).
  const added = hookLines().slice(before);
  assert.ok(added.length >= 1, 'the hook ran');
  assert.deepEqual([...new Set(added)], ['prestart NVIDIA_VISIBLE_DEVICES=0,1']);
});

interface Check { id: string; level: string; code?: string }

async function preflightChecks(name: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<Check[]> {
  const work = mkdtempSync(join(tmpdir(), 'docker-pre-'));
  try {
    const r = await cli(['preflight', '--weights', makeWeights(work), '--json'], { ...await cliEnv(work, name), ...extraEnv }, work);
    return JSON.parse(r.stdout).checks as Check[];
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

test('preflight: a daemon without an "nvidia" runtime and no NVIDIA hook on PATH gets a warning that does not block', async () => {
  const runtimes = JSON.parse(rd.docker(['info', '--format', '{{json .Runtimes}}']).stdout) as Record<string, unknown>;
  assert.ok(!Object.keys(runtimes).some((k) => /nvidia/i.test(k)), JSON.stringify(runtimes));
  const checks = await preflightChecks('tcg-pre-none', { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' });
  const nvidia = checks.find((c) => c.id === 'nvidia-runtime');
  assert.equal(nvidia?.level, 'warning');
  assert.equal(nvidia?.code, 'nvidia-runtime-missing');
  for (const id of ['docker', 'daemon', 'image', 'weights', 'ports']) assert.equal(checks.find((c) => c.id === id)?.level, 'ok', id);
});

test('preflight: no "nvidia" runtime, but the NVIDIA hook installed (on PATH, as on the daemon\'s): the check passes', async () => {
  const checks = await preflightChecks('tcg-pre-hook', { PATH: `${hookDir}:/usr/sbin:/usr/bin:/sbin:/bin` });
  assert.equal(checks.find((c) => c.id === 'nvidia-runtime')?.level, 'ok');
});

test('preflight: a daemon with an "nvidia" runtime registered passes the runtime check', async () => {
  await rd.startDaemon({ nvidiaRuntime: true });
  const runtimes = JSON.parse(rd.docker(['info', '--format', '{{json .Runtimes}}']).stdout) as Record<string, unknown>;
  assert.ok('nvidia' in runtimes, JSON.stringify(runtimes));
  const checks = await preflightChecks('tcg-pre-nvidia', { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' });
  assert.equal(checks.find((c) => c.id === 'nvidia-runtime')?.level, 'ok');
  // The runtime itself runs containers too (runc underneath, as nvidia-container-runtime wraps it).
  const r = rd.docker(['run', '--rm', '--runtime', 'nvidia', '--gpus', 'all', rd.image, 'true']);
  assert.equal(r.status, 0, r.stderr);
});
