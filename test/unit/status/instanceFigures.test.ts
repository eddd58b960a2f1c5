import assert from 'node:assert/strict';
import { test } from 'node:test';
import { instanceCounters, instanceRows } from '../../../src/core/status/instanceFigures';
import { schedulerCounters } from '../../../src/core/status/schedulerFigures';
import { metricsFigures } from '../../../src/core/status/statusModel';
import { parsePrometheusText } from '../../../src/core/triton/prometheus';

// As the real tritonserver publishes two instances (names and labels scraped from test_instances_server.py's server).
function scrape(a: { steps: number; rows: number; active: number; first: number }, b: { steps: number; rows: number; active: number; first: number }): string {
  const series = (name: string, value: number, instance: string, device: string) =>
    `${name}{device="${device}",instance="chatglm3-6b_${instance}",model="chatglm3-6b",version="1"} ${value}`;
  const both = (name: string, va: number, vb: number) => [series(name, va, '0_0', 'cuda:0'), series(name, vb, '1_0', 'cuda:1')];
  return [
    'nv_inference_pending_request_count{model="chatglm3-6b",version="1"} 3',
    ...both('chatglm3_decode_steps_total', a.steps, b.steps),
    ...both('chatglm3_decode_rows_total', a.rows, b.rows),
    ...both('chatglm3_generated_tokens_total', 100, 40),
    ...both('chatglm3_first_tokens_total', a.first, b.first),
    ...both('chatglm3_first_token_seconds_total', 0.5, 0.25),
    ...both('chatglm3_rejected_busy_total', 1, 0),
    ...both('chatglm3_cancelled_requests_total', 0, 2),
    ...both('chatglm3_active_rows', a.active, b.active),
    ...both('chatglm3_waiting_requests', 1, 0),
    'chatglm3_decode_steps_total{device="cpu",instance="other_0_0",model="other",version="1"} 999',
    'chatglm3_weights_info{device="cuda:1",dtype="float16",instance="chatglm3-6b_1_0",model="chatglm3-6b",quantization="int8",version="1"} 1',
    'chatglm3_weights_info{device="cuda:0",dtype="float16",instance="chatglm3-6b_0_0",model="chatglm3-6b",quantization="none",version="1"} 1',
  ].join('\n');
}

test('each instance has its own counters and device; the model figures are their sum', () => {
  const metrics = parsePrometheusText(scrape({ steps: 10, rows: 30, active: 3, first: 4 }, { steps: 20, rows: 20, active: 1, first: 2 }));
  const instances = instanceCounters(metrics, 'chatglm3-6b');
  assert.deepEqual(instances.map((i) => [i.instance, i.device, i.counters.activeRows, i.counters.decodeSteps, i.counters.cancelledRequests]), [
    ['chatglm3-6b_0_0', 'cuda:0', 3, 10, 0],
    ['chatglm3-6b_1_0', 'cuda:1', 1, 20, 2],
  ]);
  // quantization auto: each GPU's memory plan chose for its own instance.
  assert.deepEqual(instances.map((i) => i.weights?.quantization), ['none', 'int8']);
  const sum = schedulerCounters(metrics, 'chatglm3-6b')!;
  for (const figure of ['activeRows', 'waitingRequests', 'decodeSteps', 'decodeRows', 'generatedTokens', 'firstTokens', 'busyRejections'] as const) {
    assert.equal(sum[figure], instances[0]!.counters[figure] + instances[1]!.counters[figure], figure);
  }
  // Triton's queue is the model's, not an instance's: it is in the sum only.
  assert.equal(sum.tritonPendingRequests, 3);
  assert.equal(instances[0]!.counters.tritonPendingRequests, 0);
  assert.equal(metricsFigures(metrics, 'chatglm3-6b').instances?.length, 2);
  assert.deepEqual(instanceCounters(parsePrometheusText('nv_gpu_utilization{gpu_uuid="GPU-a"} 0.5'), 'chatglm3-6b'), []);
  assert.equal(metricsFigures(parsePrometheusText(''), 'chatglm3-6b').instances, undefined);
});

test('per-instance rates come from the same instance in the previous sample; a new or reloaded instance has none', () => {
  const m = (a: number, b: number) => instanceCounters(parsePrometheusText(scrape(
    { steps: a, rows: 2 * a, active: 2, first: 4 }, { steps: b, rows: b, active: 1, first: 2 })), 'chatglm3-6b');
  const prev = { at: 1_000, instances: m(10, 100) };
  const rows = instanceRows(prev, { at: 3_000, instances: m(30, 50) });
  assert.equal(rows[0]!.rates?.decodeStepsPerSecond, 10);
  assert.equal(rows[0]!.rates?.rowsPerStep, 2);
  assert.equal(rows[1]!.rates, undefined, 'counters went down: that instance reloaded');
  assert.deepEqual(rows.map((r) => [r.instance, r.device, r.activeRows, r.waitingRequests, r.generatedTokens, r.busyRejections, r.cancelledRequests]), [
    ['chatglm3-6b_0_0', 'cuda:0', 2, 1, 100, 1, 0],
    ['chatglm3-6b_1_0', 'cuda:1', 1, 0, 40, 0, 2],
  ]);
  assert.ok(instanceRows(undefined, { at: 3_000, instances: m(30, 50) }).every((r) => r.rates === undefined));
  assert.deepEqual(instanceRows(prev, { at: 3_000 }), []);
});
