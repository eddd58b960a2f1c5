// The extension's memory plan (src/core/server/memoryPlan.ts) against the engine's own (memory_plan.py): the same
// figures and the same decisions on the configs of memory-plan-cases.json, which triton/tests/test_memory_plan.py
// checks against the Python plan (and rewrites with --write-cases when the formulas change).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  CHATGLM3_6B_CONFIG, GLM4_9B_CHAT_CONFIG, memoryPlan, planForGpu, planModelConfig, planSettings, requiredMiB, type PlanDtype, type PlanModelConfig,
  type WeightsKind,
} from '../../../src/core/server/memoryPlan';
import type { ModelQuantization } from '../../../src/core/repository/renderConfig';

interface PlanCase { model?: string; rows: number; context: number; prefill_chunk: number; dtype: PlanDtype; quantization: WeightsKind; config?: Partial<PlanModelConfig>; expected: Record<string, number> }
interface Decision {
  free: number; rows: number; context: number; quantization: ModelQuantization; model?: string;
  expected: { kind: 'runs'; quantization: WeightsKind; rows: number; context: number; prefill_chunk: number; total: number }
    | { kind: 'too-small'; fits: { quantization: WeightsKind; rows: number; context: number; prefill_chunk: number } | null };
}
const cases = JSON.parse(readFileSync(join(__dirname, 'memory-plan-cases.json'), 'utf8')) as { plans: PlanCase[]; decisions: Decision[] };
const GiB = 2 ** 30;

test('the figures are the Python plan\'s, byte for byte', () => {
  assert.ok(cases.plans.length >= 4);
  assert.ok(cases.plans.some((c) => c.model === 'glm-4-9b-chat') && cases.decisions.some((d) => d.model === 'glm-4-9b-chat'));
  for (const c of cases.plans) {
    const config = c.model ? planModelConfig(c.model) : { ...CHATGLM3_6B_CONFIG, ...c.config };
    assert.ok(config, `the catalog has ${c.model}`);
    const p = memoryPlan(config, c.rows, c.context, c.prefill_chunk, c.dtype, c.quantization);
    assert.deepEqual(
      { weights: p.weights, kv_cache: p.kvCache, prefill_transient: p.prefillTransient, decode_buffers: p.decodeBuffers, reserve: p.reserve, total: p.total },
      c.expected, JSON.stringify(c));
  }
});

test('the decisions are the load\'s: quantization, prefill chunk, and what fits instead', () => {
  for (const d of cases.decisions) {
    const v = planForGpu(d.free, { rows: d.rows, context: d.context, dtype: 'float16', quantization: d.quantization }, d.model ? planModelConfig(d.model) : undefined);
    const e = d.expected;
    if (e.kind === 'runs') {
      assert.equal(v.kind, 'runs', JSON.stringify(d));
      if (v.kind !== 'runs') continue;
      assert.deepEqual([v.plan.quantization, v.plan.rows, v.plan.context, v.plan.prefillChunk, v.plan.total], [e.quantization, e.rows, e.context, e.prefill_chunk, e.total]);
    } else {
      assert.equal(v.kind, 'too-small', JSON.stringify(d));
      if (v.kind !== 'too-small') continue;
      assert.deepEqual(v.fits ? { quantization: v.fits.quantization, rows: v.fits.rows, context: v.fits.context, prefill_chunk: v.fits.prefillChunk } : null, e.fits);
    }
  }
});

test('12 GB runs int8, 24 GB float16, 6 GB nothing', () => {
  const s = planSettings({});
  assert.deepEqual(s, { rows: 8, context: 8192, dtype: 'float16', quantization: 'auto' });
  const at = (gib: number) => planForGpu(gib * GiB, s);
  const twelve = at(11.5);
  assert.ok(twelve.kind === 'runs' && twelve.plan.quantization === 'int8');
  const big = at(23.5);
  assert.ok(big.kind === 'runs' && big.plan.quantization === 'none');
  const six = at(5.5);
  assert.ok(six.kind === 'too-small' && six.fits === undefined && six.needed.quantization === 'int8');
  assert.ok(requiredMiB(s) < 11 * 1024 && requiredMiB({ ...s, quantization: 'none' }) > 14 * 1024);
});

test('each catalog model has its own plan: GLM-4-9B needs int8 on 16 GB and fewer rows on 12 GB', () => {
  assert.equal(GLM4_9B_CHAT_CONFIG.num_layers, 40);
  assert.equal(planModelConfig('no-such-model'), undefined);
  const s = planSettings({}, GLM4_9B_CHAT_CONFIG);
  const at = (gib: number) => planForGpu(gib * GiB, s, GLM4_9B_CHAT_CONFIG);
  const sixteen = at(15.5);
  assert.ok(sixteen.kind === 'runs' && sixteen.plan.quantization === 'int8');
  const big = at(23.5);
  assert.ok(big.kind === 'runs' && big.plan.quantization === 'none');
  assert.ok(big.plan.weights > 18e9 && big.plan.kvCache >= 8 * 8192 * 40 * 1024); // 40 KiB a token (plus the scratch position)
  const twelve = at(11.5);
  assert.ok(twelve.kind === 'too-small' && twelve.fits?.quantization === 'int8' && twelve.fits.rows < 8);
  assert.ok(requiredMiB(s, GLM4_9B_CHAT_CONFIG) > requiredMiB(planSettings({}), CHATGLM3_6B_CONFIG));
});
