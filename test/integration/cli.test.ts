// The built `triton-chatglm` CLI (dist/cli.js) drives a whole lifecycle through the fake docker, which runs the
// real tritonserver with the tiny engine: status → start → load → chat (streamed, --history) → stats → unload →
// stop; plus the exit codes and messages of the failure paths.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import * as esbuild from 'esbuild';
import { createFakeDocker, freePort, makeFakeWeights, projectRoot } from '../fake-docker/harness';

const cliPath = join(projectRoot, 'dist/cli.js');

before(async () => {
  // Same options as the CLI entry of esbuild.mjs; only this bundle, so the test does not depend on the others.
  await esbuild.build({
    entryPoints: { cli: join(projectRoot, 'src/cli/main.ts') },
    outdir: join(projectRoot, 'dist'),
    bundle: true, platform: 'node', format: 'cjs', target: 'node20', sourcemap: 'linked', legalComments: 'none',
    banner: { js: '#!/usr/bin/env node' }, logLevel: 'warning',
  });
});

interface Run { code: number; stdout: string; stderr: string }

function cli(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cliPath, ...args], { env, cwd, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

test('CLI lifecycle: status, start, load, chat, stats, unload, stop', async (t) => {
  const fake = createFakeDocker();
  const work = mkdtempSync(join(tmpdir(), 'cli-it-'));
  t.after(() => { fake.cleanup(); rmSync(work, { recursive: true, force: true }); });
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...fake.env,
    // The "container" sees the fake docker's environment: slow decoding a little so an answer can be interrupted.
    TINY_ENGINE_STEP_DELAY_MS: '20',
    TRITON_CHATGLM_DOCKER: fake.dockerPath,
    TRITON_CHATGLM_PORT: String(port),
    TRITON_CHATGLM_GRPC_PORT: String(await freePort()),
    TRITON_CHATGLM_METRICS_PORT: String(await freePort()),
    TRITON_CHATGLM_REPOSITORY: join(work, 'model_repository'),
  };
  const weights = makeFakeWeights(work);
  const run = (...args: string[]) => cli(args, env, work);

  await t.test('status before start: no container, exit code 3', async () => {
    const r = await run('status');
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /container: none/);
  });

  await t.test('chat before start: exit 3 with the fix', async () => {
    const r = await run('chat', 'hi');
    assert.equal(r.code, 3);
    assert.match(r.stderr, /not running[\s\S]*triton-chatglm start/);
  });

  await t.test('start without weights is a usage error', async () => {
    const r = await run('start');
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--weights/);
  });

  await t.test('start renders the repository, runs the container and waits until live', async () => {
    const r = await run('start', '--weights', weights);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Triton is live at http://127\\.0\\.0\\.1:${port}`));
    assert.match(readFileSync(join(work, 'model_repository/chatglm3-6b/config.pbtxt'), 'utf8'), /name: "chatglm3-6b"/);
    const again = await run('start', '--weights', weights);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /already running/);
    assert.equal(fake.containerIds().length, 1);
  });

  await t.test('status: running and live, model not loaded', async () => {
    const r = await run('status', '--json');
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout);
    assert.equal(s.container, 'running');
    assert.equal(s.live, true);
    assert.notEqual(s.model, 'READY');
  });

  await t.test('load', async () => {
    const r = await run('load');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /ChatGLM3-6B \(chatglm3-6b\) is ready/);
  });

  await t.test('chat streams an answer and keeps the conversation in --history', async () => {
    const history = join(work, 'conversation.json');
    const first = await run('chat', 'Hello', 'there', '--history', history, '--max-new-tokens', '8', '-v');
    assert.equal(first.code, 0, first.stderr);
    assert.ok(first.stdout.trim().length > 0, 'an answer was printed');
    assert.match(first.stderr, /\[(length|stop); \d+ prompt \+ \d+ answer tokens/);
    const saved = JSON.parse(readFileSync(history, 'utf8'));
    assert.deepEqual(saved.map((m: { role: string }) => m.role), ['user', 'assistant']);
    assert.equal(saved[0].content, 'Hello there');
    assert.equal(saved[1].content, first.stdout.replace(/\n$/, ''));
    const second = await run('chat', 'And again?', '--history', history, '--max-new-tokens', '4');
    assert.equal(second.code, 0, second.stderr);
    assert.equal(JSON.parse(readFileSync(history, 'utf8')).length, 4);
  });

  await t.test('Ctrl+C during an answer stops it: exit 130, the history file is not changed', async () => {
    const history = join(work, 'interrupted.json');
    writeFileSync(history, '[]\n');
    const child = spawn(process.execPath, [cliPath, 'chat', 'a long answer please', '--history', history, '--max-new-tokens', '2000'], { env, cwd: work });
    let out = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => { out += d; resolve(); }));
    child.kill('SIGINT');
    assert.equal(await exited, 130);
    assert.ok(out.length > 0);
    assert.equal(readFileSync(history, 'utf8'), '[]\n');
  });

  await t.test('a broken history file is refused and left as it was', async () => {
    const bad = join(work, 'bad.json');
    writeFileSync(bad, '{"oops":');
    const r = await run('chat', 'hi', '--history', bad);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not valid JSON/);
    assert.equal(readFileSync(bad, 'utf8'), '{"oops":');
  });

  await t.test('--url talks to a server without docker (status, chat; load needs the admin key)', async () => {
    const external = { ...env, TRITON_CHATGLM_DOCKER: join(work, 'no-docker-here'), TRITON_CHATGLM_URL: `http://127.0.0.1:${port}` };
    const s = await cli(['status', '--json'], external, work);
    assert.equal(s.code, 0, s.stderr);
    assert.deepEqual(JSON.parse(s.stdout), { container: 'external', live: true, url: `http://127.0.0.1:${port}`, modelName: 'chatglm3-6b', model: 'READY' });
    const c = await cli(['chat', 'hi', '--max-new-tokens', '3'], external, work);
    assert.equal(c.code, 0, c.stderr);
    assert.ok(c.stdout.trim().length > 0);
    const l = await cli(['load'], external, work);
    assert.equal(l.code, 1);
    assert.match(l.stderr, /admin key[\s\S]*--admin-key/);
  });

  await t.test('stats counts the requests', async () => {
    const r = await run('stats', '--json');
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout);
    assert.equal(s.model, 'chatglm3-6b');
    assert.ok(s.inferenceCount >= 2, r.stdout);
    assert.ok(s.executionCount >= 1);
    // Nothing runs now; the continuous scheduler's totals count what ran.
    assert.equal(s.scheduler.activeRows, 0, r.stdout);
    assert.ok(s.scheduler.totals.generatedTokens > 0, r.stdout);
    assert.deepEqual(s.gpus, [], 'the CPU test server reports no GPU');
    assert.deepEqual(s.weights, { quantization: 'none', dtype: 'float64' }, 'the tiny engine runs float64, not quantized');
  });

  await t.test('stats while an answer streams: the running row, its tokens/s and steps, as text and --json', async () => {
    const child = spawn(process.execPath, [cliPath, 'chat', 'a long answer to watch', '--max-new-tokens', '2000'], { env, cwd: work });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      const json = await run('stats', '--json');
      assert.equal(json.code, 0, json.stderr);
      const s = JSON.parse(json.stdout);
      assert.equal(s.scheduler.activeRows, 1, json.stdout);
      assert.equal(s.scheduler.waitingRequests, 0);
      assert.ok(s.scheduler.intervalMs >= 1000, 'the rates span the two samples');
      assert.ok(s.scheduler.rates.generatedTokensPerSecond > 0, json.stdout);
      assert.ok(s.scheduler.rates.decodeStepsPerSecond > 0, json.stdout);
      assert.equal(s.scheduler.rates.rowsPerStep, 1, 'one row in every step');
      assert.equal(typeof s.metrics.pendingRequests, 'number');
      const text = await run('stats');
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /^now: +1 generating \(active rows\), 0 waiting for a row, 0 in Triton's queue$/m);
      assert.match(text.stdout, /^last \d+\.\d s: +[\d.]+ tokens\/s, [\d.]+ decode steps\/s, 1\.00 rows per step/m);
      assert.match(text.stdout, /^since load: +\d+ tokens in finished answers, \d+ decode steps/m);
      assert.match(text.stdout, /^refused as busy: +0; cancelled \d+; invalid \d+$/m);
      assert.match(text.stdout, /^weights: +float64 weights \(not quantized\)$/m);
      assert.doesNotMatch(text.stdout, /^GPU/m);
    } finally {
      child.kill('SIGINT');
      assert.equal(await exited, 130);
    }
  });

  await t.test('load, like Load Model, renders config.pbtxt again and unloads a changed model before loading it', async () => {
    const r = await run('load', '--max-batch-size', '4', '-v');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Model repository updated: chatglm3-6b\/config\.pbtxt/);
    assert.match(readFileSync(join(work, 'model_repository/chatglm3-6b/config.pbtxt'), 'utf8'), /max_batch_size: 4/);
    // Triton's own log: the old copy went first (a reload in place would load the new one, then unload the old).
    const events = (await run('logs', '--tail', '5000')).stdout.split('\n')
      .map((l) => /successfully (loaded|unloaded) 'chatglm3-6b'/.exec(l)?.[1]).filter((e) => e !== undefined);
    assert.deepEqual(events.slice(-2), ['unloaded', 'loaded']);
  });

  await t.test('unload, then chat says to load', async () => {
    const r = await run('unload');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /unloaded/);
    const c = await run('chat', 'hi');
    assert.equal(c.code, 1);
    assert.match(c.stderr, /triton-chatglm load/);
  });

  await t.test('logs prints the container log', async () => {
    const r = await run('logs', '--tail', '50');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /chatglm3-6b/);
  });

  await t.test('stop removes the container; status says none', async () => {
    const r = await run('stop');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /stopped and removed/);
    assert.deepEqual(fake.containerIds(), []);
    const s = await run('status');
    assert.equal(s.code, 3);
    const again = await run('stop');
    assert.equal(again.code, 0);
    assert.match(again.stdout, /no container/);
  });

  // Issue #27: the container killed (docker kill: SIGKILL, exit 137) while an answer streams is reported as that
  // exit with its fix, not as "Cannot reach Triton ... Is the server running?"; the --history file is left as it was.
  await t.test('start again; a container killed while an answer streams is reported as its exit (137)', async () => {
    const started = await run('start', '--weights', weights);
    assert.equal(started.code, 0, started.stderr);
    assert.equal((await run('load')).code, 0);
    const history = join(work, 'killed.json');
    writeFileSync(history, '[]\n');
    const child = spawn(process.execPath, [cliPath, 'chat', 'a long answer please', '--history', history, '--max-new-tokens', '2000'], { env, cwd: work });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += d; });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    const kill = fake.docker(['kill', 'triton-chatglm3']);
    assert.equal(kill.status, 0, kill.stderr);
    assert.equal(await exited, 1, stderr);
    assert.match(stderr, /exit code 137/);
    assert.doesNotMatch(stderr, /Cannot reach/);
    assert.match(stderr, /triton-chatglm start/);
    assert.equal(readFileSync(history, 'utf8'), '[]\n');
    assert.equal((await run('stop')).code, 0);
  });
});

test('CLI failure paths: docker errors print message + fix with exit 1; --build-image builds a missing image', async (t) => {
  const fake = createFakeDocker();
  const work = mkdtempSync(join(tmpdir(), 'cli-fail-'));
  t.after(() => { fake.cleanup(); rmSync(work, { recursive: true, force: true }); });
  const env = {
    ...fake.env, TRITON_CHATGLM_DOCKER: fake.dockerPath, TRITON_CHATGLM_REPOSITORY: join(work, 'repo'),
    TRITON_CHATGLM_PORT: String(await freePort()), TRITON_CHATGLM_GRPC_PORT: String(await freePort()), TRITON_CHATGLM_METRICS_PORT: String(await freePort()),
  };
  fake.setFail('daemon-down');
  const down = await cli(['status'], env, work);
  assert.equal(down.code, 1);
  assert.match(down.stderr, /Docker daemon is not running[\s\S]*fix: Start Docker/);
  fake.setFail('image-missing');
  const pre = await cli(['preflight', '--weights', makeFakeWeights(work), '--json'], env, work);
  assert.equal(pre.code, 1);
  const checks = JSON.parse(pre.stdout).checks as { id: string; level: string; code?: string; message?: string; fix?: string }[];
  const image = checks.find((c) => c.id === 'image');
  assert.equal(image?.level, 'error');
  assert.equal(image?.code, 'image-missing');
  assert.match(image?.message ?? '', /triton-chatglm:24\.10/);
  assert.match(image?.fix ?? '', /Dockerfile/);
  assert.equal(checks.find((c) => c.id === 'weights')?.level, 'ok');
  const start = await cli(['start', '--weights', makeFakeWeights(work)], env, work);
  assert.equal(start.code, 1);
  assert.match(start.stderr, /image "triton-chatglm:24\.10" is not available locally[\s\S]*fix: Run `triton-chatglm build-image`/);
  // With --build-image, start builds the missing image from the Dockerfile next to the repository source first.
  const pkg = join(work, 'pkg');
  cpSync(join(projectRoot, 'triton/model_repository'), join(pkg, 'model_repository'), { recursive: true, filter: (p) => !p.includes('__pycache__') });
  cpSync(join(projectRoot, 'triton/warmup_requests.json'), join(pkg, 'warmup_requests.json'));
  writeFileSync(join(pkg, 'Dockerfile'), 'FROM nvcr.io/nvidia/tritonserver:24.10-py3\nRUN pip install transformers==4.40.2\n');
  const built = await cli(['start', '--build-image', '--weights', makeFakeWeights(work), '--repository-source', join(pkg, 'model_repository')], env, work);
  assert.equal(built.code, 0, built.stderr);
  assert.match(built.stderr, /naming to docker\.io\/library\/triton-chatglm:24\.10/);
  assert.match(built.stdout, /Triton is live/);
  assert.equal((await cli(['stop'], env, work)).code, 0);
  const noDocker = await cli(['status', '--docker', join(work, 'nope')], env, work);
  assert.equal(noDocker.code, 1);
  assert.match(noDocker.stderr, /was not found/);
  const usage = await cli(['stop', '--url', 'http://127.0.0.1:1'], env, work);
  assert.equal(usage.code, 2);
  assert.deepEqual(fake.containerIds(), []);
});
