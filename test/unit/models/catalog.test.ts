// The model catalog as the extension reads it (src/core/models/catalog.ts) from the same file the engine reads
// (triton/tests/test_catalog.py checks the Python side): validated, consistent, and agreeing with the memory plan.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { catalogModel, catalogSchema, DEFAULT_MODEL_ID, isPinnedCommit, kvBytesPerToken, MODEL_CATALOG } from '../../../src/core/models/catalog';
import { CHATGLM3_6B_CONFIG, modelWeightBytes, planModelConfig } from '../../../src/core/server/memoryPlan';

const CATALOG_FILE = join(__dirname, '..', '..', '..', 'triton', 'model_repository', 'chatglm3-6b', '1', 'chatglm', 'catalog.json');
const raw = () => JSON.parse(readFileSync(CATALOG_FILE, 'utf8')) as { models: Array<Record<string, unknown>> };

test('the bundled catalog is the committed file, and lists the three models', () => {
  assert.deepEqual(MODEL_CATALOG, catalogSchema.parse(raw()));
  assert.deepEqual(MODEL_CATALOG.models.map((m) => m.id), ['chatglm3-6b', 'glm-4-9b-chat', 'codegeex4-all-9b']);
  assert.equal(DEFAULT_MODEL_ID, 'chatglm3-6b');
  assert.equal(catalogModel('nope'), undefined);
});

test('each model has its published shape and tokenizer', () => {
  const shape = MODEL_CATALOG.models.map((m) => [m.id, m.config.num_layers, m.config.padded_vocab_size, 10000 * m.config.rope_ratio, m.config.seq_length, kvBytesPerToken(m.config), m.tokenizer]);
  assert.deepEqual(shape, [
    ['chatglm3-6b', 28, 65024, 10000, 8192, 28 * 1024, 'sentencepiece'],
    ['glm-4-9b-chat', 40, 151552, 5_000_000, 131072, 40 * 1024, 'tiktoken'],
    ['codegeex4-all-9b', 40, 151552, 5_000_000, 131072, 40 * 1024, 'tiktoken'],
  ]);
  assert.deepEqual(catalogModel('glm-4-9b-chat')?.prompt.prefix, ['[gMASK]', '<sop>']);
  assert.deepEqual(catalogModel('chatglm3-6b')?.prompt.prefix, ['[gMASK]', 'sop']);
  assert.deepEqual(catalogModel('glm-4-9b-chat')?.stopIds, [151329, 151336, 151338]);
  assert.equal(catalogModel('codegeex4-all-9b')?.fillInMiddle, true);
});

test('GLM-4-9B-Chat is pinned to a THUDM-format commit; the others follow their branch', () => {
  assert.ok(isPinnedCommit(catalogModel('glm-4-9b-chat')!.hub.revision));
  assert.equal(catalogModel('codegeex4-all-9b')?.hub.revision, 'main');
  assert.equal(catalogModel('chatglm3-6b')?.hub.testedCommit, '456aa875cf1f46623006edaa23103774ea9c0eae');
});

test('licences: name, URL, terms in both languages; CodeGeeX4 commercial use after registration', () => {
  for (const m of MODEL_CATALOG.models) {
    assert.match(m.license.url, /^https:\/\/huggingface\.co\/THUDM\//);
    assert.ok(m.license.keyTerms.en.length > 40 && /[\u4e00-\u9fff]/.test(m.license.keyTerms['zh-cn']));
  }
  assert.equal(catalogModel('codegeex4-all-9b')?.license.commercialUse, 'after-registration');
});

test('the memory plan reads each model\'s config from the catalog; weights match the download sizes', () => {
  assert.deepEqual(planModelConfig('chatglm3-6b'), CHATGLM3_6B_CONFIG);
  for (const m of MODEL_CATALOG.models) {
    const weights = modelWeightBytes(planModelConfig(m.id)!, m.weightsDtype, 'none');
    if (m.downloadBytes !== null) assert.ok(m.downloadBytes - weights > 0 && m.downloadBytes - weights < weights / 1000, m.id);
  }
});

test('a malformed entry is refused, naming what is wrong', () => {
  const broken = (change: (m: Record<string, unknown>) => void) => {
    const c = raw();
    change(c.models[1]!);
    return catalogSchema.safeParse(c);
  };
  const stops = broken((m) => { m.stopIds = [151329]; });
  assert.ok(!stops.success && /glm-4-9b-chat: stopIds must be 151329, 151336, 151338/.test(stops.error.message));
  const kind = broken((m) => { m.tokenizer = 'bpe'; });
  assert.ok(!kind.success && kind.error.issues.some((i) => i.path.join('.') === 'models.1.tokenizer'));
  const extra = broken((m) => { (m.config as Record<string, unknown>).sliding_window = 4096; });
  assert.ok(!extra.success);
  const dup = catalogSchema.safeParse({ ...raw(), models: [raw().models[0], raw().models[0]] });
  assert.ok(!dup.success && /unique/.test(dup.error.message));
});
