// The continuous scheduler's own figures, from the Prometheus metrics model.py publishes on Triton's metrics port
// (triton/README.md, "Metrics"), with Triton's queue figures next to them. With continuous batching execute()
// returns at once, so Triton's execution counts and compute times no longer describe generation; these do.
// Counters are cumulative: rates come from the difference of two samples.
import { findSamples, sumMetric, type ParsedMetrics } from '../triton/prometheus';

/** Figure → metric name (summed over the model's instances). */
export const SCHEDULER_METRICS = {
  activeRows: 'chatglm3_active_rows',
  waitingRequests: 'chatglm3_waiting_requests',
  decodeSteps: 'chatglm3_decode_steps_total',
  decodeRows: 'chatglm3_decode_rows_total',
  prefillTokens: 'chatglm3_prefill_tokens_total',
  generatedTokens: 'chatglm3_generated_tokens_total',
  firstTokenSeconds: 'chatglm3_first_token_seconds_total',
  firstTokens: 'chatglm3_first_tokens_total',
  busyRejections: 'chatglm3_rejected_busy_total',
  cancelledRequests: 'chatglm3_cancelled_requests_total',
  invalidRequests: 'chatglm3_invalid_requests_total',
  /** Triton's own queue: requests not yet handed to execute(). */
  tritonPendingRequests: 'nv_inference_pending_request_count',
  tritonQueueMicroseconds: 'nv_inference_queue_duration_us',
} as const;

export type SchedulerCounters = Record<keyof typeof SCHEDULER_METRICS, number>;

/**
 * The figures of one model, or undefined when the server publishes none of the scheduler's (the `hf` engine's
 * per-execute path has no step figures, and neither has an older model.py or a foreign server).
 */
export function schedulerCounters(metrics: ParsedMetrics, model: string): SchedulerCounters | undefined {
  if (findSamples(metrics, SCHEDULER_METRICS.decodeSteps, { model }).length === 0) return undefined;
  const out = {} as SchedulerCounters;
  for (const [figure, name] of Object.entries(SCHEDULER_METRICS) as [keyof SchedulerCounters, string][]) {
    out[figure] = sumMetric(metrics, name, { model });
  }
  return out;
}

/** Per-interval figures; null where the interval has nothing to measure (no step, no first token). */
export interface SchedulerRates {
  /** Average batch: rows per decode step. */
  rowsPerStep: number | null;
  decodeStepsPerSecond: number;
  /** Tokens sampled per second, by the rows still generating too (not only by finished requests). */
  generatedTokensPerSecond: number;
  prefillTokensPerSecond: number;
  /** Mean time from a request's arrival to its first generated token. */
  meanTimeToFirstTokenMs: number | null;
}

export interface SchedulerSample {
  /** ms since epoch */
  at: number;
  counters: SchedulerCounters;
}

/** Rates between two samples; undefined for a non-positive interval or when counters went down (a reload). */
export function schedulerRates(prev: SchedulerSample, cur: SchedulerSample): SchedulerRates | undefined {
  const seconds = (cur.at - prev.at) / 1000;
  if (!(seconds > 0)) return undefined;
  const d = (figure: keyof SchedulerCounters) => cur.counters[figure] - prev.counters[figure];
  const cumulative: (keyof SchedulerCounters)[] = ['decodeSteps', 'decodeRows', 'prefillTokens', 'generatedTokens', 'firstTokenSeconds', 'firstTokens'];
  if (cumulative.some((figure) => d(figure) < 0)) return undefined;
  return {
    rowsPerStep: d('decodeSteps') > 0 ? d('decodeRows') / d('decodeSteps') : null,
    decodeStepsPerSecond: d('decodeSteps') / seconds,
    // generated_tokens_total grows when a request ends; while answers stream, the tokens are their first tokens
    // (from prefill) plus one per row in every decode step, which the scheduler counts as it goes.
    generatedTokensPerSecond: (d('decodeRows') + d('firstTokens')) / seconds,
    prefillTokensPerSecond: d('prefillTokens') / seconds,
    meanTimeToFirstTokenMs: d('firstTokens') > 0 ? (d('firstTokenSeconds') / d('firstTokens')) * 1000 : null,
  };
}

/** The server's queue as its metrics report it. */
export interface ServerQueue {
  /** Requests the server holds that no row generates yet (the scheduler's waiting queue plus Triton's own). */
  waiting: number;
  /** Rows generating now; undefined when the server does not publish it. */
  active?: number;
}

/**
 * The requests the server holds that no row generates yet: the scheduler's waiting queue plus Triton's own queue
 * in front of execute() (the only queue of the `hf` engine's per-execute path). Undefined when the server publishes
 * neither figure for the model.
 */
export function serverQueue(metrics: ParsedMetrics, model: string): ServerQueue | undefined {
  const scheduler = schedulerCounters(metrics, model);
  const pending = tritonPendingRequests(metrics, model);
  if (!scheduler) return pending === undefined ? undefined : { waiting: pending };
  return { waiting: scheduler.waitingRequests + (pending ?? 0), active: scheduler.activeRows };
}

/** Triton's queue in front of execute(), or undefined when the server does not publish it. */
export function tritonPendingRequests(metrics: ParsedMetrics, model: string): number | undefined {
  const samples = findSamples(metrics, SCHEDULER_METRICS.tritonPendingRequests, { model });
  return samples.length ? samples.reduce((sum, s) => sum + s.value, 0) : undefined;
}
