// The continuous scheduler's figures per model instance (tritonChatglm.gpus: one instance per GPU). model.py labels
// every series with its instance's name and device (triton/README.md, "Metrics"); the model's figures elsewhere are
// these summed (schedulerFigures.ts). Triton's own queue and statistics are per model, not per instance, so an
// instance's rows hold only the scheduler's figures.
import { findSamples, sumMetric, type ParsedMetrics } from '../triton/prometheus';
import { SCHEDULER_METRICS, schedulerRates, type SchedulerCounters, type SchedulerRates } from './schedulerFigures';
import { weightsInfo, type WeightsInfo } from './weightsInfo';

export interface InstanceCounters {
  /** Triton's instance name: chatglm3-6b_<group>_<n> (one group per GPU). */
  instance: string;
  /** Where it runs, as the model saw it (`cuda:1` inside the container, `cpu`); absent from an older model.py. */
  device?: string;
  counters: SchedulerCounters;
  /** How its weights run: with quantization `auto` each GPU's memory plan chooses, so instances may differ. */
  weights?: WeightsInfo;
}

/** Each instance that publishes the scheduler's figures, in name order; empty when none does. */
export function instanceCounters(metrics: ParsedMetrics, model: string): InstanceCounters[] {
  const devices = new Map<string, string | undefined>();
  for (const s of findSamples(metrics, SCHEDULER_METRICS.decodeSteps, { model })) {
    const name = s.labels.instance;
    if (name !== undefined) devices.set(name, s.labels.device);
  }
  return [...devices.keys()].sort().map((instance) => {
    const counters = {} as SchedulerCounters;
    for (const [figure, name] of Object.entries(SCHEDULER_METRICS) as [keyof SchedulerCounters, string][]) {
      counters[figure] = sumMetric(metrics, name, { model, instance });
    }
    const device = devices.get(instance);
    const weights = weightsInfo(metrics, model, instance);
    return { instance, ...(device ? { device } : {}), counters, ...(weights ? { weights } : {}) };
  });
}

/** One instance now, and its rates since the previous sample (undefined: no earlier sample of it, or it reloaded). */
export interface InstanceRow {
  instance: string;
  device?: string;
  weights?: WeightsInfo;
  activeRows: number;
  waitingRequests: number;
  generatedTokens: number;
  busyRejections: number;
  cancelledRequests: number;
  rates?: SchedulerRates;
}

/** The rows of `cur`, each with its rates against the same instance in `prev` (matched by name). */
export function instanceRows(prev: { at: number; instances?: readonly InstanceCounters[] } | undefined,
  cur: { at: number; instances?: readonly InstanceCounters[] }): InstanceRow[] {
  return (cur.instances ?? []).map(({ instance, device, weights, counters: c }) => {
    const before = prev?.instances?.find((p) => p.instance === instance);
    const rates = before ? schedulerRates({ at: prev!.at, counters: before.counters }, { at: cur.at, counters: c }) : undefined;
    return {
      instance,
      ...(device ? { device } : {}),
      ...(weights ? { weights } : {}),
      activeRows: c.activeRows,
      waitingRequests: c.waitingRequests,
      generatedTokens: c.generatedTokens,
      busyRejections: c.busyRejections,
      cancelledRequests: c.cancelledRequests,
      ...(rates ? { rates } : {}),
    };
  });
}
