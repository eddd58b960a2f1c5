// What the Server Status view shows, in one table: each totals row and each chart with its localized label, and
// how the host turns a sample of Triton's statistics and metrics into the view's `layout` and `update` messages
// (src/protocol/statusMessages.ts). A new figure is one entry here plus its value in src/core/status/statusModel.ts.
import * as vscode from 'vscode';
import { MODEL_NAME } from '../../core/repository';
import { SERIES, sparklinePath, totals, type SeriesName, type StatusHistory, type StatusSample, type StatusTotals } from '../../core/status/statusModel';
import type { StatusLayout, StatusUpdate } from '../../protocol';

/** The box each sparkline is drawn in (px). */
const CHART = { width: 240, height: 40 } as const;

/** The totals table, top to bottom: the id the view knows the row by, the figure it shows, its label. */
const TOTALS: readonly { id: string; figure: keyof StatusTotals; label: () => string }[] = [
  { id: 'requests', figure: 'requests', label: () => vscode.l10n.t('Requests (successful)') },
  { id: 'failures', figure: 'failures', label: () => vscode.l10n.t('Failed requests') },
  { id: 'executions', figure: 'executions', label: () => vscode.l10n.t('Executions (batches)') },
  { id: 'batch', figure: 'averageBatchSize', label: () => vscode.l10n.t('Average batch size') },
  { id: 'queue', figure: 'queueMsPerRequest', label: () => vscode.l10n.t('Queue time per request (ms)') },
  { id: 'compute', figure: 'computeMsPerRequest', label: () => vscode.l10n.t('Compute time per request (ms)') },
];

/**
 * One chart per series of the status model (in SERIES order): its label, and the smallest top of its y axis (so
 * a flat, small series does not fill the box).
 */
const CHARTS: Record<SeriesName, { label: () => string; minTop: number }> = {
  requestsPerSecond: { label: () => vscode.l10n.t('Requests per second'), minTop: 0.001 },
  batchSize: { label: () => vscode.l10n.t('Batch size'), minTop: 1 },
  queueMs: { label: () => vscode.l10n.t('Queue ms per request'), minTop: 0.001 },
  computeMs: { label: () => vscode.l10n.t('Compute ms per request'), minTop: 0.001 },
  gpuUtilizationPct: { label: () => vscode.l10n.t('GPU utilisation %'), minTop: 100 },
  gpuMemoryUsedGiB: { label: () => vscode.l10n.t('GPU memory used (GiB)'), minTop: 0.001 },
};

export function statusLayout(): StatusLayout {
  return {
    type: 'layout',
    title: vscode.l10n.t('Triton statistics for {0}', MODEL_NAME),
    headings: {
      totals: vscode.l10n.t('Since the server started'),
      charts: vscode.l10n.t('Last 3 minutes (every 2 s)'),
      gpus: vscode.l10n.t('GPUs'),
    },
    totals: TOTALS.map(({ id, label }) => ({ id, label: label() })),
    charts: SERIES.map((id) => ({ id, label: CHARTS[id].label() })),
    chart: CHART,
  };
}

/** Formats the view's numbers in the UI language; '–' for an unknown figure. */
export class FigureFormat {
  private readonly number: Intl.NumberFormat;

  constructor(language: string) {
    this.number = new Intl.NumberFormat(language, { maximumFractionDigits: 2 });
  }

  value(n: number | null | undefined): string {
    return n === null || n === undefined ? '–' : this.number.format(n);
  }

  gib(bytes: number): string {
    return this.number.format(bytes / 1024 ** 3);
  }
}

/** The figures of `sample`, the charts of `history` (which already holds the sample's point), and why any are missing. */
export function statusUpdate(sample: StatusSample, history: StatusHistory, notes: readonly string[], format: FigureFormat): StatusUpdate {
  const sums = totals(sample.stats);
  const series: StatusUpdate['series'] = {};
  for (const name of SERIES) {
    const values = history.series(name);
    series[name] = { d: sparklinePath(values, CHART.width, CHART.height, history.capacity, CHARTS[name].minTop), last: format.value(values.at(-1)) };
  }
  return {
    type: 'update',
    totals: sums ? Object.fromEntries(TOTALS.map(({ id, figure }) => [id, format.value(sums[figure])])) : {},
    series,
    gpus: sample.gpus.map((g) => vscode.l10n.t('{0}: {1}% busy, {2} of {3} GiB used', g.id, format.value(g.utilizationPct), format.gib(g.memoryUsedBytes), format.gib(g.memoryTotalBytes))),
    note: notes.join(' '),
  };
}

/** While there is no server to ask: the figures shown stay, the GPU list empties. */
export function noServerUpdate(): StatusUpdate {
  return { type: 'update', totals: {}, series: {}, gpus: [], note: vscode.l10n.t('The server is not running.') };
}
