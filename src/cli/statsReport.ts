// What `triton-chatglm stats` prints from two samples of the server (the later one's figures, the rates between
// them): Triton's statistics, the continuous scheduler's figures summed over the model instances and, with several
// instances (tritonChatglm.gpus), one line per instance. Text for people, or one JSON object with --json.
import { modelTitle } from '../core/models/choice';
import { instanceRows } from '../core/status/instanceFigures';
import { point, schedulerTotals, type StatusSample } from '../core/status/statusModel';
import { describeWeights } from '../core/status/weightsInfo';
import { summarizeStatistics } from '../core/triton';
import { seconds, type CliIo } from './cliSession';

/** A sample and whether the metrics port answered (its figures are absent otherwise). */
export type StatsSample = StatusSample & { metrics: boolean };

export function reportStats(io: CliIo, json: boolean, first: StatsSample & Required<Pick<StatusSample, 'stats'>>, sample: StatsSample): void {
  const rates = point(first, sample);
  const summary = summarizeStatistics(sample.stats ?? first.stats);
  const scheduler = sample.scheduler;
  const totals = schedulerTotals(scheduler);
  if (json) {
    const metrics = sample.metrics ? {
      pendingRequests: sample.tritonPending ?? 0,
      ...(sample.gpus.length ? { gpuUtilization: sample.gpus.reduce((a, g) => a + g.utilizationPct / 100, 0), gpuMemoryUsedBytes: sample.gpus.reduce((a, g) => a + g.memoryUsedBytes, 0) } : {}),
    } : undefined;
    const live = scheduler ? {
      activeRows: scheduler.activeRows,
      waitingRequests: scheduler.waitingRequests,
      intervalMs: sample.at - first.at,
      rates: {
        generatedTokensPerSecond: rates.generatedTokensPerSecond, decodeStepsPerSecond: rates.decodeStepsPerSecond,
        rowsPerStep: rates.rowsPerStep, prefillTokensPerSecond: rates.prefillTokensPerSecond, timeToFirstTokenMs: rates.timeToFirstTokenMs,
      },
      totals,
      // Per model instance (one per GPU); the figures above are their sum.
      instances: instanceRows(first, sample).map(({ rates: r, ...row }) => ({ ...row, rates: r ? {
        generatedTokensPerSecond: r.generatedTokensPerSecond, decodeStepsPerSecond: r.decodeStepsPerSecond,
        rowsPerStep: r.rowsPerStep, prefillTokensPerSecond: r.prefillTokensPerSecond, timeToFirstTokenMs: r.meanTimeToFirstTokenMs,
      } : null })),
    } : undefined;
    io.out(`${JSON.stringify({ ...summary, metrics, scheduler: live, gpus: sample.gpus, ...(sample.weights ? { weights: sample.weights } : {}) })}\n`);
    return;
  }
  const ms = (ns: number) => `${(ns / 1e6).toFixed(1)} ms`;
  const n = (v: number | null | undefined, digits = 0) => (v === null || v === undefined ? '–' : v.toFixed(digits));
  const line = (label: string, text: string) => io.out(`${`${label}:`.padEnd(20)}${text}\n`);
  line('model', `${modelTitle(summary.model)} (version ${summary.version})`);
  if (sample.weights) line('weights', describeWeights(sample.weights));
  if (scheduler && totals) {
    line('now', `${scheduler.activeRows} generating (active rows), ${scheduler.waitingRequests} waiting for a row, ${sample.tritonPending ?? 0} in Triton's queue`);
    line(`last ${seconds(sample.at - first.at)}`, `${n(rates.generatedTokensPerSecond, 1)} tokens/s, ${n(rates.decodeStepsPerSecond, 1)} decode steps/s, ${n(rates.rowsPerStep, 2)} rows per step, ${n(rates.prefillTokensPerSecond, 1)} prefill tokens/s, time to first token ${n(rates.timeToFirstTokenMs, 1)} ms`);
    line('since load', `${totals.generatedTokens} tokens in finished answers, ${totals.decodeSteps} decode steps (${n(totals.rowsPerStep, 2)} rows per step), ${totals.prefillTokens} prompt tokens prefilled, time to first token ${n(totals.meanTimeToFirstTokenMs, 1)} ms (mean)`);
    line('refused as busy', `${totals.busyRejections}; cancelled ${totals.cancelledRequests}; invalid ${totals.invalidRequests}`);
    const instances = instanceRows(first, sample);
    if (instances.length > 1) {
      io.out(`${instances.length} model instances (the figures above are their sum):\n`);
      for (const i of instances) {
        line(`  ${i.instance}`, `${i.device ? `${i.device}: ` : ''}${i.weights ? `${describeWeights(i.weights)}; ` : ''}${i.activeRows} generating, ${i.waitingRequests} waiting; ${n(i.rates?.generatedTokensPerSecond, 1)} tokens/s; ${i.generatedTokens} tokens in finished answers; refused as busy ${i.busyRejections}; cancelled ${i.cancelledRequests}`);
      }
    }
  } else if (sample.metrics) {
    line('now', 'the server publishes no continuous-batching figures (the hf engine, or a model without them)');
  }
  line('requests', `${summary.inferenceCount} (${summary.successCount} ok, ${summary.failureCount} failed)`);
  line('batches executed', `${summary.executionCount}; average batch size ${summary.averageBatchSize.toFixed(2)}`);
  line('batch sizes', summary.batches.map((b) => `${b.batchSize}×${b.executions}`).join(', ') || 'none yet');
  line('average queue time', `${ms(summary.averageQueueNs)}; average compute: ${ms(summary.averageComputeNs)}`);
  if (sample.tritonPending !== undefined) line('pending requests', String(sample.tritonPending));
  for (const g of sample.gpus) line(`GPU ${g.id}`, `${g.utilizationPct.toFixed(0)}% busy; ${(g.memoryUsedBytes / 2 ** 30).toFixed(2)} of ${(g.memoryTotalBytes / 2 ** 30).toFixed(2)} GiB used`);
}
