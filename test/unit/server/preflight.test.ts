// Preflight against the fake docker in each failure mode: every check runs and is reported on its own (a failure
// of one never hides the others), every mode yields its own code, message and fix, and a check that needs the
// daemon says "blocked" while the daemon is away, never "ok". GPU memory comes from a fake nvidia-smi probe.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  DockerCli, planSettings, PREFLIGHT_CHECKS, requiredMiB, resolveSettings, runPreflight, type GpuProbe, type PreflightOptions, type PreflightReport, type ServerSettings,
} from '../../../src/core/server';
import { createFakeDocker, freePort, makeFakeWeights, type FakeDockerFailMode } from '../../fake-docker/harness';

const A10: GpuProbe = { gpus: [{ index: '0', uuid: 'GPU-aaaa', name: 'NVIDIA A10', totalMiB: 23028, freeMiB: 22500 }] };
const probe = (result: GpuProbe): PreflightOptions['probeGpus'] => async () => result;
/** A host with the NVIDIA Container Toolkit's hook (what `--gpus` runs), or without it. */
const withHook: PreflightOptions['which'] = async (name) => (name === 'nvidia-container-runtime-hook' ? `/usr/bin/${name}` : undefined);
const noHook: PreflightOptions['which'] = async () => undefined;

async function setup(t: { after(fn: () => void): void }) {
  const fake = createFakeDocker();
  const tmp = mkdtempSync(join(tmpdir(), 'preflight-'));
  t.after(() => { fake.cleanup(); rmSync(tmp, { recursive: true, force: true }); });
  const settings = resolveSettings({
    dockerPath: fake.dockerPath,
    weightsPath: makeFakeWeights(tmp),
    repositoryPath: tmp,
    httpPort: await freePort(), grpcPort: await freePort(), metricsPort: await freePort(),
  });
  return { fake, settings, docker: new DockerCli(fake.dockerPath, { env: fake.env }) };
}

const levels = (r: PreflightReport) => Object.fromEntries(r.checks.map((c) => [c.id, c.level]));
const check = (r: PreflightReport, id: string) => r.checks.find((c) => c.id === id);

test('all checks pass on a healthy fake docker, each in order and with what it found', async (t) => {
  const { settings, docker } = await setup(t);
  const r = await runPreflight(docker, settings, { probeGpus: probe(A10), which: withHook });
  assert.deepEqual(r.checks.map((c) => c.id), [...PREFLIGHT_CHECKS]);
  assert.deepEqual(levels(r), { docker: 'ok', daemon: 'ok', 'nvidia-runtime': 'ok', image: 'ok', weights: 'ok', ports: 'ok', 'gpu-memory': 'ok' });
  assert.equal(r.ok, true);
  assert.equal(r.firstError, undefined);
  assert.equal(check(r, 'docker')?.facts?.dockerVersion, '28.2.2');
  assert.equal(check(r, 'daemon')?.facts?.daemonVersion, '28.2.2');
  assert.equal(check(r, 'image')?.facts?.image, 'triton-chatglm:24.10');
  assert.equal(check(r, 'weights')?.facts?.weightsPath, settings.weightsPath);
  assert.deepEqual(check(r, 'ports')?.facts?.ports, [settings.httpPort, settings.grpcPort, settings.metricsPort]);
  assert.equal(check(r, 'gpu-memory')?.facts?.gpus?.[0]?.name, 'NVIDIA A10');
  assert.equal(check(r, 'nvidia-runtime')?.facts?.nvidiaVia, 'hook');
});

// A real host with the toolkit installed the usual way lists no "nvidia" runtime (`--gpus` runs the hook): no
// warning there; a listed runtime is enough; neither is the advisory warning.
test('nvidia check: the hook alone is ok, a listed runtime is ok, neither warns', async (t) => {
  const { fake, settings, docker } = await setup(t);
  const hookOnly = await runPreflight(docker, settings, { skip: ['weights', 'ports', 'gpu-memory'], which: withHook });
  assert.equal(check(hookOnly, 'nvidia-runtime')?.level, 'ok');
  const neither = await runPreflight(docker, settings, { skip: ['weights', 'ports', 'gpu-memory'], which: noHook });
  assert.equal(check(neither, 'nvidia-runtime')?.level, 'warning');
  assert.match(check(neither, 'nvidia-runtime')?.error?.message ?? '', /no "nvidia" runtime and nvidia-container-runtime-hook is not installed/);
  const listed = await runPreflight(new DockerCli(fake.dockerPath, { env: { ...fake.env, FAKE_DOCKER_NVIDIA_RUNTIME: '1' } }), settings, { skip: ['weights', 'ports', 'gpu-memory'], which: noHook });
  assert.equal(check(listed, 'nvidia-runtime')?.level, 'ok');
  assert.equal(check(listed, 'nvidia-runtime')?.facts?.nvidiaVia, 'runtime');
});

// The server runs as the host user (docker run --user): a 0600 file of someone else's is unreadable there, and
// the check says which file, for the weights and for the rendered repository alike.
test('weights check: a file the server\'s user cannot read is named; root reads everything', async (t) => {
  const { settings, docker } = await setup(t);
  const opts = { skip: ['docker', 'daemon', 'nvidia-runtime', 'image', 'ports', 'gpu-memory'] } satisfies PreflightOptions;
  const shard = join(settings.weightsPath, 'model-00001-of-00001.safetensors');
  chmodSync(shard, 0o600);
  const other = await runPreflight(docker, settings, { ...opts, fileUser: { uid: 4321, gid: 4321 } });
  assert.equal(check(other, 'weights')?.level, 'error');
  assert.equal(check(other, 'weights')?.error?.code, 'files-unreadable');
  assert.equal(check(other, 'weights')?.error?.file, shard);
  assert.match(check(other, 'weights')?.error?.message ?? '', /uid 4321/);
  const root = await runPreflight(docker, settings, { ...opts, fileUser: { uid: 0, gid: 0 } });
  assert.equal(check(root, 'weights')?.level, 'ok');
  chmodSync(shard, 0o644);
  const repoFile = join(settings.repositoryPath, 'chatglm3', 'config.pbtxt');
  mkdirSync(join(settings.repositoryPath, 'chatglm3'), { recursive: true });
  writeFileSync(repoFile, 'name: "chatglm3"', { mode: 0o600 });
  chmodSync(settings.repositoryPath, 0o755);
  chmodSync(settings.weightsPath, 0o755);
  const repo = await runPreflight(docker, settings, { ...opts, fileUser: { uid: 4321, gid: 4321 } });
  assert.equal(check(repo, 'weights')?.error?.file, repoFile);
});

test('podman: the GPU check names the missing NVIDIA CDI spec (podman has no --gpus)', async (t) => {
  const { fake, settings } = await setup(t);
  const bin = mkdtempSync(join(tmpdir(), 'podman-'));
  t.after(() => rmSync(bin, { recursive: true, force: true }));
  symlinkSync(fake.dockerPath, join(bin, 'podman'));
  const r = await runPreflight(new DockerCli(join(bin, 'podman'), { env: fake.env }), { ...settings, dockerPath: join(bin, 'podman') }, { skip: ['weights', 'ports', 'gpu-memory'], which: withHook, podmanLimits: async () => undefined });
  const gpu = check(r, 'nvidia-runtime');
  assert.equal(gpu?.level, 'error');
  assert.match(gpu?.error?.message ?? '', /CDI.*\/etc\/cdi/);
  assert.match(gpu?.error?.fix ?? '', /nvidia-ctk cdi generate/);
});

const expectations: { mode: FakeDockerFailMode; check: string; code: string; level: string; message: RegExp; fix: RegExp }[] = [
  { mode: 'daemon-down', check: 'daemon', code: 'daemon-unreachable', level: 'error', message: /daemon is not running/, fix: /Start Docker/ },
  { mode: 'permission-denied', check: 'daemon', code: 'permission-denied', level: 'error', message: /permission/, fix: /docker" group/ },
  { mode: 'no-nvidia', check: 'nvidia-runtime', code: 'nvidia-runtime-missing', level: 'warning', message: /NVIDIA Container Toolkit/, fix: /nvidia-ctk runtime configure/ },
  { mode: 'image-missing', check: 'image', code: 'image-missing', level: 'error', message: /triton-chatglm:24\.10/, fix: /Dockerfile/ },
];

for (const e of expectations) {
  test(`fake docker "${e.mode}" → ${e.code}; the other checks still run`, async (t) => {
    const { fake, settings, docker } = await setup(t);
    fake.setFail(e.mode);
    const r = await runPreflight(docker, settings, { probeGpus: probe(A10), which: noHook });
    const failed = check(r, e.check);
    assert.equal(failed?.level, e.level);
    assert.equal(failed?.error?.code, e.code);
    assert.match(failed?.error?.message ?? '', e.message);
    assert.match(failed?.error?.fix ?? '', e.fix);
    if (e.level === 'warning') {
      assert.equal(r.ok, true, 'a missing nvidia runtime alone does not block the start');
    } else {
      assert.equal(r.ok, false);
      assert.equal(r.firstError?.code, e.code);
    }
    // The checks that do not need the daemon are reported as they are, whatever the daemon does.
    assert.equal(levels(r).weights, 'ok');
    assert.equal(levels(r).ports, 'ok');
    assert.equal(levels(r)['gpu-memory'], 'ok');
    if (e.check === 'daemon') {
      assert.equal(levels(r).docker, 'ok', 'the docker client itself is installed');
      // Checks that need the daemon cannot pass, and say why instead of repeating its error.
      for (const id of ['nvidia-runtime', 'image']) {
        assert.equal(levels(r)[id], 'blocked', id);
        assert.equal(check(r, id)?.blockedBy, 'daemon', id);
      }
    }
  });
}

test('everything missing at once: no docker, no weights folder, a taken port, no nvidia-smi — one report names them all', async (t) => {
  const { settings } = await setup(t);
  const blocker: Server = createServer();
  await new Promise<void>((res) => blocker.listen(settings.grpcPort, '127.0.0.1', res));
  t.after(() => blocker.close());
  const missing: ServerSettings = { ...settings, dockerPath: '/nonexistent/bin/docker', weightsPath: '' };
  const r = await runPreflight(new DockerCli(missing.dockerPath), missing, { probeGpus: probe({ unknown: 'no-nvidia-smi', note: 'nvidia-smi is not installed on this machine.' }), requiredGpuMiB: 20_000 });
  assert.deepEqual(levels(r), { docker: 'error', daemon: 'blocked', 'nvidia-runtime': 'blocked', image: 'blocked', weights: 'error', ports: 'error', 'gpu-memory': 'unknown' });
  assert.equal(check(r, 'docker')?.error?.code, 'docker-missing');
  assert.match(check(r, 'docker')?.error?.message ?? '', /\/nonexistent\/bin\/docker/);
  for (const id of ['daemon', 'nvidia-runtime', 'image']) assert.equal(check(r, id)?.blockedBy, 'docker', id);
  assert.equal(check(r, 'weights')?.error?.code, 'weights-missing');
  assert.match(check(r, 'weights')?.error?.message ?? '', /No weights folder/);
  assert.equal(check(r, 'ports')?.error?.code, 'port-allocated');
  assert.match(check(r, 'ports')?.error?.message ?? '', new RegExp(String(settings.grpcPort)));
  assert.equal(check(r, 'gpu-memory')?.unknownReason, 'no-nvidia-smi');
  assert.equal(check(r, 'gpu-memory')?.facts?.requiredMiB, 20_000, 'unknown, but what the chosen model needs is known');
  assert.equal(r.ok, false);
  assert.equal(r.firstError?.code, 'docker-missing', 'the first blocking error in checklist order');
});

test('a folder that is not a checkpoint → weights-invalid naming what is missing; equal ports → settings-invalid', async (t) => {
  const { settings, docker } = await setup(t);
  const r = await runPreflight(docker, { ...settings, weightsPath: tmpdir(), metricsPort: settings.httpPort }, { probeGpus: probe(A10) });
  const weights = check(r, 'weights');
  assert.equal(weights?.error?.code, 'weights-invalid');
  assert.match(weights?.error?.message ?? '', /config\.json is missing/);
  assert.equal(weights?.facts?.weightsPath, tmpdir());
  assert.equal(check(r, 'ports')?.error?.code, 'settings-invalid');
  assert.equal(r.firstError?.code, 'weights-invalid');
});

test('GPU memory: too little free memory is a warning (it never blocks a start), with the GPU named', async (t) => {
  const { settings, docker } = await setup(t);
  const busy: GpuProbe = { gpus: [{ index: '0', uuid: 'GPU-aaaa', name: 'NVIDIA GeForce RTX 3060', totalMiB: 12288, freeMiB: 11000 }] };
  const r = await runPreflight(docker, settings, { probeGpus: probe(busy) });
  const gpu = check(r, 'gpu-memory');
  assert.equal(gpu?.level, 'warning');
  assert.equal(gpu?.error?.code, 'gpu-memory-low');
  assert.match(gpu?.error?.message ?? '', /GPU 0 \(NVIDIA GeForce RTX 3060\) has 10\.7 GB free of 12\.0 GB/);
  assert.match(gpu?.error?.fix ?? '', /more memory/, 'a 12 GB card can never hold the fp16 model');
  assert.equal(r.ok, true);
  // Two copies need twice the memory: the A10 that fits one does not fit two.
  const two = await runPreflight(docker, settings, { probeGpus: probe(A10), requiredGpuMiB: 26_000 });
  assert.equal(check(two, 'gpu-memory')?.level, 'warning');
});

test('GPU memory with the model settings: the memory plan says what runs (int8 on 12 GB) and what does not (8 GB)', async (t) => {
  const { settings, docker } = await setup(t);
  const plan = planSettings({});  // the defaults: 8 rows x 8192 tokens, float16, quantization auto
  const gpu = (name: string, totalMiB: number, freeMiB: number): GpuProbe => ({ gpus: [{ index: '0', uuid: 'GPU-b', name, totalMiB, freeMiB }] });
  const run = (p: GpuProbe, copies = 1) => runPreflight(docker, settings, { probeGpus: probe(p), requiredGpuMiB: requiredMiB(plan) * copies, gpuPlan: { settings: plan, copies } });

  const twelve = check(await run(gpu('NVIDIA GeForce RTX 3060', 12288, 11800)), 'gpu-memory');
  assert.equal(twelve?.level, 'ok', 'a 12 GB card runs the int8 model');
  const v12 = twelve?.facts?.gpuPlans?.[0];
  assert.ok(v12?.kind === 'runs' && v12.plan.quantization === 'int8' && v12.plan.rows === 8 && v12.plan.context === 8192);
  assert.ok(v12.plan.weights > 6.2 * 2 ** 30 && v12.plan.weights < 6.4 * 2 ** 30);

  const big = check(await run(gpu('NVIDIA A10', 23028, 22500)), 'gpu-memory');
  assert.ok(big?.level === 'ok' && big.facts?.gpuPlans?.[0]?.kind === 'runs' && big.facts.gpuPlans[0].plan.quantization === 'none');

  const eight = check(await run(gpu('NVIDIA GeForce RTX 4060', 8188, 7700)), 'gpu-memory');
  assert.equal(eight?.level, 'warning');
  const v8 = eight?.facts?.gpuPlans?.[0];
  assert.ok(v8?.kind === 'too-small' && v8.needed.quantization === 'int8' && v8.fits !== undefined && v8.fits.rows < 8);
  assert.ok((eight?.facts?.requiredMiB ?? 0) * 2 ** 20 >= v8.needed.total);
  // Two copies on the A10: each has half of it, too little for float16, so both run int8.
  const halves = check(await run(gpu('NVIDIA A10', 23028, 22500), 2), 'gpu-memory');
  assert.ok(halves?.facts?.gpuPlans?.[0]?.kind === 'runs' && halves.facts.gpuPlans[0].plan.quantization === 'int8');
});

test('several GPUs: the memory plan runs for each one, and the warning names only the GPU that does not fit', async (t) => {
  const { settings: base, docker } = await setup(t);
  const settings = { ...base, gpuIds: ['0', '1'] };
  const plan = planSettings({});
  const gpus: GpuProbe = { gpus: [
    { index: '0', uuid: 'GPU-a', name: 'NVIDIA A10', totalMiB: 23028, freeMiB: 22500 },
    { index: '1', uuid: 'GPU-b', name: 'NVIDIA GeForce RTX 4060', totalMiB: 8188, freeMiB: 7700 },
    { index: '2', uuid: 'GPU-c', name: 'NVIDIA GeForce RTX 4060', totalMiB: 8188, freeMiB: 7700 },
  ] };
  const r = check(await runPreflight(docker, settings, { probeGpus: probe(gpus), requiredGpuMiB: requiredMiB(plan), gpuPlan: { settings: plan, copies: 1 } }), 'gpu-memory');
  assert.equal(r?.level, 'warning');
  assert.deepEqual(r?.facts?.gpus?.map((g) => g.index), ['0', '1'], 'the listed GPUs, not GPU 2');
  assert.deepEqual(r?.facts?.gpuPlans?.map((v) => v.kind), ['runs', 'too-small']);
  assert.match(r?.error?.message ?? '', /^GPU 1 \(NVIDIA GeForce RTX 4060\) has 7\.5 GB free/);
  assert.doesNotMatch(r?.error?.message ?? '', /GPU 0|GPU 2/);
});

test('skipped checks are reported as skipped and dependants of a skipped daemon check still run', async (t) => {
  const { settings, docker } = await setup(t);
  const r = await runPreflight(docker, settings, { skip: ['ports', 'weights', 'gpu-memory', 'daemon'], which: withHook });
  assert.deepEqual(levels(r), { docker: 'ok', daemon: 'skipped', 'nvidia-runtime': 'ok', image: 'ok', weights: 'skipped', ports: 'skipped', 'gpu-memory': 'skipped' });
  assert.equal(r.ok, true);
});
