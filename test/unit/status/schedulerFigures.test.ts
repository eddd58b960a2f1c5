import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePrometheusText } from '../../../src/core/triton/prometheus';
import { schedulerCounters, schedulerRates, serverQueue } from '../../../src/core/status/schedulerFigures';

// The shape of what the real test tritonserver publishes (scraped from it, values changed), two instances.
function scrape(steps: number, rows: number, tokens: number, firstTokens: number, firstSeconds: number): string {
  const series = (name: string, value: number, instance = '0_0') => `${name}{instance="chatglm3-6b_${instance}",model="chatglm3-6b",version="1"} ${value}`;
  return [
    'nv_inference_pending_request_count{model="chatglm3-6b",version="1"} 3',
    'nv_inference_queue_duration_us{model="chatglm3-6b",version="1"} 20256',
    '# TYPE chatglm3_decode_steps_total counter',
    series('chatglm3_decode_steps_total', steps),
    series('chatglm3_decode_steps_total', 0, '0_1'),
    series('chatglm3_decode_rows_total', rows),
    series('chatglm3_prefill_tokens_total', 307),
    series('chatglm3_generated_tokens_total', tokens),
    series('chatglm3_first_token_seconds_total', firstSeconds),
    series('chatglm3_first_tokens_total', firstTokens),
    series('chatglm3_rejected_busy_total', 2),
    series('chatglm3_cancelled_requests_total', 1),
    series('chatglm3_invalid_requests_total', 0),
    '# TYPE chatglm3_active_rows gauge',
    series('chatglm3_active_rows', 5),
    series('chatglm3_active_rows', 2, '0_1'),
    series('chatglm3_waiting_requests', 4),
    'chatglm3_decode_steps_total{instance="other_0_0",model="other",version="1"} 999',
  ].join('\n');
}

test('the scheduler figures of one model, summed over its instances, with Triton\'s queue next to them', () => {
  const c = schedulerCounters(parsePrometheusText(scrape(27, 33, 36, 3, 0.156)), 'chatglm3-6b')!;
  assert.deepEqual(c, {
    activeRows: 7, waitingRequests: 4, decodeSteps: 27, decodeRows: 33, prefillTokens: 307, generatedTokens: 36,
    firstTokenSeconds: 0.156, firstTokens: 3, busyRejections: 2, cancelledRequests: 1, invalidRequests: 0,
    tritonPendingRequests: 3, tritonQueueMicroseconds: 20256,
  });
});

test('no scheduler figures (hf engine, older model.py, another server): undefined, not zeros', () => {
  const text = 'nv_inference_count{model="chatglm3-6b",version="1"} 3\nchatglm3_generated_tokens_total{model="chatglm3-6b"} 5';
  assert.equal(schedulerCounters(parsePrometheusText(text), 'chatglm3-6b'), undefined);
  assert.equal(schedulerCounters(parsePrometheusText(scrape(1, 1, 1, 1, 1)), 'missing-model'), undefined);
});

test('rates between two samples: rows per step, tokens/s and the mean time to first token', () => {
  const a = { at: 10_000, counters: schedulerCounters(parsePrometheusText(scrape(100, 400, 500, 10, 1.0)), 'chatglm3-6b')! };
  const b = { at: 12_000, counters: schedulerCounters(parsePrometheusText(scrape(300, 1900, 2010, 14, 1.2)), 'chatglm3-6b')! };
  const r = schedulerRates(a, b)!;
  assert.equal(r.rowsPerStep, 7.5);
  assert.equal(r.decodeStepsPerSecond, 100);
  // Counted as the rows generate (decode rows + first tokens), not when requests end (generated_tokens_total).
  assert.equal(r.generatedTokensPerSecond, (1500 + 4) / 2);
  assert.equal(r.prefillTokensPerSecond, 0);
  assert.ok(Math.abs(r.meanTimeToFirstTokenMs! - 50) < 1e-9);
});

test('an idle interval has no rows per step or first-token time; a reload (counters down) or no time has no rates', () => {
  const a = { at: 1_000, counters: schedulerCounters(parsePrometheusText(scrape(100, 400, 500, 10, 1.0)), 'chatglm3-6b')! };
  const idle = schedulerRates(a, { ...a, at: 3_000 })!;
  assert.equal(idle.rowsPerStep, null);
  assert.equal(idle.meanTimeToFirstTokenMs, null);
  assert.equal(idle.generatedTokensPerSecond, 0);
  const reloaded = { at: 5_000, counters: schedulerCounters(parsePrometheusText(scrape(3, 3, 9, 1, 0.01)), 'chatglm3-6b')! };
  assert.equal(schedulerRates(a, reloaded), undefined);
  assert.equal(schedulerRates(a, a), undefined);
});

test('the server\'s queue: the scheduler\'s waiting requests plus Triton\'s own, with the active rows', () => {
  assert.deepEqual(serverQueue(parsePrometheusText(scrape(27, 33, 36, 3, 0.156)), 'chatglm3-6b'), { waiting: 4 + 3, active: 7 });
  // The hf engine's per-execute path: only Triton's queue in front of execute().
  assert.deepEqual(serverQueue(parsePrometheusText('nv_inference_pending_request_count{model="chatglm3-6b",version="1"} 2'), 'chatglm3-6b'), { waiting: 2 });
  assert.equal(serverQueue(parsePrometheusText('nv_gpu_utilization{gpu_uuid="GPU-a"} 0.5'), 'chatglm3-6b'), undefined, 'nothing about the model');
});
