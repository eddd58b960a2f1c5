import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { DEFAULT_MODEL_SETTINGS, instanceTotal, ModelSettingsError, renderConfig, resolveModelSettings, TRITON_QUEUE_BURST, tritonMaxBatchSize, tritonQueueSize } from '../../../src/core/repository/renderConfig';

const root = join(__dirname, '../../..');
const committed = readFileSync(join(root, 'triton/model_repository/chatglm3-6b/config.pbtxt'), 'utf8');

test('defaults reproduce the committed config.pbtxt byte for byte', () => {
  assert.equal(renderConfig(), committed);
  assert.equal(renderConfig({ ...DEFAULT_MODEL_SETTINGS }), committed);
});

test('variants change exactly the lines they own', () => {
  const out = renderConfig({
    maxBatchSize: 4, queueDelayMs: 5.5, maxQueueSize: 0, gpuIds: [1], streaming: false,
    weightsPath: '/weights/chatglm3-6b-32k', dtype: 'bfloat16', maxInputTokens: 4096, maxNewTokensLimit: 1024,
    defaultMaxNewTokens: 256, defaultTemperature: 0.95, defaultTopP: 0.7, cudaGraphs: 'off',
  });
  const diff = out.split('\n').filter((l, i) => l !== committed.split('\n')[i]);
  assert.deepEqual(diff, [
    'max_batch_size: 4',
    'model_transaction_policy { decoupled: false }',
    '  default_queue_policy { max_queue_size: 0 }',
    'instance_group [ { count: 1 kind: KIND_GPU gpus: [ 1 ] } ]',
    'parameters { key: "max_active_rows" value { string_value: "4" } }',
    'parameters { key: "max_waiting" value { string_value: "0" } }',
    'parameters { key: "idle_gather_ms" value { string_value: "5.5" } }',
    'parameters { key: "weights_path" value { string_value: "/weights/chatglm3-6b-32k" } }',
    'parameters { key: "dtype" value { string_value: "bfloat16" } }',
    'parameters { key: "cuda_graphs" value { string_value: "off" } }',
    'parameters { key: "max_input_tokens" value { string_value: "4096" } }',
    'parameters { key: "max_new_tokens_limit" value { string_value: "1024" } }',
    'parameters { key: "default_max_new_tokens" value { string_value: "256" } }',
    'parameters { key: "default_temperature" value { string_value: "0.95" } }',
    'parameters { key: "default_top_p" value { string_value: "0.7" } }',
  ]);
});

test('several GPUs: one instance group per GPU, and a burst split into batches that reach every instance', () => {
  const out = renderConfig({ gpuIds: [0, 1, 3], maxBatchSize: 8 });
  assert.match(out, /^instance_group \[\n {2}\{ count: 1 kind: KIND_GPU gpus: \[ 0 \] \},\n {2}\{ count: 1 kind: KIND_GPU gpus: \[ 1 \] \},\n {2}\{ count: 1 kind: KIND_GPU gpus: \[ 3 \] \}\n\]$/m);
  // Each instance keeps every row; one execute() takes ceil(8 / 3) requests, and warmup fits that batch.
  assert.match(out, /^max_batch_size: 3$/m);
  assert.match(out, /key: "max_active_rows" value \{ string_value: "8" \}/);
  assert.match(out, /^ {4}batch_size: 2$/m);
  assert.match(out, /^# 3 instances: a burst is split into batches of 3/m);
  assert.equal(tritonMaxBatchSize(resolveModelSettings({ gpuIds: [0, 1], instanceCount: 2, maxBatchSize: 8 })), 2);
  assert.equal(instanceTotal(resolveModelSettings({ gpuIds: [0, 1], instanceCount: 2 })), 4);
  // The hf engine generates per execute(): its batch is the generation batch of each instance, not cut.
  assert.match(renderConfig({ gpuIds: [0, 1], maxBatchSize: 8, engine: 'hf' }), /^max_batch_size: 8$/m);
  // Rows ÷ instances down to 1: the dynamic batcher goes, as for maxBatchSize 1 (its idle wait would only cost).
  const ones = renderConfig({ gpuIds: [0, 1], maxBatchSize: 2 });
  assert.match(ones, /^max_batch_size: 1$/m);
  assert.doesNotMatch(ones, /dynamic_batching/);
});

test('warmup batch never exceeds max_batch_size', () => {
  assert.match(renderConfig({ maxBatchSize: 1 }), /^ {4}batch_size: 1$/m);
  assert.match(renderConfig({ maxBatchSize: 2 }), /^ {4}batch_size: 2$/m);
});

test('max_batch_size 1 gets no dynamic batcher; larger batches get the bounded queue', () => {
  const single = renderConfig({ maxBatchSize: 1, maxQueueSize: 5 });
  assert.doesNotMatch(single, /dynamic_batching|max_queue_size/);
  const batched = renderConfig({ maxBatchSize: 2, maxQueueSize: 5, queueDelayMs: 3 });
  assert.match(batched, /^dynamic_batching \{\n {2}max_queue_delay_microseconds: 0\n {2}default_queue_policy \{ max_queue_size: 1029 \}\n\}$/m);
  // hf (per_execute): Triton's queue is the only one, so it is the setting itself
  assert.match(renderConfig({ maxBatchSize: 2, maxQueueSize: 5, engine: 'hf' }), /default_queue_policy \{ max_queue_size: 5 \}/);
});

test('queueDelayMs: the continuous scheduler gathers at an idle engine (Triton waits 0), per_execute keeps Triton\'s delay', async () => {
  const continuous = renderConfig({ queueDelayMs: 7 });
  assert.match(continuous, /^ {2}max_queue_delay_microseconds: 0$/m);
  assert.match(continuous, /^parameters \{ key: "idle_gather_ms" value \{ string_value: "7" \} \}$/m);
  const hf = renderConfig({ queueDelayMs: 7, engine: 'hf' });
  assert.match(hf, /^ {2}max_queue_delay_microseconds: 7000$/m);
  assert.doesNotMatch(hf, /key: "idle_gather_ms"/);
  // The test servers' per_execute side is patched from the committed config the same way.
  const tp = await import(pathToFileURL(join(root, 'test/support/triton-process.mjs')).href) as { patchConfigForTests(t: string, o?: object): string };
  const perExecute = tp.patchConfigForTests(committed, { scheduler: 'per_execute' });
  assert.match(perExecute, /^ {2}max_queue_delay_microseconds: 20000$/m);
  assert.doesNotMatch(perExecute, /key: "idle_gather_ms"/);
});

test('CPU instances (tests, tiny engine) render like the test helper patches them', async () => {
  const out = renderConfig({ instanceKind: 'cpu', instanceCount: 2, gpuIds: [] });
  assert.match(out, /^instance_group \[ \{ count: 2 kind: KIND_CPU \} \]$/m);
  const tp = await import(pathToFileURL(join(root, 'test/support/triton-process.mjs')).href) as { patchConfigForTests(t: string, o?: object): string; tinyEngine: string };
  assert.equal(renderConfig({ instanceKind: 'cpu', engine: tp.tinyEngine }), tp.patchConfigForTests(committed));
  assert.throws(() => renderConfig({ instanceKind: 'tpu' as never }), /instanceKind/);
});

test('engine parameter can select the test engine', () => {
  assert.match(renderConfig({ engine: 'tiny_engine:TinyEngine' }), /key: "engine" value \{ string_value: "tiny_engine:TinyEngine" \}/);
});

test('the engine picks the scheduler: hf generates per execute(), every other engine batches continuously', () => {
  const scheduler = (engine: string) => /key: "scheduler" value \{ string_value: "([a-z_]+)" \}/.exec(renderConfig({ engine }))?.[1];
  assert.equal(scheduler('native'), 'continuous');
  assert.equal(scheduler('tiny_engine:TinyEngine'), 'continuous');
  assert.equal(scheduler('hf'), 'per_execute');
  assert.equal(DEFAULT_MODEL_SETTINGS.engine, 'native');
  const hf = renderConfig({ engine: 'hf' }).split('\n');
  const lines = committed.split('\n');
  assert.deepEqual(hf.filter((l) => !lines.includes(l)), [
    '# Wait up to the queue delay to fill a batch; a full queue rejects at once instead of piling up.',
    '# Settings: tritonChatglm.queueDelayMs, tritonChatglm.maxQueueSize.',
    '  max_queue_delay_microseconds: 20000', // per_execute: Triton's dynamic batcher is its only batching
    '  default_queue_policy { max_queue_size: 32 }', // per_execute: Triton's queue is the only one
    'parameters { key: "engine" value { string_value: "hf" } }',
    'parameters { key: "scheduler" value { string_value: "per_execute" } }',
  ]);
  assert.deepEqual(lines.filter((l) => !hf.includes(l) && l.startsWith('parameters')), ['parameters { key: "engine" value { string_value: "native" } }',
    'parameters { key: "scheduler" value { string_value: "continuous" } }', 'parameters { key: "idle_gather_ms" value { string_value: "20" } }']);
});

test('maxBatchSize and maxQueueSize also bound the continuous scheduler (max_active_rows, max_waiting)', () => {
  const out = renderConfig({ maxBatchSize: 16, maxQueueSize: 100 });
  assert.match(out, /^max_batch_size: 16$/m);
  assert.match(out, /^parameters \{ key: "max_active_rows" value \{ string_value: "16" \} \}$/m);
  assert.match(out, /max_queue_size: 1124 \}/); // max_waiting + TRITON_QUEUE_BURST: the model's bound refuses first
  assert.equal(tritonQueueSize({ maxQueueSize: 100, engine: 'native' }), 100 + TRITON_QUEUE_BURST);
  assert.equal(tritonQueueSize({ maxQueueSize: 0, engine: 'native' }), 0);
  assert.match(out, /^parameters \{ key: "max_waiting" value \{ string_value: "100" \} \}$/m);
});

test('invalid settings are rejected with every bad field named', () => {
  const bad = () => renderConfig({
    maxBatchSize: 0, queueDelayMs: -1, maxQueueSize: 1.5, gpuIds: [], instanceCount: 99,
    weightsPath: '/w" } } parameters { key: "EXECUTION_ENV_PATH', dtype: 'int4' as never, maxNewTokensLimit: 100,
    defaultMaxNewTokens: 512, defaultTemperature: Number.NaN, defaultTopP: 0, engine: 'x; rm', cudaGraphs: 'on' as never,
  });
  assert.throws(bad, (e: unknown) => {
    assert.ok(e instanceof ModelSettingsError);
    assert.equal(e.code, 'settings-invalid');
    assert.deepEqual(e.issues.map((i) => i.field).sort(), [
      'cudaGraphs', 'defaultMaxNewTokens', 'defaultTemperature', 'defaultTopP', 'dtype', 'engine', 'gpuIds', 'instanceCount',
      'maxBatchSize', 'maxQueueSize', 'queueDelayMs', 'weightsPath',
    ]);
    assert.match(e.message, /maxBatchSize: must be a whole number from 1 to 64 \(got 0\)/);
    return true;
  });
  assert.throws(() => renderConfig({ gpuIds: [1, 1] }), /distinct/);
  assert.throws(() => renderConfig({ weightsPath: 'relative/path' }), /absolute path/);
  assert.throws(() => renderConfig({ weightsPath: '/weights/../etc' }), /weightsPath/);
  assert.throws(() => renderConfig({ weightsPath: '/w\nx' }), /weightsPath/);
});

test('resolveModelSettings fills defaults and ignores undefined fields', () => {
  const s = resolveModelSettings({ maxBatchSize: 2, gpuIds: undefined });
  assert.equal(s.maxBatchSize, 2);
  assert.deepEqual(s.gpuIds, [0]);
  assert.equal(s.defaultTemperature, 0.8);
  assert.equal(resolveModelSettings({ defaultTemperature: 0 }).defaultTemperature, 0);
});
