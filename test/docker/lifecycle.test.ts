// The CLI's whole lifecycle on a real Docker Engine (the stage's private dockerd) with the CPU serving image:
// status → start → load → streamed chat → stats → logs → unload → stop → start again → restart. The CLI's own
// `docker run` arguments run unchanged (--gpus through the stub NVIDIA hook, the ulimits, -p 127.0.0.1:H:C).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../fake-docker/harness';
import { buildCli, cli, makeWeights, realDocker, type RealDocker } from './harness';

let rd: RealDocker;
before(async () => { await buildCli(); rd = await realDocker(); });
after(async () => { await rd?.release(); });

/** Our containers (by the managed label), as the CLI finds them. */
function managed(): { id: string; state: string; image: string }[] {
  const r = rd.docker(['ps', '-a', '--no-trunc', '--filter', 'label=triton-chatglm.managed=1', '--format', '{{json .}}']);
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter(Boolean).map((l) => {
    const o = JSON.parse(l) as { ID: string; State: string; Image: string };
    return { id: o.ID, state: o.State, image: o.Image };
  });
}

test('CLI lifecycle on real docker: status, start, load, chat, stats, logs, unload, stop, start again, restart', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'docker-life-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...rd.env,
    TRITON_CHATGLM_DOCKER: rd.dockerPath,
    TRITON_CHATGLM_IMAGE: rd.image,
    TRITON_CHATGLM_CONTAINER: 'triton-chatglm-life',
    TRITON_CHATGLM_PORT: String(port),
    TRITON_CHATGLM_GRPC_PORT: String(await freePort()),
    TRITON_CHATGLM_METRICS_PORT: String(await freePort()),
    TRITON_CHATGLM_REPOSITORY: join(work, 'model_repository'),
  };
  const weights = makeWeights(work);
  const run = (...args: string[]) => cli(args, env, work);

  await t.test('status before start: no container, exit 3', async () => {
    const r = await run('status');
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /container: none/);
  });

  let firstId = '';
  await t.test('start runs the image on the real engine and waits until live', async () => {
    const r = await run('start', '--weights', weights);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Triton is live at http://127\\.0\\.0\\.1:${port}`));
    const ours = managed();
    assert.equal(ours.length, 1);
    assert.equal(ours[0].state, 'running');
    assert.equal(ours[0].image, rd.image);
    firstId = ours[0].id;
    // Published on loopback only, as the CLI asked.
    const ports = rd.docker(['port', firstId, '8000/tcp']);
    assert.equal(ports.stdout.trim(), `127.0.0.1:${port}`);
    const again = await run('start', '--weights', weights);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /already running/);
    assert.equal(managed().length, 1);
  });

  await t.test('the image runs as uid 1000 unless told otherwise; the server runs as the container\'s user', () => {
    const plain = rd.docker(['run', '--rm', rd.image, 'id', '-u']);
    assert.equal(plain.status, 0, plain.stderr);
    assert.equal(plain.stdout.trim(), '1000');
    const user = rd.docker(['inspect', '--format', '{{.Config.User}}', firstId]).stdout.trim();
    // The container's first process (our tritonserver wrapper, parent of the real one) runs as that user.
    const uid = rd.docker(['exec', firstId, 'stat', '-c', '%u', '/proc/1']).stdout.trim();
    assert.equal(uid, user === '' || user === 'triton-server' ? '1000' : user.split(':')[0]);
    assert.match(rd.docker(['exec', firstId, 'cat', '/proc/1/cmdline']).stdout, /tritonserver/);
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
    const r = await run('chat', 'Hello', 'there', '--history', history, '--max-new-tokens', '8', '-v');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.trim().length > 0, 'an answer was printed');
    assert.match(r.stderr, /\[(length|stop); \d+ prompt \+ \d+ answer tokens/);
    const saved = JSON.parse(readFileSync(history, 'utf8')) as { role: string; content: string }[];
    assert.deepEqual(saved.map((m) => m.role), ['user', 'assistant']);
    assert.equal(saved[1].content, r.stdout.replace(/\n$/, ''));
  });

  await t.test('stats counts the request', async () => {
    const r = await run('stats', '--json');
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout);
    assert.equal(s.model, 'chatglm3-6b');
    assert.ok(s.inferenceCount >= 1, r.stdout);
    assert.ok(s.scheduler.totals.generatedTokens > 0, r.stdout);
  });

  await t.test('logs prints the container log (docker logs of the real container)', async () => {
    const r = await run('logs', '--tail', '200');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /successfully loaded 'chatglm3-6b'/);
  });

  await t.test('unload, then chat says to load', async () => {
    const r = await run('unload');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /unloaded/);
    const c = await run('chat', 'hi');
    assert.equal(c.code, 1);
    assert.match(c.stderr, /triton-chatglm load/);
  });

  await t.test('stop removes the container; status says none', async () => {
    const r = await run('stop');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /stopped and removed/);
    assert.deepEqual(managed(), []);
    assert.equal((await run('status')).code, 3);
  });

  let secondId = '';
  await t.test('start again: a new container on the same ports; load and chat', async () => {
    const r = await run('start', '--weights', weights);
    assert.equal(r.code, 0, r.stderr);
    const ours = managed();
    assert.equal(ours.length, 1);
    assert.notEqual(ours[0].id, firstId);
    secondId = ours[0].id;
    assert.equal((await run('load')).code, 0);
    const c = await run('chat', 'again', '--max-new-tokens', '4');
    assert.equal(c.code, 0, c.stderr);
    assert.ok(c.stdout.trim().length > 0);
  });

  await t.test('restart replaces the running container with a new live one', async () => {
    const r = await run('restart', '--weights', weights);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Triton is live/);
    const ours = managed();
    assert.equal(ours.length, 1);
    assert.notEqual(ours[0].id, secondId);
    assert.equal(ours[0].state, 'running');
    const s = await run('status', '--json');
    assert.equal(JSON.parse(s.stdout).live, true);
    assert.equal((await run('stop')).code, 0);
    assert.deepEqual(managed(), []);
  });
});
