import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePrometheusText } from '../../../src/core/triton/prometheus';
import type { ModelStatistics } from '../../../src/core/triton/statistics';
import { axisTop, gpuFigures, hasValues, metricsFigures, point, schedulerTotals, sparklinePath, StatusHistory, totals, type StatusPoint } from '../../../src/core/status/statusModel';

function stats(success: number, inferences: number, executions: number, queueNs: number, inferNs: number): ModelStatistics {
  return {
    name: 'chatglm3-6b', version: '1', inference_count: inferences, execution_count: executions,
    inference_stats: {
      success: { count: success, ns: 0 }, fail: { count: 1, ns: 0 },
      queue: { count: success, ns: queueNs }, compute_infer: { count: success, ns: inferNs },
    },
  };
}

test('totals: requests, executions, average batch and per-request times in ms', () => {
  const t = totals(stats(40, 40, 10, 40 * 2e6, 40 * 50e6))!;
  assert.equal(t.requests, 40);
  assert.equal(t.failures, 1);
  assert.equal(t.executions, 10);
  assert.equal(t.averageBatchSize, 4);
  assert.equal(t.queueMsPerRequest, 2);
  assert.equal(t.computeMsPerRequest, 50);
  assert.equal(totals(undefined), undefined);
});

test('a point is the interval between two samples', () => {
  const a = { at: 1_000, stats: stats(10, 10, 5, 10e6, 100e6), gpus: [] };
  const b = { at: 3_000, stats: stats(18, 18, 7, 10e6 + 8 * 4e6, 100e6 + 8 * 30e6), gpus: [] };
  const p = point(a, b);
  assert.equal(p.requestsPerSecond, 4);
  assert.equal(p.batchSize, 4);
  assert.equal(p.queueMs, 4);
  assert.equal(p.computeMs, 30);
  assert.equal(p.gpuUtilizationPct, null);
});

test('first sample, idle interval and a restarted server give no made-up rates', () => {
  const a = { at: 1_000, stats: stats(10, 10, 5, 0, 0), gpus: [] };
  assert.equal(point(undefined, a).requestsPerSecond, null);
  const idle = point(a, { ...a, at: 3_000 });
  assert.equal(idle.requestsPerSecond, 0);
  assert.equal(idle.batchSize, null);
  assert.equal(idle.queueMs, null);
  const restarted = point(a, { at: 3_000, stats: stats(1, 1, 1, 0, 0), gpus: [] });
  assert.equal(restarted.requestsPerSecond, null);
});

test('GPU figures from Triton metrics text', () => {
  const m = parsePrometheusText([
    '# TYPE nv_gpu_utilization gauge',
    'nv_gpu_utilization{gpu_uuid="GPU-a"} 0.5',
    'nv_gpu_utilization{gpu_uuid="GPU-b"} 1',
    'nv_gpu_memory_used_bytes{gpu_uuid="GPU-a"} 1073741824',
    'nv_gpu_memory_total_bytes{gpu_uuid="GPU-a"} 25769803776',
  ].join('\n'));
  const g = gpuFigures(m);
  assert.deepEqual(g[0], { id: 'GPU-a', utilizationPct: 50, memoryUsedBytes: 1073741824, memoryTotalBytes: 25769803776 });
  assert.equal(g[1]?.utilizationPct, 100);
  const p = point(undefined, { at: 0, gpus: g });
  assert.equal(p.gpuUtilizationPct, 75);
  assert.equal(p.gpuMemoryUsedGiB, 1);
  assert.deepEqual(gpuFigures(parsePrometheusText('')), []);
});

test('sparkline path: scaled to the box, gaps for unknown points, only M/L commands', () => {
  assert.equal(sparklinePath([0, 5, 10], 100, 10, 3), 'M0 10L50 5L100 0');
  assert.equal(sparklinePath([1, null, 1], 100, 10, 3, 2), 'M0 5M100 5');
  assert.equal(sparklinePath([], 100, 10, 3), '');
  assert.match(sparklinePath([3, 1e9, -2, NaN], 240, 40, 90), /^[ML0-9 .-]*$/);
});

test('history keeps the last N points', () => {
  const h = new StatusHistory(3);
  const idle = point(undefined, { at: 0, gpus: [] });
  for (let i = 0; i < 5; i++) h.push({ ...idle, requestsPerSecond: i });
  assert.deepEqual(h.series('requestsPerSecond'), [2, 3, 4]);
});

// What the test tritonserver publishes while two rows generate and one request waits (labels as scraped from it).
function metricsText(steps: number, rows: number, tokens: number, prefill: number, firstTokens: number, firstSeconds: number, active: number, waiting: number): string {
  const series = (name: string, value: number) => `${name}{instance="chatglm3-6b_0_0",model="chatglm3-6b",version="1"} ${value}`;
  return [
    'nv_inference_pending_request_count{model="chatglm3-6b",version="1"} 1',
    series('chatglm3_active_rows', active),
    series('chatglm3_waiting_requests', waiting),
    series('chatglm3_decode_steps_total', steps),
    series('chatglm3_decode_rows_total', rows),
    series('chatglm3_prefill_tokens_total', prefill),
    series('chatglm3_generated_tokens_total', tokens),
    series('chatglm3_first_token_seconds_total', firstSeconds),
    series('chatglm3_first_tokens_total', firstTokens),
    series('chatglm3_rejected_busy_total', 3),
    series('chatglm3_cancelled_requests_total', 1),
    series('chatglm3_invalid_requests_total', 0),
  ].join('\n');
}

test('live points from the scheduler metrics: rows and queue as gauges, rates between two scrapes', () => {
  const scrape = (at: number, text: string) => ({ at, ...metricsFigures(parsePrometheusText(text), 'chatglm3-6b') });
  const a = scrape(10_000, metricsText(100, 150, 160, 40, 10, 0.5, 1, 0));
  const b = scrape(12_000, metricsText(180, 310, 322, 72, 12, 0.62, 2, 1));
  assert.equal(b.tritonPending, 1);
  assert.deepEqual(b.gpus, [], 'the CPU test server has no GPU metrics');
  const p: StatusPoint = point(a, b);
  assert.equal(p.activeRows, 2);
  assert.equal(p.waitingRequests, 1);
  assert.equal(p.tritonPending, 1);
  assert.equal(p.decodeStepsPerSecond, 40);
  assert.equal(p.rowsPerStep, 2);
  assert.equal(p.generatedTokensPerSecond, (160 + 2) / 2);
  assert.equal(p.prefillTokensPerSecond, 16);
  assert.ok(Math.abs(p.timeToFirstTokenMs! - 60) < 1e-9);
  assert.equal(p.requestsPerSecond, null, 'no Triton statistics in these samples');
  // The first sample has the gauges but no rates.
  const first = point(undefined, a);
  assert.equal(first.activeRows, 1);
  assert.equal(first.generatedTokensPerSecond, null);
});

test('scheduler totals since the load; none without scheduler metrics (the hf engine)', () => {
  const { scheduler } = metricsFigures(parsePrometheusText(metricsText(200, 500, 510, 90, 10, 0.25, 0, 0)), 'chatglm3-6b');
  assert.deepEqual(schedulerTotals(scheduler), {
    generatedTokens: 510, prefillTokens: 90, decodeSteps: 200, rowsPerStep: 2.5, meanTimeToFirstTokenMs: 25,
    busyRejections: 3, cancelledRequests: 1, invalidRequests: 0,
  });
  const hf = metricsFigures(parsePrometheusText('nv_inference_pending_request_count{model="chatglm3-6b",version="1"} 4'), 'chatglm3-6b');
  assert.equal(hf.scheduler, undefined);
  assert.equal(hf.tritonPending, 4);
  assert.equal(schedulerTotals(undefined), undefined);
  const p = point(undefined, { at: 0, ...hf });
  assert.equal(p.activeRows, null);
  assert.equal(p.tritonPending, 4);
});

test('the y axis tops at 1, 2 or 5 times a power of ten above the maximum (at least minTop); charts know when they hold data', () => {
  assert.equal(axisTop([17.3, 4], 1), 20);
  assert.equal(axisTop([3], 1), 5);
  assert.equal(axisTop([0.4], 0.001), 0.5);
  assert.equal(axisTop([100], 100), 100);
  assert.equal(axisTop([101], 100), 200);
  assert.equal(axisTop([null, null], 1), 1, 'no data: minTop');
  assert.equal(axisTop([0], 0.001), 0.001);
  assert.equal(axisTop([Number.NaN, 2e6], 1), 2e6);
  // The line and the axis agree: a value at the top is drawn at y = 0.
  assert.equal(sparklinePath([0, 15], 100, 10, 2, axisTop([0, 15])), 'M0 10L100 2.5', '15 of an axis up to 20');
  assert.equal(hasValues([null, null]), false);
  assert.equal(hasValues([null, 0]), true);
});
