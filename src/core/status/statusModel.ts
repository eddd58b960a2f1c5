// Figures of the Show Server Status panel and `triton-chatglm stats`: what runs now
// and the continuous-batching rates from the scheduler's metrics (schedulerFigures.ts), totals from Triton's
// cumulative model statistics, per-interval rates from the difference of two samples, GPU figures from the
// Prometheus metrics, and the SVG path of each sparkline (drawn by the host; the webview only sets attributes).
import type { ReplicaHealth } from '../team/replicaHealth';
import { findSamples, type ParsedMetrics } from '../triton/prometheus';
import { diffStatistics, summarizeStatistics, type ModelStatistics } from '../triton/statistics';
import { instanceCounters, type InstanceCounters } from './instanceFigures';
import { schedulerCounters, schedulerRates, tritonPendingRequests, type SchedulerCounters } from './schedulerFigures';
import { weightsInfo, type WeightsInfo } from './weightsInfo';

export interface GpuFigures {
  /** The GPU's UUID label (or its position when there is none). */
  id: string;
  /** 0..100 */
  utilizationPct: number;
  memoryUsedBytes: number;
  memoryTotalBytes: number;
}

export interface StatusSample {
  /** ms since epoch */
  at: number;
  stats?: ModelStatistics;
  gpus: GpuFigures[];
  /** The continuous scheduler's counters, summed over the instances; absent when the server publishes none (hf engine, no metrics). */
  scheduler?: SchedulerCounters;
  /** The same counters per model instance (one per GPU of tritonChatglm.gpus); absent with `scheduler`. */
  instances?: InstanceCounters[];
  /** Triton's queue in front of execute(); absent without metrics. */
  tritonPending?: number;
  /** How the weights run (int8 or float); absent when the server does not say. */
  weights?: WeightsInfo;
  /** A team server's replicas as its proxy sees them; absent for any other server. */
  replicas?: ReplicaHealth[];
}

/** The parts of a sample that come from one scrape of the metrics port. */
export function metricsFigures(metrics: ParsedMetrics, model: string): Pick<StatusSample, 'gpus' | 'scheduler' | 'instances' | 'tritonPending' | 'weights'> {
  const out: Pick<StatusSample, 'gpus' | 'scheduler' | 'instances' | 'tritonPending' | 'weights'> = { gpus: gpuFigures(metrics) };
  const weights = weightsInfo(metrics, model);
  if (weights) out.weights = weights;
  const scheduler = schedulerCounters(metrics, model);
  if (scheduler) out.scheduler = scheduler;
  const instances = instanceCounters(metrics, model);
  if (instances.length) out.instances = instances;
  const pending = tritonPendingRequests(metrics, model);
  if (pending !== undefined) out.tritonPending = pending;
  return out;
}

export interface StatusTotals {
  requests: number;
  failures: number;
  executions: number;
  averageBatchSize: number;
  queueMsPerRequest: number;
  computeMsPerRequest: number;
}

/** What the continuous scheduler has done since the model loaded (its counters start with the model). */
export interface SchedulerTotals {
  generatedTokens: number;
  prefillTokens: number;
  decodeSteps: number;
  /** Average batch over all decode steps; null before the first step. */
  rowsPerStep: number | null;
  /** Mean time to first token over all requests; null before the first token. */
  meanTimeToFirstTokenMs: number | null;
  busyRejections: number;
  cancelledRequests: number;
  invalidRequests: number;
}

export function schedulerTotals(c: SchedulerCounters | undefined): SchedulerTotals | undefined {
  if (!c) return undefined;
  return {
    generatedTokens: c.generatedTokens,
    prefillTokens: c.prefillTokens,
    decodeSteps: c.decodeSteps,
    rowsPerStep: c.decodeSteps > 0 ? c.decodeRows / c.decodeSteps : null,
    meanTimeToFirstTokenMs: c.firstTokens > 0 ? (c.firstTokenSeconds / c.firstTokens) * 1000 : null,
    busyRejections: c.busyRejections,
    cancelledRequests: c.cancelledRequests,
    invalidRequests: c.invalidRequests,
  };
}

/** One point per refresh; null where the figure is unknown (no traffic in the interval, no GPU metrics). */
export interface StatusPoint {
  /** Rows generating at the moment of the sample (gauge). */
  activeRows: number | null;
  /** Requests waiting for a row at the moment of the sample (gauge). */
  waitingRequests: number | null;
  generatedTokensPerSecond: number | null;
  rowsPerStep: number | null;
  decodeStepsPerSecond: number | null;
  prefillTokensPerSecond: number | null;
  timeToFirstTokenMs: number | null;
  /** Triton's queue in front of execute() (gauge). */
  tritonPending: number | null;
  requestsPerSecond: number | null;
  batchSize: number | null;
  queueMs: number | null;
  computeMs: number | null;
  gpuUtilizationPct: number | null;
  gpuMemoryUsedGiB: number | null;
}

export type SeriesName = keyof StatusPoint;
export const SERIES: readonly SeriesName[] = [
  'activeRows', 'waitingRequests', 'generatedTokensPerSecond', 'rowsPerStep', 'decodeStepsPerSecond', 'prefillTokensPerSecond',
  'timeToFirstTokenMs', 'tritonPending', 'requestsPerSecond', 'batchSize', 'queueMs', 'computeMs', 'gpuUtilizationPct', 'gpuMemoryUsedGiB',
];

const GIB = 1024 ** 3;

export function gpuFigures(metrics: ParsedMetrics): GpuFigures[] {
  const byId = new Map<string, GpuFigures>();
  const get = (labels: Record<string, string>, index: number): GpuFigures => {
    const id = labels.gpu_uuid ?? String(index);
    let g = byId.get(id);
    if (!g) {
      g = { id, utilizationPct: 0, memoryUsedBytes: 0, memoryTotalBytes: 0 };
      byId.set(id, g);
    }
    return g;
  };
  findSamples(metrics, 'nv_gpu_utilization').forEach((s, i) => { get(s.labels, i).utilizationPct = clampPct(s.value * 100); });
  findSamples(metrics, 'nv_gpu_memory_used_bytes').forEach((s, i) => { get(s.labels, i).memoryUsedBytes = finiteOr0(s.value); });
  findSamples(metrics, 'nv_gpu_memory_total_bytes').forEach((s, i) => { get(s.labels, i).memoryTotalBytes = finiteOr0(s.value); });
  return [...byId.values()];
}

export function totals(stats: ModelStatistics | undefined): StatusTotals | undefined {
  if (!stats) return undefined;
  const s = summarizeStatistics(stats);
  return {
    requests: s.successCount,
    failures: s.failureCount,
    executions: s.executionCount,
    averageBatchSize: s.averageBatchSize,
    queueMsPerRequest: s.averageQueueNs / 1e6,
    computeMsPerRequest: s.averageComputeNs / 1e6,
  };
}

/** The interval between two samples; the first sample (or a server restart: counters went down) has no rates. */
export function point(prev: StatusSample | undefined, cur: StatusSample): StatusPoint {
  const gpu = cur.gpus.length > 0 ? cur.gpus : undefined;
  const rates = prev?.scheduler && cur.scheduler ? schedulerRates({ at: prev.at, counters: prev.scheduler }, { at: cur.at, counters: cur.scheduler }) : undefined;
  const out: StatusPoint = {
    activeRows: cur.scheduler?.activeRows ?? null,
    waitingRequests: cur.scheduler?.waitingRequests ?? null,
    generatedTokensPerSecond: rates?.generatedTokensPerSecond ?? null,
    rowsPerStep: rates?.rowsPerStep ?? null,
    decodeStepsPerSecond: rates?.decodeStepsPerSecond ?? null,
    prefillTokensPerSecond: rates?.prefillTokensPerSecond ?? null,
    timeToFirstTokenMs: rates?.meanTimeToFirstTokenMs ?? null,
    tritonPending: cur.tritonPending ?? null,
    requestsPerSecond: null,
    batchSize: null,
    queueMs: null,
    computeMs: null,
    gpuUtilizationPct: gpu ? gpu.reduce((a, g) => a + g.utilizationPct, 0) / gpu.length : null,
    gpuMemoryUsedGiB: gpu ? gpu.reduce((a, g) => a + g.memoryUsedBytes, 0) / GIB : null,
  };
  if (!prev?.stats || !cur.stats || cur.at <= prev.at) return out;
  const d = diffStatistics(prev.stats, cur.stats);
  if (d.successCount < 0 || d.executionCount < 0) return out;
  out.requestsPerSecond = d.successCount / ((cur.at - prev.at) / 1000);
  if (d.executionCount > 0) out.batchSize = d.averageBatchSize;
  if (d.successCount > 0) {
    out.queueMs = d.averageQueueNs / 1e6;
    out.computeMs = d.averageComputeNs / 1e6;
  }
  return out;
}

/** The last `capacity` points of every series. */
export class StatusHistory {
  private readonly points: StatusPoint[] = [];
  constructor(readonly capacity = 90) {}

  push(p: StatusPoint): void {
    this.points.push(p);
    if (this.points.length > this.capacity) this.points.splice(0, this.points.length - this.capacity);
  }

  series(name: SeriesName): (number | null)[] {
    return this.points.map((p) => p[name]);
  }

  clear(): void {
    this.points.length = 0;
  }
}

/**
 * The top of a chart's y axis: the series' maximum (at least `minTop`) rounded up to 1, 2 or 5 times a power of
 * ten, so the axis reads "0 … 20 tokens/s" rather than "0 … 17.3". 0 (or less) gives `minTop`'s own rounding.
 */
export function axisTop(values: readonly (number | null)[], minTop = 1): number {
  const known = values.filter((v): v is number => v !== null && Number.isFinite(v));
  const max = Math.max(minTop, ...known);
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 5, 10].find((m) => m * power >= max * (1 - 1e-9))!;
  return step * power;
}

/** Whether a series holds a value yet (its chart says "collecting…" until then). */
export function hasValues(values: readonly (number | null)[]): boolean {
  return values.some((v) => v !== null && Number.isFinite(v));
}

/**
 * SVG path data for a sparkline in a `width` x `height` box: x spreads `capacity` slots so the line grows from
 * the left, y is scaled to the series' maximum, at least `minMax` (pass axisTop(), so the line and the y axis
 * agree). Unknown points break the line.
 */
export function sparklinePath(values: readonly (number | null)[], width: number, height: number, capacity: number, minMax = 1): string {
  const known = values.filter((v): v is number => v !== null && Number.isFinite(v));
  const max = Math.max(minMax, ...known);
  const step = capacity > 1 ? width / (capacity - 1) : 0;
  let d = '';
  let pen = false;
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) {
      pen = false;
      return;
    }
    const x = round(i * step);
    const y = round(height - (Math.max(0, v) / max) * height);
    d += `${pen ? 'L' : 'M'}${x} ${y}`;
    pen = true;
  });
  return d;
}

const round = (n: number) => Math.round(n * 10) / 10;
const finiteOr0 = (n: number) => (Number.isFinite(n) ? n : 0);
const clampPct = (n: number) => (Number.isFinite(n) ? Math.min(100, Math.max(0, n)) : 0);
