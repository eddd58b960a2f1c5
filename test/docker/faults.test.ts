// Faults on a real Docker Engine, through the built CLI: the container killed from outside (idle and while an
// answer streams), a port taken by a process and by another container, a missing image, the daemon stopped
// mid-session and started again, a foreign container with our name, a build whose step fails.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../fake-docker/harness';
import { buildCli, cli, cliPath, makeWeights, projectRoot, realDocker, type RealDocker } from './harness';

let rd: RealDocker;
before(async () => { await buildCli(); rd = await realDocker(); });
after(async () => { await rd?.release(); });

interface Setup { env: NodeJS.ProcessEnv; work: string; weights: string; port: number; name: string; run(...a: string[]): ReturnType<typeof cli> }

async function setup(t: { after(fn: () => void): void }, name: string): Promise<Setup> {
  const work = mkdtempSync(join(tmpdir(), 'docker-fault-'));
  t.after(() => { rd.docker(['rm', '-f', name]); rmSync(work, { recursive: true, force: true }); });
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...rd.env,
    TRITON_CHATGLM_DOCKER: rd.dockerPath,
    TRITON_CHATGLM_IMAGE: rd.image,
    TRITON_CHATGLM_CONTAINER: name,
    TRITON_CHATGLM_PORT: String(port),
    TRITON_CHATGLM_GRPC_PORT: String(await freePort()),
    TRITON_CHATGLM_METRICS_PORT: String(await freePort()),
    TRITON_CHATGLM_REPOSITORY: join(work, 'model_repository'),
  };
  return { env, work, weights: makeWeights(work), port, name, run: (...a: string[]) => cli(a, env, work) };
}

async function startLoaded(s: Setup): Promise<void> {
  const started = await s.run('start', '--weights', s.weights);
  assert.equal(started.code, 0, started.stderr);
  const loaded = await s.run('load');
  assert.equal(loaded.code, 0, loaded.stderr);
}

test('the container killed from outside while idle: status and chat say it exited (137); start replaces it', async (t) => {
  const s = await setup(t, 'tcg-fault-idle');
  await startLoaded(s);
  assert.equal(rd.docker(['kill', s.name]).status, 0);
  const status = await s.run('status', '--json');
  assert.equal(status.code, 3);
  const report = JSON.parse(status.stdout);
  assert.equal(report.container, 'exited');
  assert.equal(report.exitCode, 137);
  const chat = await s.run('chat', 'hi');
  assert.notEqual(chat.code, 0);
  assert.match(chat.stderr, /exit code 137/);
  const again = await s.run('start', '--weights', s.weights);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /Triton is live/);
});

test('the container killed while an answer streams: the CLI says the container exited (137), not "cannot reach"', async (t) => {
  const s = await setup(t, 'tcg-fault-stream');
  await startLoaded(s);
  const child = spawn(process.execPath, [cliPath, 'chat', 'a long answer please', '--max-new-tokens', '2000'], { env: s.env, cwd: s.work });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => { err += d; });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => { out += d; resolve(); }));
  assert.equal(rd.docker(['kill', s.name]).status, 0);
  const code = await exited;
  assert.ok(out.length > 0, 'part of the answer came before the kill');
  assert.notEqual(code, 0);
  assert.match(err, /exit(ed)?[^\n]*137|137[^\n]*exit/i, err);
  assert.doesNotMatch(err, /Cannot reach Triton/i);
});

test('a port taken by a process: start fails naming the port, nothing is left running', async (t) => {
  const s = await setup(t, 'tcg-fault-port');
  const blocker: Server = createServer();
  await new Promise<void>((resolve) => blocker.listen(s.port, '127.0.0.1', resolve));
  t.after(() => { blocker.close(); });
  const r = await s.run('start', '--weights', s.weights);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`[Pp]ort ${s.port}`));
  assert.equal(rd.docker(['ps', '-q', '--filter', `name=^${s.name}$`]).stdout.trim(), '');
  // Past the preflight, docker itself refuses the port; the message still names it.
  const noPre = await s.run('start', '--weights', s.weights, '--no-preflight');
  assert.equal(noPre.code, 1);
  assert.match(noPre.stderr, new RegExp(`Port ${s.port} is already in use`));
});

test('a port taken by another container: start fails naming the port; the other container is untouched', async (t) => {
  const s = await setup(t, 'tcg-fault-port2');
  const other = rd.docker(['run', '-d', '--name', 'tcg-port-holder', '-p', `127.0.0.1:${s.port}:9000`, rd.image, 'sleep', 'infinity']);
  assert.equal(other.status, 0, other.stderr);
  t.after(() => { rd.docker(['rm', '-f', 'tcg-port-holder']); });
  const r = await s.run('start', '--weights', s.weights, '--no-preflight');
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`Port ${s.port} is already in use`));
  assert.equal(rd.docker(['inspect', '--format', '{{.State.Running}}', 'tcg-port-holder']).stdout.trim(), 'true');
  const pre = await s.run('start', '--weights', s.weights);
  assert.equal(pre.code, 1);
  assert.match(pre.stderr, new RegExp(`[Pp]ort ${s.port}`));
});

test('a missing image: preflight and start say so and offer build-image; docker pulls nothing', async (t) => {
  const s = await setup(t, 'tcg-fault-image');
  const env = { ...s.env, TRITON_CHATGLM_IMAGE: 'triton-chatglm-test-missing:none' };
  const pre = await cli(['preflight', '--weights', s.weights, '--json'], env, s.work);
  assert.equal(pre.code, 1);
  const image = (JSON.parse(pre.stdout).checks as { id: string; level: string; code?: string }[]).find((c) => c.id === 'image');
  assert.equal(image?.level, 'error');
  assert.equal(image?.code, 'image-missing');
  const r = await cli(['start', '--weights', s.weights], env, s.work);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /not available locally[\s\S]*build-image/);
  const noPre = await cli(['start', '--weights', s.weights, '--no-preflight'], env, s.work);
  assert.equal(noPre.code, 1);
  assert.match(noPre.stderr, /image is not available locally/);
});

test('the daemon stopped mid-session: status says the daemon is down; started again, the CLI finds its container by label', async (t) => {
  const s = await setup(t, 'tcg-fault-daemon');
  await startLoaded(s);
  const id = rd.docker(['ps', '-q', '--no-trunc', '--filter', 'label=triton-chatglm.managed=1']).stdout.trim();
  assert.match(id, /^[0-9a-f]{64}$/);
  await rd.stopDaemon();
  const down = await s.run('status');
  assert.equal(down.code, 1);
  assert.match(down.stderr, /Docker daemon is not running/);
  await rd.startDaemon();
  // Without live-restore the daemon stopped the container: the CLI finds that same container by its label.
  const after = await s.run('status', '--json');
  assert.equal(after.code, 3);
  const report = JSON.parse(after.stdout);
  assert.equal(report.container, 'exited');
  assert.equal(report.containerId, id);
  const again = await s.run('start', '--weights', s.weights);
  assert.equal(again.code, 0, again.stderr);
  assert.equal((await s.run('load')).code, 0);
  const chat = await s.run('chat', 'back again', '--max-new-tokens', '3');
  assert.equal(chat.code, 0, chat.stderr);
});

test('a foreign container with our name is reported and never touched', async (t) => {
  const s = await setup(t, 'tcg-fault-foreign');
  const foreign = rd.docker(['run', '-d', '--name', s.name, rd.image, 'sleep', 'infinity']);
  assert.equal(foreign.status, 0, foreign.stderr);
  const id = foreign.stdout.trim();
  const status = await s.run('status');
  assert.match(status.stdout, /not started by triton-chatglm/);
  const start = await s.run('start', '--weights', s.weights);
  assert.equal(start.code, 1);
  assert.match(start.stderr, new RegExp(`"${s.name}" exists but was not started by this extension; it is left untouched`));
  const stop = await s.run('stop');
  assert.equal(rd.docker(['inspect', '--format', '{{.State.Running}} {{.Id}}', s.name]).stdout.trim(), `true ${id}`, stop.stderr);
});

test('build-image: a Dockerfile step that fails is named in the error', async (t) => {
  const s = await setup(t, 'tcg-fault-build');
  const pkg = join(s.work, 'pkg');
  mkdirSync(pkg);
  cpSync(join(projectRoot, 'triton/model_repository'), join(pkg, 'model_repository'), { recursive: true, filter: (p) => !p.includes('__pycache__') });
  writeFileSync(join(pkg, 'Dockerfile'), `FROM ${rd.image}\nRUN echo preparing && exit 7\n`);
  const env = { ...s.env, TRITON_CHATGLM_IMAGE: 'triton-chatglm-test-broken:1' };
  const r = await cli(['build-image', '--repository-source', join(pkg, 'model_repository')], env, s.work);
  assert.equal(r.code, 1);
  assert.match(r.stderr + r.stdout, /RUN echo preparing && exit 7/);
  assert.doesNotMatch(r.stderr, /unknown flag/);
  assert.notEqual(rd.docker(['image', 'inspect', 'triton-chatglm-test-broken:1']).status, 0);
});
