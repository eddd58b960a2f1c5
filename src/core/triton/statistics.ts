// Shapes of Triton's statistics extension (GET /v2/models/{m}/stats) and the derived figures the UI, CLI and
// benchmarks show. All durations are cumulative since server start; diff two samples for rates.

export interface DurationStat {
  count: number;
  ns: number;
}

export interface InferenceStats {
  success?: DurationStat;
  fail?: DurationStat;
  queue?: DurationStat;
  compute_input?: DurationStat;
  compute_infer?: DurationStat;
  compute_output?: DurationStat;
  cache_hit?: DurationStat;
  cache_miss?: DurationStat;
}

export interface BatchStat {
  batch_size: number;
  compute_input?: DurationStat;
  compute_infer?: DurationStat;
  compute_output?: DurationStat;
}

export interface ModelStatistics {
  name: string;
  version: string;
  last_inference?: number;
  inference_count: number;
  execution_count: number;
  inference_stats?: InferenceStats;
  response_stats?: Record<string, Record<string, DurationStat>>;
  batch_stats?: BatchStat[];
  memory_usage?: { type: string; id: number; byte_size: number }[];
}

export interface StatisticsSummary {
  model: string;
  version: string;
  /** Requests counted once per batch element (Triton's `inference_count`). */
  inferenceCount: number;
  /** Backend executions (one per dynamic batch). */
  executionCount: number;
  /** inference_count / execution_count; 0 before the first execution. */
  averageBatchSize: number;
  successCount: number;
  failureCount: number;
  /** Average time a request waited in the scheduler queue, ns (queue.ns / queue.count). */
  averageQueueNs: number;
  /** Average compute (input + infer + output) per request, ns. */
  averageComputeNs: number;
  /** One entry per executed batch size, sorted by size: how many executions ran with that many requests. */
  batches: { batchSize: number; executions: number }[];
}

function avg(stat: DurationStat | undefined): number {
  return stat && stat.count > 0 ? stat.ns / stat.count : 0;
}

function num(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'string' && v !== '' ? Number(v) : 0;
}

export function summarizeStatistics(s: ModelStatistics): StatisticsSummary {
  const inf = s.inference_stats ?? {};
  const inferenceCount = num(s.inference_count);
  const executionCount = num(s.execution_count);
  return {
    model: s.name,
    version: s.version,
    inferenceCount,
    executionCount,
    averageBatchSize: executionCount > 0 ? inferenceCount / executionCount : 0,
    successCount: num(inf.success?.count),
    failureCount: num(inf.fail?.count),
    averageQueueNs: avg(inf.queue),
    averageComputeNs: avg(inf.compute_input) + avg(inf.compute_infer) + avg(inf.compute_output),
    batches: (s.batch_stats ?? [])
      .map((b) => ({ batchSize: num(b.batch_size), executions: num(b.compute_infer?.count) }))
      .sort((a, b) => a.batchSize - b.batchSize),
  };
}

/** Counters gained between two samples of the same model (for "during this benchmark" figures). */
export function diffStatistics(before: ModelStatistics | undefined, after: ModelStatistics): StatisticsSummary {
  if (!before) return summarizeStatistics(after);
  const d = (a?: DurationStat, b?: DurationStat): DurationStat => ({
    count: num(b?.count) - num(a?.count),
    ns: num(b?.ns) - num(a?.ns),
  });
  const bi = before.inference_stats ?? {};
  const ai = after.inference_stats ?? {};
  const beforeBatches = new Map((before.batch_stats ?? []).map((b) => [b.batch_size, b]));
  return summarizeStatistics({
    ...after,
    inference_count: num(after.inference_count) - num(before.inference_count),
    execution_count: num(after.execution_count) - num(before.execution_count),
    inference_stats: {
      success: d(bi.success, ai.success),
      fail: d(bi.fail, ai.fail),
      queue: d(bi.queue, ai.queue),
      compute_input: d(bi.compute_input, ai.compute_input),
      compute_infer: d(bi.compute_infer, ai.compute_infer),
      compute_output: d(bi.compute_output, ai.compute_output),
    },
    batch_stats: (after.batch_stats ?? [])
      .map((b) => ({ batch_size: b.batch_size, compute_infer: d(beforeBatches.get(b.batch_size)?.compute_infer, b.compute_infer) }))
      .filter((b) => b.compute_infer.count > 0),
  });
}
