import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reportStats, type StatsSample } from '../../../src/cli/statsReport';
import { metricsFigures } from '../../../src/core/status/statusModel';
import { parsePrometheusText } from '../../../src/core/triton/prometheus';
import type { ModelStatistics } from '../../../src/core/triton';

const stats: ModelStatistics = { name: 'chatglm3-6b', version: '1', inference_count: 6, execution_count: 3 } as ModelStatistics;

function sample(at: number, steps: [number, number], active: [number, number]): StatsSample & { stats: ModelStatistics } {
  const lines = (['0_0', '1_0'] as const).flatMap((instance, i) => {
    const l = `{device="cuda:${i}",instance="chatglm3-6b_${instance}",model="chatglm3-6b",version="1"}`;
    return [`chatglm3_decode_steps_total${l} ${steps[i]}`, `chatglm3_decode_rows_total${l} ${steps[i]! * 2}`,
      `chatglm3_active_rows${l} ${active[i]}`, `chatglm3_generated_tokens_total${l} ${10 * (i + 1)}`];
  });
  return { at, stats, metrics: true, ...metricsFigures(parsePrometheusText(lines.join('\n')), 'chatglm3-6b') };
}

function run(json: boolean, first: ReturnType<typeof sample>, later: ReturnType<typeof sample>): string {
  let out = '';
  reportStats({ out: (t) => { out += t; }, err: () => undefined, signal: new AbortController().signal, packageRoot: '/' }, json, first, later);
  return out;
}

test('stats with two instances: the sum, then one line per instance with its device and rates', () => {
  const text = run(false, sample(1_000, [10, 0], [2, 1]), sample(2_000, [30, 5], [3, 1]));
  assert.match(text, /^now: +4 generating \(active rows\)/m, 'the sum over both instances');
  assert.match(text, /^2 model instances \(the figures above are their sum\):$/m);
  assert.match(text, /^ {2}chatglm3-6b_0_0: +cuda:0: 3 generating, 0 waiting; 40\.0 tokens\/s; 10 tokens in finished answers/m);
  assert.match(text, /^ {2}chatglm3-6b_1_0: +cuda:1: 1 generating, 0 waiting; 10\.0 tokens\/s; 20 tokens in finished answers/m);
  const json = JSON.parse(run(true, sample(1_000, [10, 0], [2, 1]), sample(2_000, [30, 5], [3, 1]))) as {
    scheduler: { activeRows: number; instances: { instance: string; device: string; activeRows: number; rates: { decodeStepsPerSecond: number } | null }[] };
  };
  assert.equal(json.scheduler.activeRows, 4);
  assert.deepEqual(json.scheduler.instances.map((i) => [i.instance, i.device, i.activeRows, i.rates?.decodeStepsPerSecond]), [
    ['chatglm3-6b_0_0', 'cuda:0', 3, 20], ['chatglm3-6b_1_0', 'cuda:1', 1, 5],
  ]);
});

test('one instance: no per-instance lines in the text (the sum is that instance)', () => {
  const one = (at: number) => ({ ...sample(at, [1, 1], [1, 1]), instances: sample(at, [1, 1], [1, 1]).instances!.slice(0, 1) });
  assert.doesNotMatch(run(false, one(1_000), one(2_000)), /model instances/);
});
