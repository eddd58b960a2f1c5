// Preflight against the fake docker in each failure mode: every mode yields its own code, message and fix.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DockerCli, resolveSettings, runPreflight, type PreflightReport } from '../../../src/core/server';
import { createFakeDocker, freePort, makeFakeWeights, type FakeDockerFailMode } from '../../fake-docker/harness';

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

test('all checks pass on a healthy fake docker', async (t) => {
  const { settings, docker } = await setup(t);
  const r = await runPreflight(docker, settings);
  assert.deepEqual(levels(r), { docker: 'ok', 'nvidia-runtime': 'ok', image: 'ok', weights: 'ok', ports: 'ok' });
  assert.equal(r.ok, true);
  assert.equal(r.firstError, undefined);
});

const expectations: { mode: FakeDockerFailMode; check: string; code: string; level: string; message: RegExp; fix: RegExp }[] = [
  { mode: 'daemon-down', check: 'docker', code: 'daemon-unreachable', level: 'error', message: /daemon is not running/, fix: /Start Docker/ },
  { mode: 'permission-denied', check: 'docker', code: 'permission-denied', level: 'error', message: /permission/, fix: /docker" group/ },
  { mode: 'no-nvidia', check: 'nvidia-runtime', code: 'nvidia-runtime-missing', level: 'warning', message: /NVIDIA Container Toolkit/, fix: /nvidia-ctk runtime configure/ },
  { mode: 'image-missing', check: 'image', code: 'image-missing', level: 'error', message: /triton-chatglm:24\.10/, fix: /Dockerfile/ },
];

for (const e of expectations) {
  test(`fake docker "${e.mode}" → ${e.code}`, async (t) => {
    const { fake, settings, docker } = await setup(t);
    fake.setFail(e.mode);
    const r = await runPreflight(docker, settings);
    const check = r.checks.find((c) => c.id === e.check);
    assert.equal(check?.level, e.level);
    assert.equal(check?.error?.code, e.code);
    assert.match(check?.error?.message ?? '', e.message);
    assert.match(check?.error?.fix ?? '', e.fix);
    if (e.level === 'warning') {
      assert.equal(r.ok, true, 'a missing nvidia runtime alone does not block the start');
    } else {
      assert.equal(r.ok, false);
      assert.equal(r.firstError?.code, e.code);
    }
    if (e.check === 'docker') {
      // Checks that need the daemon would only repeat the same error.
      assert.equal(levels(r)['nvidia-runtime'], 'skipped');
      assert.equal(levels(r).image, 'skipped');
      assert.equal(levels(r).weights, 'ok');
    }
  });
}

test('docker binary missing → docker-missing', async (t) => {
  const { settings } = await setup(t);
  const r = await runPreflight(new DockerCli('/nonexistent/bin/docker'), { ...settings, dockerPath: '/nonexistent/bin/docker' });
  assert.equal(r.firstError?.code, 'docker-missing');
  assert.match(r.firstError?.message ?? '', /\/nonexistent\/bin\/docker/);
});

test('a taken host port → port-allocated naming the port; bad weights → weights-invalid', async (t) => {
  const { settings, docker } = await setup(t);
  const blocker: Server = createServer();
  await new Promise<void>((res) => blocker.listen(settings.grpcPort, '127.0.0.1', res));
  t.after(() => blocker.close());
  const r = await runPreflight(docker, { ...settings, weightsPath: tmpdir() });
  assert.equal(levels(r).ports, 'error');
  const ports = r.checks.find((c) => c.id === 'ports')?.error;
  assert.equal(ports?.code, 'port-allocated');
  assert.match(ports?.message ?? '', new RegExp(String(settings.grpcPort)));
  assert.equal(r.checks.find((c) => c.id === 'weights')?.error?.code, 'weights-invalid');
  assert.equal(r.firstError?.code, 'weights-invalid');
});

test('skipped checks are reported as skipped', async (t) => {
  const { settings, docker } = await setup(t);
  const r = await runPreflight(docker, settings, { skip: ['ports', 'weights'] });
  assert.equal(levels(r).ports, 'skipped');
  assert.equal(levels(r).weights, 'skipped');
  assert.equal(r.ok, true);
});
