// Reading nvidia-smi's CSV and judging whether one copy of the model fits on the GPUs a start would use.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHATGLM3_FP16_MIB, gib, gpuMemoryProblem, parseNvidiaSmi, selectedGpus } from '../../../src/core/server';

// What `nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.free --format=csv,noheader,nounits` prints.
const TWO_GPUS = [
  '0, GPU-3b0c7a36-1f25-9a1d-44a1-0d3c2a1b9e11, NVIDIA A100-SXM4-40GB, 40960, 40327',
  '1, GPU-8f2e4c1d-7a6b-4e3f-9d2c-1b0a9f8e7d6c, NVIDIA GeForce RTX 3060, 12288, 3120',
  '',
].join('\n');

test('parses every GPU row and skips what is not one', () => {
  const gpus = parseNvidiaSmi(`${TWO_GPUS}No devices were found\n`);
  assert.equal(gpus.length, 2);
  assert.deepEqual(gpus[1], { index: '1', uuid: 'GPU-8f2e4c1d-7a6b-4e3f-9d2c-1b0a9f8e7d6c', name: 'NVIDIA GeForce RTX 3060', totalMiB: 12288, freeMiB: 3120 });
  assert.deepEqual(parseNvidiaSmi('[N/A], x, y, z, w\n'), []);
});

test('all GPUs given: the model goes to the first; listed ids are found by index or UUID, unknown ones reported', () => {
  const gpus = parseNvidiaSmi(TWO_GPUS);
  assert.deepEqual(selectedGpus(gpus, 'all').selected.map((g) => g.index), ['0']);
  assert.deepEqual(selectedGpus(gpus, ['GPU-8f2e4c1d-7a6b-4e3f-9d2c-1b0a9f8e7d6c', '0']).selected.map((g) => g.index), ['1', '0']);
  assert.deepEqual(selectedGpus(gpus, ['0', '7']).missing, ['7']);
});

test('a verdict only where the model does not fit, naming each GPU that is short', () => {
  const gpus = parseNvidiaSmi(TWO_GPUS);
  assert.equal(gpuMemoryProblem(gpus, 'all', CHATGLM3_FP16_MIB), undefined);
  assert.equal(gpuMemoryProblem(gpus, ['0'], CHATGLM3_FP16_MIB), undefined);
  const short = gpuMemoryProblem(gpus, ['0', '1'], CHATGLM3_FP16_MIB);
  assert.equal(short?.code, 'gpu-memory-low');
  assert.match(short?.message ?? '', /^GPU 1 \(NVIDIA GeForce RTX 3060\) has 3\.0 GB free of 12\.0 GB; the model needs about 12\.7 GB\.$/);
  assert.match(gpuMemoryProblem(gpus, ['7'], CHATGLM3_FP16_MIB)?.message ?? '', /No GPU with the id 7.*lists 0, 1/);
  assert.match(gpuMemoryProblem([], 'all', CHATGLM3_FP16_MIB)?.message ?? '', /lists no GPU/);
  // No GPU: the fix names what the chosen model needs (GLM-4-9B needs more than ChatGLM3-6B), not ChatGLM3's 13 GB.
  assert.equal(gpuMemoryProblem([], 'all', 20_000)?.fix, 'Check the NVIDIA driver (`nvidia-smi`); the model needs a GPU with about 19.5 GB of memory.');
  // Free memory alone is short (the card is big enough): close what uses it.
  const busy = gpuMemoryProblem([{ index: '0', uuid: 'GPU-a', name: 'A10', totalMiB: 23028, freeMiB: 9000 }], 'all', CHATGLM3_FP16_MIB);
  assert.match(busy?.fix ?? '', /Close the programs/);
});

test('MiB are shown as GB with one decimal', () => {
  assert.equal(gib(40960), '40.0');
  assert.equal(gib(CHATGLM3_FP16_MIB), '12.7');
});
