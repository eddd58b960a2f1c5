// Podman on a host whose root may not raise limits (issue #27, item 7). Debian's podman 4.3.1 on the test machine
// (root without CAP_SYS_RESOURCE, hard limits 20000 open files / 96369 processes, kernel.pid_max 32768) failed every
// `podman run` with "error setting rlimit type 7: operation not permitted" (its rootful defaults: 1048576 open
// files, 4194304 processes); with containers.conf's default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
// it ran. The preflight's daemon check names that before a start, with the line to set.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { classifyDockerFailure, configuredUlimits, DockerCli, podmanLimitsProblem, resolveSettings, runPreflight, type HostLimits } from '../../../src/core/server';

const SANDBOX: HostLimits = { uid: 0, canRaise: false, hard: { nofile: 20_000, nproc: 96_369 }, pidMax: 32_768 };

test('root without CAP_SYS_RESOURCE, podman\'s defaults above the hard limits: the problem names both and the line to set', () => {
  const e = podmanLimitsProblem(SANDBOX, {});
  assert.ok(e);
  assert.equal(e.code, 'engine-limits');
  assert.match(e.message, /nofile 1048576 > 20000, nproc 4194304 > 96369; its defaults/);
  assert.match(e.message, /no CAP_SYS_RESOURCE/);
  assert.match(e.message, /error setting rlimit type 7: operation not permitted/);
  assert.equal(e.suggestion, 'default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]');
  assert.match(e.fix, /\/etc\/containers\/containers\.conf, section \[containers\]: default_ulimits = \["nofile=20000:20000", "nproc=32768:32768"\]/);
});

test('no problem: limits that fit, a root that may raise them, a rootless podman (it keeps the user\'s limits)', () => {
  assert.equal(podmanLimitsProblem(SANDBOX, { nofile: 20_000, nproc: 20_000 }), undefined);
  assert.equal(podmanLimitsProblem({ ...SANDBOX, canRaise: true }, {}), undefined);
  assert.equal(podmanLimitsProblem({ ...SANDBOX, uid: 1000 }, {}), undefined);
  const one = podmanLimitsProblem(SANDBOX, { nofile: 20_000 });
  assert.match(one!.message, /\(nproc 4194304 > 96369; its defaults\).*rlimit type 6/);
  assert.match(podmanLimitsProblem(SANDBOX, { nofile: 50_000, nproc: 1_000 })!.message, /\(nofile 50000 > 20000; containers\.conf\)/);
});

test('containers.conf: default_ulimits read as podman does (comments ignored, the last file that sets it wins)', () => {
  const usr = '[containers]\n# default_ulimits = ["nofile=1:1"]\ndefault_ulimits = [\n  "nofile=1048576:1048576",\n]\n';
  const etc = '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=4096"]\n';
  assert.deepEqual(configuredUlimits([usr]), { nofile: 1_048_576 });
  assert.deepEqual(configuredUlimits([usr, etc]), { nofile: 20_000, nproc: 4096 });
  assert.deepEqual(configuredUlimits([etc, '[engine]\ncgroup_manager = "cgroupfs"\n']), { nofile: 20_000, nproc: 4096 });
  assert.deepEqual(configuredUlimits([]), {});
});

test('the preflight\'s daemon check with podman: an error naming the limits; docker is never asked', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'podman-limits-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // podman 4.3.1's own answer: a Client part only (no daemon).
  const version = '{"Client":{"Version":"4.3.1"}}';
  for (const name of ['podman', 'docker']) {
    writeFileSync(join(dir, name), `#!/bin/sh\n[ "$1" = version ] && echo '${version}' && exit 0\necho "Error: unexpected $*" >&2; exit 125\n`);
    chmodSync(join(dir, name), 0o755);
  }
  const asked: string[] = [];
  const limits = async () => { asked.push('limits'); return podmanLimitsProblem(SANDBOX, {}); };
  const skip = ['nvidia-runtime', 'image', 'weights', 'ports', 'gpu-memory'] as const;
  const podman = await runPreflight(new DockerCli(join(dir, 'podman')), resolveSettings({ dockerPath: join(dir, 'podman'), weightsPath: dir, repositoryPath: join(dir, 'repo') }), { skip: [...skip], podmanLimits: limits });
  const daemon = podman.checks.find((c) => c.id === 'daemon')!;
  assert.equal(daemon.level, 'error');
  assert.equal(daemon.error?.code, 'engine-limits');
  assert.equal(podman.firstError?.code, 'engine-limits');
  assert.equal(podman.ok, false);
  const docker = await runPreflight(new DockerCli(join(dir, 'docker')), resolveSettings({ dockerPath: join(dir, 'docker'), weightsPath: dir, repositoryPath: join(dir, 'repo') }), { skip: [...skip], podmanLimits: limits });
  assert.equal(docker.checks.find((c) => c.id === 'daemon')!.level, 'ok');
  assert.deepEqual(asked, ['limits'], 'only podman is checked');
});

test('runc refusing an engine\'s own limit (types 7, 6) is engine-limits, not our --ulimit (8, 3: ulimit-denied)', () => {
  const run = (type: number) => classifyDockerFailure({ exitCode: 126, stderr: `Error: runc: runc create failed: unable to start container process: error during container init: error setting rlimits for ready process: error setting rlimit type ${type}: operation not permitted: OCI permission denied` });
  assert.equal(run(7).code, 'engine-limits');
  assert.match(run(7).message, /open files \(RLIMIT_NOFILE\)/);
  assert.equal(run(6).code, 'engine-limits');
  assert.match(run(6).message, /process count \(RLIMIT_NPROC\)/);
  assert.equal(run(8).code, 'ulimit-denied');
  assert.equal(run(3).code, 'ulimit-denied');
});
