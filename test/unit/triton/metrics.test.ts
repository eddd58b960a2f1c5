import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findSamples, parsePrometheusText, sumMetric } from '../../../src/core/triton/prometheus';
import { diffStatistics, summarizeStatistics, type ModelStatistics } from '../../../src/core/triton/statistics';

const TEXT = `# HELP nv_inference_request_success Number of successful inference requests, all batch sizes
# TYPE nv_inference_request_success counter
nv_inference_request_success{model="chatglm3-6b",version="1"} 37
nv_inference_request_success{model="other",version="1"} 2
# HELP nv_inference_count Number of inferences performed (does not include cached requests)
# TYPE nv_inference_count counter
nv_inference_count{model="chatglm3-6b",version="1"} 37
nv_inference_request_failure{model="chatglm3-6b",reason="REJECTED",version="1"} 1
nv_gpu_memory_used_bytes{gpu_uuid="GPU-a \\"q\\""} 1.3e+10
nv_inference_queue_duration_us{model="chatglm3-6b",version="1"} +Inf
weird_line_without_value
`;

test('parses samples, labels (with escapes), HELP/TYPE and special values', () => {
  const m = parsePrometheusText(TEXT);
  assert.equal(m.types.nv_inference_count, 'counter');
  assert.match(m.help.nv_inference_request_success!, /successful/);
  assert.equal(sumMetric(m, 'nv_inference_request_success'), 39);
  assert.equal(sumMetric(m, 'nv_inference_request_success', { model: 'chatglm3-6b' }), 37);
  assert.equal(findSamples(m, 'nv_inference_request_failure')[0]!.labels.reason, 'REJECTED');
  assert.equal(findSamples(m, 'nv_gpu_memory_used_bytes')[0]!.labels.gpu_uuid, 'GPU-a "q"');
  assert.equal(findSamples(m, 'nv_gpu_memory_used_bytes')[0]!.value, 1.3e10);
  assert.equal(findSamples(m, 'nv_inference_queue_duration_us')[0]!.value, Infinity);
  assert.equal(findSamples(m, 'weird_line_without_value').length, 0);
  assert.equal(sumMetric(m, 'missing'), 0);
});

const stats = (over: Partial<ModelStatistics>): ModelStatistics => ({
  name: 'chatglm3-6b', version: '1', inference_count: 0, execution_count: 0, ...over,
});

test('statistics summary: average batch size, queue and compute per request, batch sizes', () => {
  const s = summarizeStatistics(stats({
    inference_count: 12, execution_count: 4,
    inference_stats: {
      success: { count: 12, ns: 1 }, fail: { count: 1, ns: 0 }, queue: { count: 12, ns: 1200 },
      compute_input: { count: 12, ns: 120 }, compute_infer: { count: 12, ns: 12000 }, compute_output: { count: 12, ns: 240 },
    },
    batch_stats: [
      { batch_size: 4, compute_infer: { count: 2, ns: 10 } },
      { batch_size: 2, compute_infer: { count: 2, ns: 10 } },
    ],
  }));
  assert.equal(s.averageBatchSize, 3);
  assert.equal(s.averageQueueNs, 100);
  assert.equal(s.averageComputeNs, 10 + 1000 + 20);
  assert.equal(s.successCount, 12);
  assert.equal(s.failureCount, 1);
  assert.deepEqual(s.batches, [{ batchSize: 2, executions: 2 }, { batchSize: 4, executions: 2 }]);
  assert.equal(summarizeStatistics(stats({})).averageBatchSize, 0);
});

test('statistics diff counts only what happened between two samples', () => {
  const before = stats({ inference_count: 2, execution_count: 2, inference_stats: { queue: { count: 2, ns: 200 } }, batch_stats: [{ batch_size: 1, compute_infer: { count: 2, ns: 5 } }] });
  const after = stats({ inference_count: 10, execution_count: 4, inference_stats: { queue: { count: 10, ns: 1000 } },
    batch_stats: [{ batch_size: 1, compute_infer: { count: 2, ns: 5 } }, { batch_size: 4, compute_infer: { count: 2, ns: 9 } }] });
  const d = diffStatistics(before, after);
  assert.equal(d.inferenceCount, 8);
  assert.equal(d.executionCount, 2);
  assert.equal(d.averageBatchSize, 4);
  assert.equal(d.averageQueueNs, 100);
  assert.deepEqual(d.batches, [{ batchSize: 4, executions: 2 }]);
});
