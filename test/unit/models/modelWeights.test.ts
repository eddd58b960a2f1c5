// Per-model weights (#29): which catalog model a checkpoint's config.json is, the weights check refusing another
// model's folder naming both, and the resolution a/b/c — `weightsPath` when it holds the chosen model, else the
// model's newest complete snapshot in the Hub cache, else none — also as the session applies it at a start.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { catalogModel, checkpointServes, identifyCheckpoint, type CatalogModel } from '../../../src/core/models';
import { resolveModelWeights, validateWeights, WeightsError } from '../../../src/core/server';
import { catalogConfigJson } from '../../support/catalogConfig';
import { harness } from '../session/fakes';

const model = (id: string): CatalogModel => catalogModel(id)!;
const CHATGLM3 = model('chatglm3-6b');
const GLM4 = model('glm-4-9b-chat');
const CODEGEEX4 = model('codegeex4-all-9b');
const fixtureConfig = (name: string): unknown => JSON.parse(readFileSync(join(__dirname, '../../../../shared/fixtures', name, 'config.json'), 'utf8'));

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'model-weights-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function checkpoint(dir: string, config: unknown): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  writeFileSync(join(dir, 'tokenizer.model'), 'x');
  writeFileSync(join(dir, 'model.safetensors'), 'x');
  return dir;
}

/** A snapshot as the Hub's tools leave it: <cache>/models--ORG--NAME/snapshots/<commit>/. */
function cached(cache: string, repo: string, commit: string, config: unknown, mtime?: number): string {
  const dir = checkpoint(join(cache, `models--${repo.replace('/', '--')}`, 'snapshots', commit), config);
  if (mtime !== undefined) utimesSync(dir, mtime, mtime);
  return dir;
}

test('a config.json names its catalog model by shape; another size of the same architecture stands for that family', () => {
  for (const id of ['chatglm3-6b', 'glm-4-9b-chat', 'codegeex4-all-9b']) {
    const identity = identifyCheckpoint(catalogConfigJson(id));
    assert.equal(identity.kind === 'model' && identity.model.id, id);
  }
  // GLM-4 writes num_hidden_layers beside num_layers; ChatGLM3 has no rope_ratio (1).
  const { rope_ratio: _r, ...chatglm3 } = catalogConfigJson('chatglm3-6b');
  assert.equal(checkpointServes(identifyCheckpoint(chatglm3), CHATGLM3), true);
  // The tiny fixtures: ChatGLM3's architecture, and GLM-4's (which CodeGeeX4 shares).
  const tiny3 = identifyCheckpoint(fixtureConfig('chatglm3-tiny'));
  assert.deepEqual(tiny3.kind === 'family' && tiny3.models.map((m) => m.id), ['chatglm3-6b']);
  const tiny4 = identifyCheckpoint(fixtureConfig('glm4-tiny'));
  assert.deepEqual(tiny4.kind === 'family' && tiny4.models.map((m) => m.id), ['glm-4-9b-chat', 'codegeex4-all-9b']);
  assert.equal(checkpointServes(tiny4, CHATGLM3), false);
  // Not ChatGLM's layout (transformers' own GLM), another rotary base, nothing at all: unknown.
  assert.equal(identifyCheckpoint({ ...catalogConfigJson('glm-4-9b-chat'), model_type: 'glm', architectures: ['GlmForCausalLM'] }).kind, 'unknown');
  assert.equal(identifyCheckpoint({ ...catalogConfigJson('chatglm3-6b'), rope_ratio: 50, num_layers: 2 }).kind, 'unknown');
  assert.equal(identifyCheckpoint({ model_type: 'chatglm' }).kind, 'unknown');
  assert.equal(identifyCheckpoint(null).kind, 'unknown');
});

test('the weights check refuses another model\'s folder, naming what it holds and what is chosen', async (t) => {
  const dir = checkpoint(join(tempDir(t), 'glm4'), catalogConfigJson('glm-4-9b-chat'));
  await validateWeights(dir, GLM4);
  const refused = await validateWeights(dir, CHATGLM3).then(() => undefined, (e: unknown) => e);
  assert.ok(refused instanceof WeightsError);
  assert.deepEqual(refused.problems, ['other-model']);
  assert.equal(refused.holds, 'GLM-4-9B-Chat');
  assert.equal(refused.chosen, 'ChatGLM3-6B');
  assert.match(refused.message, /is not a ChatGLM3-6B checkpoint: it holds GLM-4-9B-Chat/);
  assert.match(refused.fix, /THUDM\/chatglm3-6b/);
  // CodeGeeX4 and GLM-4 differ in their epsilon only: the exact shape tells them apart.
  await assert.rejects(validateWeights(dir, CODEGEEX4), /not a CodeGeeX4-ALL-9B checkpoint: it holds GLM-4-9B-Chat/);
  const unknown = checkpoint(join(tempDir(t), 'unknown'), { model_type: 'chatglm', num_layers: 2 });
  await assert.rejects(validateWeights(unknown, CHATGLM3), (e: unknown) => e instanceof WeightsError && e.problems.includes('other-model') && e.holds === undefined && /shape the catalog does not list/.test(e.message));
});

test('resolution: (a) weightsPath holding the chosen model, else (b) its newest complete cache snapshot, else (c) none', async (t) => {
  const root = tempDir(t);
  const folder3 = checkpoint(join(root, 'chatglm3'), catalogConfigJson('chatglm3-6b'));
  const cache = join(root, 'hub');
  const older = cached(cache, 'THUDM/glm-4-9b-chat', 'a'.repeat(40), catalogConfigJson('glm-4-9b-chat'), 1_000_000);
  const newer = cached(cache, 'zai-org/glm-4-9b-chat', 'b'.repeat(40), catalogConfigJson('glm-4-9b-chat'), 2_000_000);
  // An incomplete one (no weight files) is not a candidate; another model's repository is never looked at.
  const broken = cached(cache, 'THUDM/glm-4-9b-chat', 'c'.repeat(40), catalogConfigJson('glm-4-9b-chat'), 3_000_000);
  rmSync(join(broken, 'model.safetensors'));
  cached(cache, 'THUDM/codegeex4-all-9b', 'd'.repeat(40), catalogConfigJson('glm-4-9b-chat'));

  // (a) ChatGLM3 chosen, its folder set: the folder.
  assert.deepEqual(await resolveModelWeights(CHATGLM3, folder3, [cache]), { source: 'setting', path: folder3 });
  // (b) GLM-4 chosen, the same setting: the cache's newest complete GLM-4 snapshot, under either repository name.
  const glm4 = await resolveModelWeights(GLM4, folder3, [cache]);
  assert.equal(glm4.source, 'cache');
  assert.equal(glm4.source === 'cache' && glm4.path, newer);
  assert.notEqual(glm4.source === 'cache' && glm4.path, older);
  // (a) again when the setting holds GLM-4 itself, even with a cache beside it.
  assert.deepEqual(await resolveModelWeights(GLM4, older, [cache]), { source: 'setting', path: older });
  // (c) CodeGeeX4: its repository holds a GLM-4 config (not CodeGeeX4's shape), the folder holds ChatGLM3.
  assert.deepEqual(await resolveModelWeights(CODEGEEX4, folder3, [cache]), { source: 'none' });
  // (c) ChatGLM3 with no setting and nothing cached.
  assert.deepEqual(await resolveModelWeights(CHATGLM3, '', [cache]), { source: 'none' });
});

test('a start with GLM-4 chosen and weightsPath on ChatGLM3 mounts the cached GLM-4 snapshot; switching back needs no edit', async (t) => {
  const root = tempDir(t);
  const folder3 = checkpoint(join(root, 'chatglm3'), catalogConfigJson('chatglm3-6b'));
  const cache = join(root, 'hub');
  const snapshot = cached(cache, 'THUDM/glm-4-9b-chat', 'e'.repeat(40), catalogConfigJson('glm-4-9b-chat'));
  const h = harness({ weightsPath: folder3, model: 'glm-4-9b-chat', weightsCaches: [cache] });
  await h.session.start({ offerLoad: false });
  const server = h.created.at(-1)!;
  assert.equal(server.weightsPath, snapshot);
  assert.equal(h.installed.at(-1)!.weightsPath, `/weights/hub-repository/snapshots/${'e'.repeat(40)}`);
  await h.session.stop();
  h.choose('chatglm3-6b');
  await h.session.start({ offerLoad: false });
  assert.equal(h.created.at(-1)!.weightsPath, folder3);
  // The configured model settings are left as they are (this fake's carry no weights path of their own).
  assert.equal(h.installed.at(-1)!.weightsPath, undefined);
});
