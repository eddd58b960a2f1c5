// The defects a real Docker Engine showed and the fake hid (issue #27), each on the private dockerd: a Docker
// without buildx (the legacy builder), a daemon that cannot raise the memlock limit (like rootless Docker), files
// readable by the host user but not by the container's, and (in faults.test.ts) a container killed mid-answer.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../fake-docker/harness';
import { buildCli, cli, cliPath, makeWeights, projectRoot, realDocker, type RealDocker, type Run } from './harness';

let rd: RealDocker;
before(async () => { await buildCli(); rd = await realDocker(); });
after(async () => { await rd?.release(); });

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

function workDir(t: { after(fn: () => void): void }, name: string): string {
  const work = mkdtempSync(join(tmpdir(), 'docker-defect-'));
  chmodSync(work, 0o755);
  t.after(() => { rd.docker(['rm', '-f', name]); rmSync(work, { recursive: true, force: true }); });
  return work;
}

/**
 * A docker CLI 23 or newer without the buildx plugin: its `docker build` is the legacy builder, which refuses
 * `--progress` ("unknown flag"). Debian 12's own CLI (20.10) still accepts the flag, so the defect needs this one:
 * the `docker` on PATH when it is such a CLI (this machine's /usr/local/bin/docker 28), else none.
 */
function modernCliWithoutBuildx(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v docker'], { encoding: 'utf8' }).stdout.trim();
  if (!found || found === rd.dockerPath) return undefined;
  const version = spawnSync(found, ['version', '--format', '{{.Client.Version}}'], { env: rd.env, encoding: 'utf8' }).stdout.trim();
  const major = Number(/^(\d+)\./.exec(version)?.[1] ?? 0);
  if (major < 23) return undefined;
  return spawnSync(found, ['buildx', 'version'], { env: rd.env }).status === 0 ? undefined : found;
}

async function buildImageWith(t: { after(fn: () => void): void }, dockerPath: string, name: string): Promise<void> {
  const work = workDir(t, name);
  const pkg = join(work, 'pkg');
  mkdirSync(pkg);
  cpSync(join(projectRoot, 'triton/model_repository'), join(pkg, 'model_repository'), { recursive: true, filter: (p) => !p.includes('__pycache__') });
  writeFileSync(join(pkg, 'Dockerfile'), `FROM ${rd.image}\nLABEL triton-chatglm.test=${name}\n`);
  const tag = `triton-chatglm-test-built:${name}`;
  t.after(() => { rd.docker(['rmi', '-f', tag]); });
  const env = { ...await cliEnv(work, name), TRITON_CHATGLM_IMAGE: tag, TRITON_CHATGLM_DOCKER: dockerPath };
  const r = await cli(['build-image', '--repository-source', join(pkg, 'model_repository')], env, work);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /unknown flag/);
  assert.equal(rd.docker(['image', 'inspect', '--format', '{{index .Config.Labels "triton-chatglm.test"}}', tag]).stdout.trim(), name);
}

test('build-image with Debian\'s docker CLI (20.10, no buildx plugin)', async (t) => {
  assert.notEqual(rd.docker(['buildx', 'version']).status, 0, 'this Docker has no buildx plugin');
  await buildImageWith(t, rd.dockerPath, 'debian-cli');
});

test('build-image with a docker CLI >= 23 without buildx (the legacy builder: no --progress flag)', async (t) => {
  const modern = modernCliWithoutBuildx();
  if (!modern) { t.skip('no docker CLI >= 23 without buildx on PATH'); return; }
  await buildImageWith(t, modern, 'legacy-builder');
});

test('a daemon that cannot raise the memlock limit (like rootless Docker) still starts the server', async (t) => {
  // The premise: this daemon refuses `--ulimit memlock=-1` with the rlimit error rootless Docker gives.
  const refused = rd.docker(['run', '--rm', '--ulimit', 'memlock=-1', rd.image, 'true']);
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /error setting rlimit type 8: operation not permitted/);
  const work = workDir(t, 'tcg-memlock');
  const env = await cliEnv(work, 'tcg-memlock');
  const r = await cli(['start', '--weights', makeWeights(work)], env, work);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Triton is live/);
  assert.match(r.stderr, /warning: Docker refused --ulimit memlock\/stack/);
  const loaded = await cli(['load'], env, work);
  assert.equal(loaded.code, 0, loaded.stderr);
});

test('weights readable only by the host user (mode 0600, not uid 1000): the model loads in the container', async (t) => {
  assert.notEqual(process.getuid?.(), 1000, 'the host user must differ from the image\'s user for this test to mean anything');
  const work = workDir(t, 'tcg-weights');
  const env = await cliEnv(work, 'tcg-weights');
  const weights = makeWeights(work, 0o600);
  const started = await cli(['start', '--weights', weights], env, work);
  assert.equal(started.code, 0, started.stderr);
  const loaded = await cli(['load'], env, work);
  assert.equal(loaded.code, 0, `${loaded.stderr}\n${(await cli(['logs', '--tail', '30'], env, work)).stdout}`);
  const chat = await cli(['chat', 'hi', '--max-new-tokens', '3'], env, work);
  assert.equal(chat.code, 0, chat.stderr);
});

/** The CLI under `umask 077`, as on a hardened host: everything it writes (the rendered repository) is 0600/0700. */
function cliUnderUmask(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', 'umask 077 && exec "$0" "$@"', process.execPath, cliPath, ...args], { env, cwd, timeout: 300_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

test('a repository rendered under umask 077 is readable by the server: the model loads', async (t) => {
  const work = workDir(t, 'tcg-umask');
  const env = await cliEnv(work, 'tcg-umask');
  const weights = makeWeights(work);
  const started = await cliUnderUmask(['start', '--weights', weights], env, work);
  assert.equal(started.code, 0, started.stderr);
  const loaded = await cliUnderUmask(['load'], env, work);
  assert.equal(loaded.code, 0, `${loaded.stderr}\n${(await cli(['logs', '--tail', '30'], env, work)).stdout}`);
});
