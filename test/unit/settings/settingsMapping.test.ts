import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderConfig } from '../../../src/core/repository';
import { resolveSettings } from '../../../src/core/server';
import { parseSettings } from '../../../src/core/settings/settingsParser';
import { containerGpuIds, modelGpus, toModelSettings, toServerSettings } from '../../../src/core/settings/settingsMapping';

const defaults = parseSettings(() => undefined, true).settings;

test('default settings are accepted by the container layer and bind to loopback', () => {
  const s = resolveSettings(toServerSettings({ ...defaults, weightsPath: '/data/chatglm3-6b' }, '/storage/model_repository'));
  assert.equal(s.bindAddress, '127.0.0.1');
  assert.equal(s.gpuIds, 'all');
  assert.equal(s.repositoryPath, '/storage/model_repository');
  assert.equal(s.image, defaults.image);
});

test('default model settings render the committed default config', () => {
  assert.equal(renderConfig(toModelSettings(defaults)), renderConfig({}));
});

test('the engine setting offers the native engine only (the HF engine is test-only) and reaches the model config', () => {
  assert.equal(defaults.engine, 'native');
  assert.match(renderConfig(toModelSettings(defaults)), /key: "scheduler" value \{ string_value: "continuous" \}/);
  assert.equal(parseSettings((k) => (k === 'engine' ? { globalValue: 'hf' } : undefined), true).settings.engine, 'native');
});

test('the model setting picks the entry, its name and its weights folder; an unknown model falls back to the default', () => {
  assert.equal(defaults.model, 'chatglm3-6b');
  const glm4 = { ...defaults, model: 'glm-4-9b-chat', weightsPath: '/data/glm4' };
  const cfg = renderConfig(toModelSettings(glm4));
  assert.match(cfg, /^name: "glm-4-9b-chat"$/m);
  assert.match(cfg, /key: "weights_path" value \{ string_value: "\/weights\/glm-4-9b-chat" \}/);
  assert.equal(toServerSettings(glm4, '/repo').model, 'glm-4-9b-chat');
  assert.equal(parseSettings((k) => (k === 'model' ? { globalValue: 'gpt-4' } : undefined), true).settings.model, 'chatglm3-6b');
});

test('gpus: host ids go to docker, one model instance per GPU (renumbered from 0) to the model config', () => {
  const s = { ...defaults, gpus: ['2', '3'], maxBatchSize: 4 };
  assert.deepEqual(toServerSettings(s, '/r').gpuIds, ['2', '3']);
  assert.deepEqual(containerGpuIds(['2', '3']), [0, 1]);
  assert.deepEqual(containerGpuIds([]), [0]);
  const config = renderConfig(toModelSettings(s));
  assert.match(config, /^instance_group \[\n {2}\{ count: 1 kind: KIND_GPU gpus: \[ 0 \] \},\n {2}\{ count: 1 kind: KIND_GPU gpus: \[ 1 \] \}\n\]$/m);
  assert.match(config, /key: "max_active_rows" value \{ string_value: "4" \}/);
  assert.match(config, /^max_batch_size: 2$/m);
});

test('the deprecated gpuIds and instanceCount keep working while gpus is empty; gpus wins over gpuIds', () => {
  const old = { ...defaults, gpuIds: ['2', '3'], instanceCount: 2 };
  assert.deepEqual(modelGpus(old), ['2', '3']);
  assert.deepEqual(toServerSettings(old, '/r').gpuIds, ['2', '3']);
  assert.match(renderConfig(toModelSettings(old)), /\{ count: 2 kind: KIND_GPU gpus: \[ 1 \] \}/);
  const both = { ...defaults, gpus: ['5'], gpuIds: ['2', '3'] };
  assert.deepEqual(toServerSettings(both, '/r').gpuIds, ['5']);
  assert.match(renderConfig(toModelSettings(both)), /^instance_group \[ \{ count: 1 kind: KIND_GPU gpus: \[ 0 \] \} \]$/m);
});

test('setting a deprecated key is reported with its replacement; the new key and defaults are not', () => {
  const values: Record<string, unknown> = { gpuIds: ['1'], instanceCount: 2, gpus: ['0'] };
  const { settings, problems } = parseSettings((k) => ({ globalValue: values[k] }), true);
  assert.deepEqual(settings.gpuIds, ['1']);
  assert.equal(settings.instanceCount, 2);
  assert.deepEqual(problems, [
    { key: 'gpuIds', kind: 'deprecated', use: 'gpus' },
    { key: 'instanceCount', kind: 'deprecated', use: 'gpus' },
  ]);
  assert.deepEqual(parseSettings((k) => ({ globalValue: k === 'gpus' ? ['0', '1'] : undefined }), true).problems, []);
});

test('the settings object is not shared with the core (no aliasing of arrays)', () => {
  const s = { ...defaults, gpuIds: ['1'] };
  const mapped = toServerSettings(s, '/r');
  (mapped.gpuIds as string[]).push('9');
  assert.deepEqual(s.gpuIds, ['1']);
});
