import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { installRepository } from '../../../src/core/repository/install';
import { ModelSettingsError, renderConfig } from '../../../src/core/repository/renderConfig';

const root = join(__dirname, '../../..');
const realSource = join(root, 'triton/model_repository');

/** A private copy of triton/ (model_repository + warmup_requests.json) plus a __pycache__ to be skipped. */
function fixture(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'install-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const source = join(dir, 'triton/model_repository');
  cpSync(realSource, source, { recursive: true, filter: (p) => !p.includes('__pycache__') });
  cpSync(join(root, 'triton/warmup_requests.json'), join(dir, 'triton/warmup_requests.json'));
  mkdirSync(join(source, 'chatglm3-6b/1/__pycache__'), { recursive: true });
  writeFileSync(join(source, 'chatglm3-6b/1/__pycache__/model.cpython-311.pyc'), 'x');
  writeFileSync(join(source, 'chatglm3-6b/1/stray.pyc'), 'x');
  return { source, destination: join(dir, 'storage/model_repository'), dir };
}

function listTree(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listTree(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]).sort();
}

test('first install copies the repository, renders config and warmup, skips byte-code caches', async (t) => {
  const { source, destination, dir } = fixture(t);
  const res = await installRepository({ source, destination, settings: { maxBatchSize: 4 } });
  assert.equal(res.path, destination);
  assert.equal(res.modelPath, join(destination, 'chatglm3-6b'));
  const tree = listTree(destination);
  assert.deepEqual(res.changed, tree);
  assert.ok(tree.includes('chatglm3-6b/1/model.py'));
  assert.ok(tree.includes('chatglm3-6b/warmup/prompt.bin'));
  assert.ok(!tree.some((p) => p.includes('__pycache__') || p.endsWith('.pyc')));
  assert.equal(readFileSync(join(destination, 'chatglm3-6b/config.pbtxt'), 'utf8'), renderConfig({ maxBatchSize: 4 }));
  for (const f of readdirSync(join(source, 'chatglm3-6b/warmup'))) {
    assert.deepEqual(readFileSync(join(destination, 'chatglm3-6b/warmup', f)), readFileSync(join(source, 'chatglm3-6b/warmup', f)), f);
  }
  // No temporary directories left next to the destination.
  assert.deepEqual(readdirSync(join(dir, 'storage')), ['model_repository']);
});

test('a second install with the same settings changes nothing (mtimes kept); a new setting rewrites only config', async (t) => {
  const { source, destination } = fixture(t);
  await installRepository({ source, destination });
  // Pin every mtime to the past so any rewrite is visible.
  const past = new Date('2020-01-01T00:00:00Z');
  for (const p of listTree(destination)) utimesSync(join(destination, p), past, past);
  const again = await installRepository({ source, destination });
  assert.deepEqual(again.changed, []);
  for (const p of listTree(destination)) assert.equal(statSync(join(destination, p)).mtimeMs, past.getTime(), p);

  const changed = await installRepository({ source, destination, settings: { maxQueueSize: 8 } });
  assert.deepEqual(changed.changed, ['chatglm3-6b/config.pbtxt', 'codegeex4-all-9b/config.pbtxt', 'glm-4-9b-chat/config.pbtxt']);
  assert.match(readFileSync(join(destination, 'chatglm3-6b/config.pbtxt'), 'utf8'), /max_queue_size: 1032 /);
  assert.equal(statSync(join(destination, 'chatglm3-6b/1/model.py')).mtimeMs, past.getTime());
  assert.ok(!readdirSync(join(destination, 'chatglm3-6b')).some((n) => n.includes('.tmp-')));
});

test('updates replace changed source files and remove files gone from the source; foreign entries stay', async (t) => {
  const { source, destination } = fixture(t);
  writeFileSync(join(source, 'chatglm3-6b/1/old_helper.py'), '# old');
  await installRepository({ source, destination });
  mkdirSync(join(destination, 'someone_elses_model'));
  writeFileSync(join(destination, 'someone_elses_model/config.pbtxt'), 'x');
  rmSync(join(source, 'chatglm3-6b/1/old_helper.py'));
  writeFileSync(join(source, 'chatglm3-6b/1/model.py'), readFileSync(join(source, 'chatglm3-6b/1/model.py'), 'utf8') + '\n# v2\n');
  const res = await installRepository({ source, destination });
  assert.deepEqual(res.changed.sort(), ['chatglm3-6b', 'codegeex4-all-9b', 'glm-4-9b-chat'].flatMap((e) => [`${e}/1/model.py`, `${e}/1/old_helper.py`]));
  assert.ok(!existsSync(join(destination, 'chatglm3-6b/1/old_helper.py')));
  assert.match(readFileSync(join(destination, 'chatglm3-6b/1/model.py'), 'utf8'), /# v2/);
  assert.ok(existsSync(join(destination, 'someone_elses_model/config.pbtxt')));
});

test('a damaged installed file is repaired', async (t) => {
  const { source, destination } = fixture(t);
  await installRepository({ source, destination });
  writeFileSync(join(destination, 'chatglm3-6b/warmup/prompt.bin'), 'garbage');
  const res = await installRepository({ source, destination });
  assert.deepEqual(res.changed, ['chatglm3-6b/warmup/prompt.bin']);
  assert.deepEqual(readFileSync(join(destination, 'chatglm3-6b/warmup/prompt.bin')), readFileSync(join(source, 'chatglm3-6b/warmup/prompt.bin')));
});

test('invalid settings fail before anything is written; a wrong source is named', async (t) => {
  const { source, destination, dir } = fixture(t);
  await assert.rejects(installRepository({ source, destination, settings: { maxBatchSize: 0 } }), ModelSettingsError);
  assert.ok(!existsSync(destination));
  await assert.rejects(installRepository({ source: dir, destination }), /no chatglm3-6b\/1\/model\.py/);
});

test('concurrent first installs both succeed with one consistent result', async (t) => {
  const { source, destination } = fixture(t);
  const [a, b] = await Promise.all([installRepository({ source, destination }), installRepository({ source, destination })]);
  assert.equal(a.path, b.path);
  assert.equal(readFileSync(join(destination, 'chatglm3-6b/config.pbtxt'), 'utf8'), renderConfig());
  assert.ok(!readdirSync(join(destination, '..')).some((n) => n.includes('.tmp-')));
});

test('one entry per catalog model from the one code tree: its own config (name, weights folder), the chosen one gets the settings\' weights', async (t) => {
  const { source, destination } = fixture(t);
  const res = await installRepository({ source, destination, settings: { model: 'glm-4-9b-chat', weightsPath: '/weights/hub-repository/snapshots/abc' } });
  assert.deepEqual(res.entries, ['chatglm3-6b', 'glm-4-9b-chat', 'codegeex4-all-9b']);
  assert.equal(res.modelPath, join(destination, 'glm-4-9b-chat'));
  assert.deepEqual(readdirSync(destination).sort(), ['chatglm3-6b', 'codegeex4-all-9b', 'glm-4-9b-chat']);
  const code = listTree(join(destination, 'chatglm3-6b/1'));
  for (const entry of res.entries) {
    assert.deepEqual(listTree(join(destination, entry, '1')), code, `${entry}: the same code`);
    assert.deepEqual(readFileSync(join(destination, entry, '1/model.py')), readFileSync(join(source, 'chatglm3-6b/1/model.py')));
    const cfg = readFileSync(join(destination, entry, 'config.pbtxt'), 'utf8');
    assert.match(cfg, new RegExp(`^name: "${entry}"$`, 'm'));
    assert.ok(existsSync(join(destination, entry, 'warmup/prompt.bin')));
  }
  assert.equal(readFileSync(join(destination, 'glm-4-9b-chat/config.pbtxt'), 'utf8'),
    renderConfig({ model: 'glm-4-9b-chat', weightsPath: '/weights/hub-repository/snapshots/abc' }));
  assert.match(readFileSync(join(destination, 'chatglm3-6b/config.pbtxt'), 'utf8'), /key: "weights_path" value \{ string_value: "\/weights\/chatglm3-6b" \}/);
  assert.match(readFileSync(join(destination, 'glm-4-9b-chat/config.pbtxt'), 'utf8'), /^# GLM-4-9B-Chat on Triton's Python backend/m);
  await assert.rejects(installRepository({ source, destination, settings: { model: 'gpt-4' } }), ModelSettingsError);
});
