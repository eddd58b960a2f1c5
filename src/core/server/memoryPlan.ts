// The native engine's memory plan, for the extension: what a catalog model (ChatGLM3-6B by default) will hold on a
// GPU with the configured rows, context and quantization, before the container starts, from nvidia-smi's free
// memory. The same formulas as the
// engine's own plan (triton/model_repository/chatglm3-6b/1/chatglm/engine/memory_plan.py, which decides at load);
// test/unit/server/memoryPlan.test.ts and triton/tests/test_memory_plan.py check both against the same figures
// (test/unit/server/memory-plan-cases.json). Bytes throughout; the setup checklist words the verdict.
import type { ModelDtype, ModelQuantization } from '../repository/renderConfig';
import { catalogModel } from '../models/catalog';

/** The config fields the plan reads (ChatGLM3's own names in config.json). */
export interface PlanModelConfig {
  num_layers: number;
  hidden_size: number;
  num_attention_heads: number;
  kv_channels: number;
  multi_query_group_num: number;
  ffn_hidden_size: number;
  padded_vocab_size: number;
  add_qkv_bias: boolean;
  post_layer_norm: boolean;
  seq_length: number;
}

/** The plan's config of a catalog model (src/core/models: the same file the engine reads); undefined for an id
 * the catalog does not list. */
export function planModelConfig(modelId: string): Readonly<PlanModelConfig> | undefined {
  const model = catalogModel(modelId);
  if (!model) return undefined;
  const c = model.config;
  return Object.freeze({
    num_layers: c.num_layers, hidden_size: c.hidden_size, num_attention_heads: c.num_attention_heads, kv_channels: c.kv_channels,
    multi_query_group_num: c.multi_query_group_num, ffn_hidden_size: c.ffn_hidden_size, padded_vocab_size: c.padded_vocab_size,
    add_qkv_bias: c.add_qkv_bias, post_layer_norm: c.post_layer_norm, seq_length: c.seq_length,
  });
}

function requireConfig(modelId: string): Readonly<PlanModelConfig> {
  const config = planModelConfig(modelId);
  if (!config) throw new Error(`the model catalog has no ${modelId}`);
  return config;
}

export const CHATGLM3_6B_CONFIG: Readonly<PlanModelConfig> = requireConfig('chatglm3-6b');
export const GLM4_9B_CHAT_CONFIG: Readonly<PlanModelConfig> = requireConfig('glm-4-9b-chat');

/** A dtype the plan sizes: `auto` is resolved first (planDtype). */
export type PlanDtype = Exclude<ModelDtype, 'auto'> | 'float64';

/** `auto` on a GPU is bfloat16 or float16 (as the engine resolves it): both take 2 bytes an element. */
export function planDtype(dtype: ModelDtype | undefined): Exclude<ModelDtype, 'auto'> {
  return dtype === undefined || dtype === 'auto' ? 'float16' : dtype;
}
export type WeightsKind = 'none' | 'int8';

const ELEMENT_BYTES: Record<PlanDtype, number> = { float16: 2, bfloat16: 2, float32: 4, float64: 8 };
const MIN_PREFILL_CHUNK = 256;
const RESERVE_FIXED = 256 * 2 ** 20;
const RESERVE_FRACTION = 0.03;
const INDEX_BYTES = 8;
const MASK_ALIGN = 16;
const DEQUANTIZE_BLOCK_ELEMENTS = 2 ** 25;
export const DEFAULT_PREFILL_CHUNK = 2048;

export interface MemoryPlanFigures {
  quantization: WeightsKind;
  rows: number;
  context: number;
  prefillChunk: number;
  weights: number;
  kvCache: number;
  prefillTransient: number;
  decodeBuffers: number;
  reserve: number;
  total: number;
}

/** [out, in] of every matrix, and whether ChatGLM3 quantizes it; vectors as [n]. */
function parameters(c: PlanModelConfig): Array<{ shape: number[]; quantized: boolean }> {
  const h = c.hidden_size;
  const qkv = (c.num_attention_heads + 2 * c.multi_query_group_num) * c.kv_channels;
  const out: Array<{ shape: number[]; quantized: boolean }> = [
    { shape: [c.padded_vocab_size, h], quantized: false }, { shape: [c.padded_vocab_size, h], quantized: false },
  ];
  for (let i = 0; i < c.num_layers; i++) {
    out.push({ shape: [h], quantized: false }, { shape: [qkv, h], quantized: true });
    if (c.add_qkv_bias) out.push({ shape: [qkv], quantized: false });
    out.push({ shape: [h, c.num_attention_heads * c.kv_channels], quantized: true }, { shape: [h], quantized: false },
      { shape: [2 * c.ffn_hidden_size, h], quantized: true }, { shape: [h, c.ffn_hidden_size], quantized: true });
  }
  if (c.post_layer_norm) out.push({ shape: [h], quantized: false });
  return out;
}

export function modelWeightBytes(c: PlanModelConfig, dtype: PlanDtype, quantization: WeightsKind): number {
  const e = ELEMENT_BYTES[dtype];
  let total = 0;
  for (const p of parameters(c)) {
    const count = p.shape.reduce((a, b) => a * b, 1);
    total += quantization === 'int8' && p.quantized ? count + 2 * p.shape[0]! : count * e;
  }
  return total;
}

/** kv_cache.py's `cache_positions`: the context and the decode step's scratch cell, rounded up to 16. */
export function cachePositions(context: number): number {
  return Math.ceil((context + 1) / 16) * 16;
}

/** decode_step.py's row buckets (1, 2, 4, ... below maxRows, then maxRows) and key windows (256, 512, ...). */
function rowBuckets(maxRows: number): number[] {
  const out: number[] = [];
  for (let size = 1; size < maxRows; size *= 2) out.push(size);
  return [...out, maxRows];
}

function keyWindows(positions: number): number[] {
  const out: number[] = [];
  for (let size = 256; size < positions; size *= 2) out.push(size);
  return [...out, positions];
}

export function kvCacheBytes(c: PlanModelConfig, rows: number, context: number, dtype: PlanDtype): number {
  return 2 * c.num_layers * rows * c.multi_query_group_num * cachePositions(context) * c.kv_channels * ELEMENT_BYTES[dtype];
}

function dequantizeBlockRows(outFeatures: number, inFeatures: number): number {
  return Math.max(1, Math.min(outFeatures, Math.floor(DEQUANTIZE_BLOCK_ELEMENTS / inFeatures)));
}

/** The largest set of live temporaries of one prefill forward (memory_plan.py: prefill_transient_bytes). */
export function prefillTransientBytes(c: PlanModelConfig, tokens: number, context: number, rows: number, dtype: PlanDtype, quantization: WeightsKind): number {
  const e = ELEMENT_BYTES[dtype];
  const n = tokens;
  const s = context;
  const h = c.hidden_size;
  const f = c.ffn_hidden_size;
  const d = c.kv_channels;
  const g = c.multi_query_group_num;
  const heads = c.num_attention_heads;
  const qkvSize = (heads + 2 * g) * d;
  const b = Math.max(1, Math.min(rows, tokens));
  const qk = (heads + g) * d;
  const hd = heads * d;
  const dq = (outF: number, inF: number) => {
    if (quantization !== 'int8') return 0;
    const r = dequantizeBlockRows(outF, inF);
    return r * inF * 2 + (e !== 2 ? r * inF * e : 0) + (r < outF ? n * r * e : 0);
  };
  const maskRow = Math.ceil(s / MASK_ALIGN) * MASK_ALIGN; // the mask's rows are padded (forward.py)
  // A decode step of `rows` rows in the same pass (step_with_chunks): per-head cos/sin, its mask and the mask's source.
  const stepTables = 2 * rows * (heads + 2 * g) * d * e + rows * cachePositions(s) * (e + 1) + 3 * rows * INDEX_BYTES;
  const persistent = n * h * e + n * maskRow * e + 2 * n * d * e + 6 * n * INDEX_BYTES + stepTables;
  const rms = 3 * n * h * 4;
  const attention = Math.max(
    rms,
    n * h * e + n * qkvSize * e + dq(qkvSize, h),
    n * qkvSize * e + 4 * n * qk * e + 2 * n * g * d * e,
    n * qk * e + 2 * b * g * s * d * e + n * hd * e + 2 * n * g * d * e,
    n * qk * e + n * hd * e + 2 * n * h * e + dq(h, hd),
  );
  const mlp = Math.max(
    rms,
    n * h * e + 2 * n * f * e + dq(2 * f, h),
    4 * n * f * e,
    3 * n * f * e + n * h * e + dq(h, f),
    2 * n * f * e + 2 * n * h * e,
  );
  const logits = b * (h * (e + 4) + c.padded_vocab_size * (e + 4));
  return persistent + Math.max(attention, mlp, logits);
}

export function decodeBufferBytes(c: PlanModelConfig, rows: number, context: number, dtype: PlanDtype, quantization: WeightsKind): number {
  const e = ELEMENT_BYTES[dtype];
  const v = c.padded_vocab_size;
  const window = cachePositions(context);
  const steps = prefillTransientBytes(c, rows, window, rows, dtype, quantization);
  const rotary = 2 * rows * (c.num_attention_heads + 2 * c.multi_query_group_num) * c.kv_channels * e;
  const scores = rows * c.num_attention_heads * window * 4 * 2;
  const sampling = rows * v * (4 * 3 + 8);
  const graphs = rowBuckets(rows).reduce((a, b) => a + b, 0) * keyWindows(window).length * v * 4;
  return steps + rotary + scores + sampling + rows * v * e + graphs;
}

/** memory_plan.py's `memory_plan`: the figures of one configuration. */
export function memoryPlan(c: PlanModelConfig, rows: number, context: number, prefillChunk: number, dtype: PlanDtype, quantization: WeightsKind): MemoryPlanFigures {
  const chunk = Math.max(1, Math.min(prefillChunk, context));
  const weights = modelWeightBytes(c, dtype, quantization);
  const kvCache = kvCacheBytes(c, rows, context, dtype);
  const prefillTransient = prefillTransientBytes(c, chunk, context, rows, dtype, quantization);
  const decodeBuffers = decodeBufferBytes(c, rows, context, dtype, quantization);
  const reserve = RESERVE_FIXED + Math.trunc(RESERVE_FRACTION * (weights + kvCache));
  return { quantization, rows, context, prefillChunk: chunk, weights, kvCache, prefillTransient, decodeBuffers, reserve, total: weights + kvCache + Math.max(prefillTransient, decodeBuffers) + reserve };
}

/** What the extension's settings ask of one model copy. */
export interface PlanSettings {
  rows: number;
  context: number;
  dtype: Exclude<ModelDtype, 'auto'>;
  quantization: ModelQuantization;
  prefillChunk?: number;
}

/** The settings of a rendered config: rows = maxBatchSize, context = prompt budget + answer limit (at most the model's). */
export function planSettings(model: { maxBatchSize?: number; maxInputTokens?: number; maxNewTokensLimit?: number; dtype?: ModelDtype; quantization?: ModelQuantization }, c: PlanModelConfig = CHATGLM3_6B_CONFIG): PlanSettings {
  const context = Math.min(c.seq_length, (model.maxInputTokens ?? 6144) + (model.maxNewTokensLimit ?? 2048));
  return { rows: model.maxBatchSize ?? 8, context, dtype: planDtype(model.dtype), quantization: model.quantization ?? 'auto' };
}

function chunks(prefillChunk: number): number[] {
  const sizes = [prefillChunk];
  let chunk = prefillChunk;
  while (Math.floor(chunk / 2) >= MIN_PREFILL_CHUNK) {
    chunk = Math.floor(chunk / 2);
    sizes.push(chunk);
  }
  return sizes;
}

function fitting(c: PlanModelConfig, rows: number, context: number, prefillChunk: number, dtype: PlanDtype, q: WeightsKind, free: number): MemoryPlanFigures | undefined {
  for (const chunk of chunks(prefillChunk)) {
    const plan = memoryPlan(c, rows, context, chunk, dtype, q);
    if (plan.total <= free) return plan;
  }
  return undefined;
}

/** Fewer rows at the same context, else 1 row with a shorter context (memory_plan.py: largest_fit). */
function largestFit(c: PlanModelConfig, rows: number, context: number, prefillChunk: number, dtype: PlanDtype, q: WeightsKind, free: number): MemoryPlanFigures | undefined {
  for (let fewer = rows - 1; fewer > 0; fewer--) {
    const plan = fitting(c, fewer, context, prefillChunk, dtype, q, free);
    if (plan) return plan;
  }
  let shorter = context;
  while (Math.floor(shorter / 2) >= MIN_PREFILL_CHUNK) {
    shorter = Math.floor(shorter / 2);
    const plan = fitting(c, 1, shorter, Math.min(prefillChunk, shorter), dtype, q, free);
    if (plan) return plan;
  }
  return undefined;
}

/**
 * The verdict for one GPU: `runs` with the plan the load will pick (memory_plan.py: plan_load), or `too-small` with
 * what was asked (`needed`: the smallest configuration the setting allows) and what would fit instead, if anything.
 */
export type GpuPlanVerdict =
  | { kind: 'runs'; free: number; plan: MemoryPlanFigures }
  | { kind: 'too-small'; free: number; needed: MemoryPlanFigures; fits?: MemoryPlanFigures };

export function planForGpu(freeBytes: number, s: PlanSettings, c: PlanModelConfig = CHATGLM3_6B_CONFIG): GpuPlanVerdict {
  const chunk = s.prefillChunk ?? DEFAULT_PREFILL_CHUNK;
  const float = s.dtype === 'float16' || s.dtype === 'bfloat16';
  const candidates: WeightsKind[] = s.quantization === 'auto' ? (float ? ['none', 'int8'] : ['none']) : [s.quantization];
  for (const q of candidates) {
    const plan = fitting(c, s.rows, s.context, chunk, s.dtype, q, freeBytes);
    if (plan) return { kind: 'runs', free: freeBytes, plan };
  }
  const last = candidates[candidates.length - 1]!;
  const needed = memoryPlan(c, s.rows, s.context, chunks(chunk).at(-1)!, s.dtype, last);
  const fits = largestFit(c, s.rows, s.context, chunk, s.dtype, last, freeBytes);
  return { kind: 'too-small', free: freeBytes, needed, ...(fits ? { fits } : {}) };
}

/** MiB one model copy needs with these settings: the smallest plan the quantization setting allows (auto: int8). */
export function requiredMiB(s: PlanSettings, c: PlanModelConfig = CHATGLM3_6B_CONFIG): number {
  const float = s.dtype === 'float16' || s.dtype === 'bfloat16';
  const q: WeightsKind = s.quantization === 'none' || !float ? 'none' : 'int8';
  const plan = memoryPlan(c, s.rows, s.context, chunks(s.prefillChunk ?? DEFAULT_PREFILL_CHUNK).at(-1)!, s.dtype, q);
  return Math.ceil(plan.total / 2 ** 20);
}
