// Renders a model's config.pbtxt from the extension's settings: one template for every catalog model (same I/O
// contract; `model` picks the entry's name). With DEFAULT_MODEL_SETTINGS the output is the committed
// triton/model_repository/chatglm3-6b/config.pbtxt byte for byte (a unit test keeps them equal).
//
// GPUs: `gpuIds` are ids as seen inside the container (Docker renumbers the devices it passes from 0). One
// instance group is rendered per listed GPU (`instanceCount` instances in each, 1 unless the deprecated setting
// says otherwise), so gpuIds [0, 1] gives two model instances, chatglm3-6b_0_0 on GPU 0 and chatglm3-6b_1_0 on
// GPU 1, each with its own engine and continuous scheduler; the dynamic batcher feeds both.

import { DEFAULT_MODEL_ID } from '../models/catalog';
import { chosenModel, isModelId, MODEL_IDS } from '../models/choice';

/** `auto`: bfloat16 where the GPU has it, else float16; float32 on the CPU (triton/README.md). */
export type ModelDtype = 'auto' | 'float16' | 'bfloat16' | 'float32';
/** Weights of the native engine: `auto` lets the load's memory plan choose (triton/README.md, "Memory plan"). */
export type ModelQuantization = 'auto' | 'none' | 'int8';

export interface ModelSettings {
  /** The catalog model this entry serves: its id is the entry's directory and config.pbtxt's `name`. */
  model: string;
  /** Most requests generated together: Triton's max_batch_size and the continuous scheduler's max_active_rows. 1..64. */
  maxBatchSize: number;
  /**
   * How long the server waits to fill a batch, ms (0..10 000). Continuous scheduler: the idle engine's gather
   * (`idle_gather_ms`; Triton's own delay is 0, see dynamicBatchingLines); per_execute: Triton's queue delay.
   */
  queueDelayMs: number;
  /** Requests allowed to wait (Triton's queue and the scheduler's max_waiting); more are rejected at once. 0 = unbounded, else ..100 000. */
  maxQueueSize: number;
  /** Where instances run. 'cpu' is for tests and the tiny engine (gpuIds are then ignored). */
  instanceKind: 'gpu' | 'cpu';
  /** Container-visible GPU ids (non-empty, distinct, 0..63). */
  gpuIds: number[];
  /** Model instances per listed GPU (1..16); the extension renders 1 (tritonChatglm.instanceCount is deprecated). */
  instanceCount: number;
  /** Decoupled (streaming) transaction policy. */
  streaming: boolean;
  /** Weights directory inside the container (absolute POSIX path). */
  weightsPath: string;
  dtype: ModelDtype;
  /** Decode steps as CUDA graphs (one per row bucket, captured at load; falls back to eager if capture fails), or 'off'. */
  cudaGraphs: 'auto' | 'off';
  /** Prompt + history token budget (history is trimmed from the oldest end to fit). 16..131 072. */
  maxInputTokens: number;
  /** Upper bound a request's max_new_tokens is clamped to. 1..131 072. */
  maxNewTokensLimit: number;
  /** max_new_tokens when a request gives none (1..maxNewTokensLimit). */
  defaultMaxNewTokens: number;
  /** Sampling temperature when a request gives none (0..2; 0 = greedy). */
  defaultTemperature: number;
  /** Nucleus sampling when a request gives none (0 < p <= 1). */
  defaultTopP: number;
  /**
   * Engine of model.py: `native` (continuous batching), `hf` (Hugging Face remote code, one generation per
   * execute()), or a `module:Class` plug-in such as the tiny test engine (continuous batching too).
   */
  engine: string;
  /** none | int8 | auto (the native engine's memory plan picks none when float16 fits, else int8). */
  quantization: ModelQuantization;
}

export const DEFAULT_MODEL_SETTINGS: Readonly<ModelSettings> = Object.freeze({
  model: DEFAULT_MODEL_ID,
  maxBatchSize: 8,
  queueDelayMs: 20,
  maxQueueSize: 32,
  instanceKind: 'gpu',
  gpuIds: [0],
  instanceCount: 1,
  streaming: true,
  weightsPath: '/weights/chatglm3-6b',
  dtype: 'auto',
  cudaGraphs: 'auto',
  maxInputTokens: 6144,
  maxNewTokensLimit: 2048,
  defaultMaxNewTokens: 512,
  defaultTemperature: 0.8,
  defaultTopP: 0.8,
  engine: 'native',
  quantization: 'auto',
});

/**
 * The entry that holds the model code in the packaged repository (triton/model_repository/chatglm3-6b/1): the one
 * code tree every catalog entry is installed from. Not a model to address: use the chosen model's entry name.
 */
export const CODE_ENTRY = 'chatglm3-6b';

export interface SettingsIssue {
  field: keyof ModelSettings;
  message: string;
}

/** Settings that cannot be rendered; `issues` names every bad field (English; the UI localizes by field). */
export class ModelSettingsError extends Error {
  override readonly name = 'ModelSettingsError';
  readonly code = 'settings-invalid';
  constructor(readonly issues: SettingsIssue[]) {
    super(`Invalid model settings: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`);
  }
}

const DTYPES: readonly ModelDtype[] = ['auto', 'float16', 'bfloat16', 'float32'];
const QUANTIZATIONS: readonly ModelQuantization[] = ['auto', 'none', 'int8'];

/** Fills missing fields with defaults and checks ranges; throws ModelSettingsError listing every problem. */
export function resolveModelSettings(partial: Partial<ModelSettings> = {}): ModelSettings {
  const s: ModelSettings = { ...DEFAULT_MODEL_SETTINGS, gpuIds: [...DEFAULT_MODEL_SETTINGS.gpuIds] };
  for (const [k, v] of Object.entries(partial)) {
    if (v !== undefined) (s as unknown as Record<string, unknown>)[k] = v;
  }
  const issues = validateModelSettings(s);
  if (issues.length) throw new ModelSettingsError(issues);
  return s;
}

export function validateModelSettings(s: ModelSettings): SettingsIssue[] {
  const issues: SettingsIssue[] = [];
  const int = (field: keyof ModelSettings, min: number, max: number) => {
    const v = s[field];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      issues.push({ field, message: `must be a whole number from ${min} to ${max} (got ${JSON.stringify(v)})` });
      return false;
    }
    return true;
  };
  if (!isModelId(s.model)) issues.push({ field: 'model', message: `must be one of ${MODEL_IDS.join(', ')} (got ${JSON.stringify(s.model)})` });
  int('maxBatchSize', 1, 64);
  if (typeof s.queueDelayMs !== 'number' || !Number.isFinite(s.queueDelayMs) || s.queueDelayMs < 0 || s.queueDelayMs > 10_000) {
    issues.push({ field: 'queueDelayMs', message: `must be a number of milliseconds from 0 to 10000 (got ${JSON.stringify(s.queueDelayMs)})` });
  }
  int('maxQueueSize', 0, 100_000);
  int('instanceCount', 1, 16);
  if (s.instanceKind !== 'gpu' && s.instanceKind !== 'cpu') {
    issues.push({ field: 'instanceKind', message: `must be 'gpu' or 'cpu' (got ${JSON.stringify(s.instanceKind)})` });
  } else if (s.instanceKind === 'cpu') {
    // GPU ids do not apply.
  } else if (!Array.isArray(s.gpuIds) || s.gpuIds.length === 0) {
    issues.push({ field: 'gpuIds', message: 'must list at least one GPU id' });
  } else if (s.gpuIds.some((g) => typeof g !== 'number' || !Number.isInteger(g) || g < 0 || g > 63)) {
    issues.push({ field: 'gpuIds', message: `GPU ids must be whole numbers from 0 to 63 (got ${JSON.stringify(s.gpuIds)})` });
  } else if (new Set(s.gpuIds).size !== s.gpuIds.length) {
    issues.push({ field: 'gpuIds', message: `GPU ids must be distinct (got ${JSON.stringify(s.gpuIds)})` });
  }
  if (typeof s.streaming !== 'boolean') issues.push({ field: 'streaming', message: 'must be true or false' });
  // Strings are written inside pbtxt double quotes: refuse anything that could end the string or the line.
  if (typeof s.weightsPath !== 'string' || !/^\/[A-Za-z0-9._\-/@+ ]*$/.test(s.weightsPath) || s.weightsPath.split('/').includes('..')) {
    issues.push({ field: 'weightsPath', message: `must be an absolute path inside the container made of letters, digits, and . _ - / @ + or space (got ${JSON.stringify(s.weightsPath)})` });
  }
  if (!QUANTIZATIONS.includes(s.quantization)) {
    issues.push({ field: 'quantization', message: `must be one of ${QUANTIZATIONS.join(', ')} (got ${JSON.stringify(s.quantization)})` });
  }
  if (!DTYPES.includes(s.dtype)) issues.push({ field: 'dtype', message: `must be one of ${DTYPES.join(', ')} (got ${JSON.stringify(s.dtype)})` });
  if (s.cudaGraphs !== 'auto' && s.cudaGraphs !== 'off') issues.push({ field: 'cudaGraphs', message: `must be 'auto' or 'off' (got ${JSON.stringify(s.cudaGraphs)})` });
  int('maxInputTokens', 16, 131_072);
  const limitOk = int('maxNewTokensLimit', 1, 131_072);
  if (limitOk) int('defaultMaxNewTokens', 1, s.maxNewTokensLimit);
  else int('defaultMaxNewTokens', 1, 131_072);
  if (typeof s.defaultTemperature !== 'number' || !Number.isFinite(s.defaultTemperature) || s.defaultTemperature < 0 || s.defaultTemperature > 2) {
    issues.push({ field: 'defaultTemperature', message: `must be from 0 (greedy) to 2 (got ${JSON.stringify(s.defaultTemperature)})` });
  }
  if (typeof s.defaultTopP !== 'number' || !Number.isFinite(s.defaultTopP) || s.defaultTopP <= 0 || s.defaultTopP > 1) {
    issues.push({ field: 'defaultTopP', message: `must be greater than 0 and at most 1 (got ${JSON.stringify(s.defaultTopP)})` });
  }
  if (typeof s.engine !== 'string' || !/^[A-Za-z0-9_.]+(:[A-Za-z0-9_]+)?$/.test(s.engine)) {
    issues.push({ field: 'engine', message: `must be 'native', 'hf' or 'module:Class' (got ${JSON.stringify(s.engine)})` });
  }
  return issues;
}

/**
 * The HF engine runs one `generate` per execute() (`per_execute`); every other engine decodes step by step, so the
 * model's continuous scheduler lets a request join the running answers at the next step.
 */
export function schedulerFor(engine: string): 'continuous' | 'per_execute' {
  return engine === 'hf' ? 'per_execute' : 'continuous';
}

/** Warmup sends this many requests in one execute(): 2 exercises the batched path, but never above max_batch_size. */
export function warmupBatchSize(maxBatchSize: number): number {
  return Math.min(2, maxBatchSize);
}

/**
 * With max_batch_size 1 there is nothing to batch, and Triton 2.51's dynamic batcher then only costs time: a request
 * that arrives while the instance is busy waits for the batcher's 500 ms idle wake-up (measured in bench/README.md:
 * ~3x lower throughput at 8 concurrent streams). So batch size 1 gets Triton's default scheduler, whose queue is
 * unbounded (maxQueueSize and queueDelayMs do not apply).
 */
function dynamicBatchingLines(s: ModelSettings): string[] {
  if (tritonMaxBatchSize(s) === 1) {
    return ['# max_batch_size 1: no dynamic batcher (it would only add a 500 ms idle wait; see renderConfig.ts).'];
  }
  if (schedulerFor(s.engine) === 'continuous') {
    return [
      '# No queue delay: the continuous scheduler takes every request out of this queue at once, and a request that',
      '# arrives while answers run joins them at the next step. Only an idle engine waits to gather a burst (idle_gather_ms',
      '# below), never for a code completion. It bounds its own queue (max_waiting, "server busy"): this one is',
      '# max_waiting + 1024, so that a burst is refused by the model\'s bound, not by Triton\'s (triton/README.md).',
      '# Setting: tritonChatglm.maxQueueSize.',
      'dynamic_batching {',
      '  max_queue_delay_microseconds: 0',
      `  default_queue_policy { max_queue_size: ${tritonQueueSize(s)} }`,
      '}',
    ];
  }
  return [
    '# Wait up to the queue delay to fill a batch; a full queue rejects at once instead of piling up.',
    '# Settings: tritonChatglm.queueDelayMs, tritonChatglm.maxQueueSize.',
    'dynamic_batching {',
    `  max_queue_delay_microseconds: ${Math.round(s.queueDelayMs * 1000)}`,
    `  default_queue_policy { max_queue_size: ${tritonQueueSize(s)} }`,
    '}',
  ];
}

/**
 * The continuous scheduler's gather at an idle engine (ContinuousScheduler._gather): the queueDelayMs setting, which
 * Triton's dynamic batcher used to apply to every request (20 ms on each code completion, also while answers ran).
 */
function idleGatherLines(s: ModelSettings): string[] {
  if (schedulerFor(s.engine) !== 'continuous') return [];
  return ['# Setting: tritonChatglm.queueDelayMs (how long an idle engine waits for a burst to fill its rows).', param('idle_gather_ms', String(s.queueDelayMs))];
}

function param(key: string, value: string): string {
  return `parameters { key: "${key}" value { string_value: "${value}" } }`;
}

/**
 * Burst allowance of Triton's own queue above the model's max_waiting (continuous scheduler). execute() takes the
 * requests out of Triton's queue within milliseconds and the model refuses beyond max_waiting with "server busy";
 * Triton's queue only has to hold what arrives between two execute() calls, so its refusal ("Exceeds maximum
 * queue size") is left for bursts of more than this many requests at once.
 */
export const TRITON_QUEUE_BURST = 1024;

/** Triton's max_queue_size: the only queue for per_execute (hf); max_waiting + the burst allowance otherwise. */
export function tritonQueueSize(s: Pick<ModelSettings, 'maxQueueSize' | 'engine'>): number {
  if (s.maxQueueSize === 0 || schedulerFor(s.engine) === 'per_execute') return s.maxQueueSize;
  return s.maxQueueSize + TRITON_QUEUE_BURST;
}

/** Model instances the rendered config starts: instanceCount on the CPU, or instanceCount on each listed GPU. */
export function instanceTotal(s: Pick<ModelSettings, 'instanceKind' | 'gpuIds' | 'instanceCount'>): number {
  return s.instanceKind === 'cpu' ? s.instanceCount : s.instanceCount * s.gpuIds.length;
}

/**
 * Triton's max_batch_size: the requests one execute() takes. The continuous scheduler returns from execute() at
 * once, so Triton sees every instance idle and hands a whole burst to whichever instance it picks: with several
 * instances a burst is cut into batches of rows ÷ instances (rounded up), so that a full burst fills every instance
 * alike (measured on tritonserver 2.51: 8 requests at once on 2 instances went 8 + 0 with batches of 8, 4 + 4 with
 * batches of 4). Each instance still generates up to maxBatchSize rows (max_active_rows).
 */
export function tritonMaxBatchSize(s: Pick<ModelSettings, 'instanceKind' | 'gpuIds' | 'instanceCount' | 'maxBatchSize' | 'engine'>): number {
  if (schedulerFor(s.engine) === 'per_execute') return s.maxBatchSize;
  return Math.ceil(s.maxBatchSize / instanceTotal(s));
}

function instanceSplitLines(s: ModelSettings): string[] {
  if (tritonMaxBatchSize(s) === s.maxBatchSize) return [];
  return [`# ${instanceTotal(s)} instances: a burst is split into batches of ${tritonMaxBatchSize(s)} so that it reaches each of them (renderConfig.ts).`];
}

/** One group per GPU (its instances are named chatglm3-6b_<group>_<n>); one line for a single group. */
function instanceGroupLines(s: ModelSettings): string[] {
  if (s.instanceKind === 'cpu') return [`instance_group [ { count: ${s.instanceCount} kind: KIND_CPU } ]`];
  const groups = s.gpuIds.map((id) => `{ count: ${s.instanceCount} kind: KIND_GPU gpus: [ ${id} ] }`);
  if (groups.length === 1) return [`instance_group [ ${groups[0]} ]`];
  return ['instance_group [', ...groups.map((g, i) => `  ${g}${i < groups.length - 1 ? ',' : ''}`), ']'];
}

/** config.pbtxt text for the given (partial) settings; throws ModelSettingsError on invalid settings. */
export function renderConfig(partial: Partial<ModelSettings> = {}): string {
  const s = resolveModelSettings(partial);
  const lines = [
    `# ${chosenModel(s.model).displayName} on Triton's Python backend. This file is the default rendering of the extension's settings:`,
    '# src/core/repository/renderConfig.ts writes it again from the user\'s settings, and a test keeps the two equal.',
    '# The I/O contract is documented in triton/README.md.',
    `name: "${s.model}"`,
    'backend: "python"',
    '',
    '# Largest dynamic batch: requests handed to one execute(). Setting: tritonChatglm.maxBatchSize (which also sets',
    '# max_active_rows below, the rows the continuous scheduler generates together).',
    ...instanceSplitLines(s),
    `max_batch_size: ${tritonMaxBatchSize(s)}`,
    '',
    'input [',
    '  { name: "prompt" data_type: TYPE_STRING dims: [ 1 ] },',
    '  { name: "history" data_type: TYPE_STRING dims: [ 1 ] optional: true },',
    '  { name: "temperature" data_type: TYPE_FP32 dims: [ 1 ] optional: true },',
    '  { name: "top_p" data_type: TYPE_FP32 dims: [ 1 ] optional: true },',
    '  { name: "max_new_tokens" data_type: TYPE_INT64 dims: [ 1 ] optional: true },',
    '  { name: "history_len" data_type: TYPE_INT64 dims: [ 1 ] optional: true },',
    '  { name: "top_k" data_type: TYPE_INT64 dims: [ 1 ] optional: true },',
    '  { name: "repetition_penalty" data_type: TYPE_FP32 dims: [ 1 ] optional: true },',
    '  { name: "seed" data_type: TYPE_INT64 dims: [ 1 ] optional: true },',
    '  { name: "infill" data_type: TYPE_STRING dims: [ 1 ] optional: true },',
    '  { name: "raw_prompt" data_type: TYPE_STRING dims: [ 1 ] optional: true },',
    '  { name: "stop" data_type: TYPE_STRING dims: [ 1 ] optional: true }',
    ']',
    'output [',
    '  { name: "response" data_type: TYPE_STRING dims: [ 1 ] },',
    '  { name: "history" data_type: TYPE_STRING dims: [ 1 ] },',
    '  { name: "finish_reason" data_type: TYPE_STRING dims: [ 1 ] },',
    '  { name: "prompt_tokens" data_type: TYPE_INT32 dims: [ 1 ] },',
    '  { name: "completion_tokens" data_type: TYPE_INT32 dims: [ 1 ] },',
    '  { name: "history_trimmed" data_type: TYPE_INT32 dims: [ 1 ] }',
    ']',
    '',
    '# Streaming: each request gets its own deltas and exactly one FINAL. Setting: tritonChatglm.streaming.',
    `model_transaction_policy { decoupled: ${s.streaming} }`,
    '',
    ...dynamicBatchingLines(s),
    '',
    '# One copy of the model per instance; GPU ids are the ones visible inside the container.',
    '# Setting: tritonChatglm.gpus (one instance per listed GPU).',
    ...instanceGroupLines(s),
    '',
    '# Engine and scheduler (triton/README.md): native + continuous batching, or hf + one generation per execute().',
    '# Settings: tritonChatglm.engine; tritonChatglm.maxBatchSize -> max_active_rows, tritonChatglm.maxQueueSize -> max_waiting.',
    param('engine', s.engine),
    param('scheduler', schedulerFor(s.engine)),
    param('max_active_rows', String(s.maxBatchSize)),
    param('max_waiting', String(s.maxQueueSize)),
    ...idleGatherLines(s),
    param('weights_path', s.weightsPath),
    param('dtype', s.dtype),
    param('cuda_graphs', s.cudaGraphs),
    '# Setting: tritonChatglm.quantization (auto: float16 when the memory plan fits it, else int8).',
    param('quantization', s.quantization),
    param('max_input_tokens', String(s.maxInputTokens)),
    param('max_new_tokens_limit', String(s.maxNewTokensLimit)),
    param('default_max_new_tokens', String(s.defaultMaxNewTokens)),
    param('default_temperature', String(s.defaultTemperature)),
    param('default_top_p', String(s.defaultTopP)),
    '',
    '# Two requests in one execute(): warmup goes through the batched path, and every warmup request must get its FINAL.',
    'model_warmup [',
    '  {',
    '    name: "batched_chat"',
    `    batch_size: ${warmupBatchSize(tritonMaxBatchSize(s))}`,
    '    count: 1',
    '    inputs { key: "prompt" value { data_type: TYPE_STRING dims: [ 1 ] input_data_file: "prompt.bin" } }',
    '    inputs { key: "history" value { data_type: TYPE_STRING dims: [ 1 ] input_data_file: "history.bin" } }',
    '    inputs { key: "max_new_tokens" value { data_type: TYPE_INT64 dims: [ 1 ] input_data_file: "max_new_tokens.bin" } }',
    '  }',
    ']',
    '',
  ];
  return lines.join('\n');
}
