// Podman (issue #27, item 7) on this machine's real Debian podman: the preflight's prediction of whether podman can
// set its container limits here (src/core/server/podmanLimits.ts, from /proc and containers.conf) is checked
// against what `podman run` really does, and its suggested containers.conf line is checked to make the run work.
// Podman gets a private root under a temporary folder (vfs, cgroupfs, file events: no systemd here; no network: the host's CNI bridge is not touched) and a
// two-binary image imported from this host's /bin/true and its libraries; nothing is pulled.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { configuredUlimits, podmanLimitsProblem, readHostLimits } from '../../src/core/server';
import { readContainersConf } from '../../src/core/server/podmanLimits';

const PODMAN = '/usr/bin/podman';

/** A root filesystem holding /bin/true and the libraries it links, as a tar for `podman import`. */
function miniRootfs(dir: string): string {
  const root = join(dir, 'rootfs');
  const libs = spawnSync('ldd', ['/bin/true'], { encoding: 'utf8' }).stdout.match(/\/\S+/g) ?? [];
  for (const file of ['/bin/true', ...libs]) {
    mkdirSync(join(root, dirname(file)), { recursive: true });
    copyFileSync(file, join(root, file));
  }
  const tar = join(dir, 'rootfs.tar');
  assert.equal(spawnSync('tar', ['-C', root, '-cf', tar, '.']).status, 0);
  return tar;
}

test('podman: the preflight says whether podman can set its limits here, as `podman run` finds, and its fix works', { skip: !existsSync(PODMAN) && 'podman is not installed (apt-get install podman)' }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'podman-real-'));
  const base = ['--root', join(dir, 'root'), '--runroot', join(dir, 'run'), '--storage-driver', 'vfs', '--cgroup-manager', 'cgroupfs', '--events-backend', 'file', '--tmpdir', join(dir, 'tmp')];
  const podman = (args: string[], env: NodeJS.ProcessEnv = process.env) => spawnSync(PODMAN, [...base, ...args], { encoding: 'utf8', env, timeout: 120_000 });
  t.after(() => { podman(['rm', '-af']); podman(['rmi', '-af']); rmSync(dir, { recursive: true, force: true }); });
  assert.equal(podman(['import', miniRootfs(dir), 'tcg-podman-mini:1']).status, 0);

  const host = await readHostLimits();
  assert.ok(host, 'this Linux host\'s limits are readable');
  const problem = podmanLimitsProblem(host, configuredUlimits(await readContainersConf()));
  const plain = podman(['run', '--rm', '--network', 'none', 'tcg-podman-mini:1', '/bin/true']);
  if (!problem) {
    assert.equal(plain.status, 0, `the preflight saw no problem, but podman run failed: ${plain.stderr}`);
    return;
  }
  t.diagnostic(`preflight: ${problem.message}`);
  assert.notEqual(plain.status, 0, 'the preflight predicted a failure, but podman run worked');
  assert.match(plain.stderr, /error setting rlimit type \d+: operation not permitted/);
  // The fix it names: that containers.conf line (podman reads $CONTAINERS_CONF instead of the system files).
  const conf = join(dir, 'containers.conf');
  writeFileSync(conf, `[containers]\n${problem.suggestion}\n`);
  const fixed = podman(['run', '--rm', '--network', 'none', 'tcg-podman-mini:1', '/bin/true'], { ...process.env, CONTAINERS_CONF: conf });
  assert.equal(fixed.status, 0, `with ${problem.suggestion}: ${fixed.stderr}`);
  assert.equal(podmanLimitsProblem(host, configuredUlimits([`[containers]\n${problem.suggestion}\n`])), undefined, 'the preflight passes with its own fix');
});
