// What the Server Status view shows, in one table: its sections (what runs now, the continuous scheduler's figures,
// Triton's, the GPUs), each row and chart with its localized label and group, and how the host turns a sample of the
// server's statistics and metrics into the view's `layout` and `update` messages (src/protocol/statusMessages.ts).
// A new figure is one entry here plus its value in src/core/status/statusModel.ts.
import * as vscode from 'vscode';
import type { ActivitySnapshot } from '../../core/status/activity';
import {
  axisTop, hasValues, schedulerTotals, sparklinePath, totals, type SchedulerTotals, type SeriesName, type StatusHistory, type StatusSample, type StatusTotals,
} from '../../core/status/statusModel';
import type { StatusLayout, StatusSection, StatusUpdate } from '../../protocol';

/** The box each sparkline is drawn in (px). */
const CHART = { width: 240, height: 40 } as const;

/** Figures shown or hidden together: the continuous scheduler's (absent with the hf engine) and the GPUs'. */
type Group = 'scheduler' | 'gpu';

/** What a sample (and this window's activity) knows, as the values the rows read. */
interface RowSource {
  sample: StatusSample;
  triton: StatusTotals | undefined;
  scheduler: SchedulerTotals | undefined;
  activity: ActivitySnapshot;
}

interface Row {
  id: string;
  label: () => string;
  group?: Group;
  value: (from: RowSource, format: FigureFormat) => string;
}

interface Chart {
  id: SeriesName;
  label: () => string;
  group?: Group;
  /** The smallest top of the y axis, so a flat, small series does not fill the box. */
  minTop: number;
  /** The top of the y axis with the unit of the values ("20 tokens/s", "1 row"), from the number and its text. */
  axis: (top: number, text: string) => string;
}

/** Axis labels of counts, singular for 1. */
const rows = (top: number, text: string) => (top === 1 ? vscode.l10n.t('{0} row', text) : vscode.l10n.t('{0} rows', text));
const requests = (top: number, text: string) => (top === 1 ? vscode.l10n.t('{0} request', text) : vscode.l10n.t('{0} requests', text));


type Section =
  | { kind: 'table'; id: string; heading: () => string; group?: Group; rows: readonly Row[] }
  | { kind: 'charts'; id: string; heading: () => string; group?: Group; charts: readonly Chart[] }
  | { kind: 'list'; id: 'gpus'; heading: () => string; group?: Group };

const triton = (figure: keyof StatusTotals) => ({ triton: sums }: RowSource, f: FigureFormat) => f.value(sums?.[figure]);
const scheduler = (figure: keyof SchedulerTotals) => ({ scheduler: sums }: RowSource, f: FigureFormat) => f.value(sums?.[figure]);
const recent = () => vscode.l10n.t('last 3 minutes, every 2 s');
/** This window's answers and queued explanations, as the "From this window" row shows them. */
const windowActivity = (a: ActivitySnapshot, f: FigureFormat) => vscode.l10n.t('{0} generating, {1} queued', f.value(a.answers.length), f.value(a.queuedExplanations));

/** The quantization in use (tritonChatglm.quantization, or the memory plan's choice for `auto`). */
const weightsText = ({ weights }: StatusSample) => !weights ? '–'
  : weights.quantization === 'int8' ? vscode.l10n.t('int8 (ChatGLM3\'s 8-bit weights), {0} activations', weights.dtype)
    : vscode.l10n.t('{0} (not quantized)', weights.dtype);

/** The page, top to bottom. */
const SECTIONS: readonly Section[] = [
  {
    kind: 'table', id: 'now', heading: () => vscode.l10n.t('Now'), rows: [
      { id: 'activeRows', group: 'scheduler', label: () => vscode.l10n.t('Answers being generated (active rows)'), value: ({ sample }, f) => f.value(sample.scheduler?.activeRows) },
      { id: 'waitingRequests', group: 'scheduler', label: () => vscode.l10n.t('Requests waiting for a free row'), value: ({ sample }, f) => f.value(sample.scheduler?.waitingRequests) },
      { id: 'tritonPending', label: () => vscode.l10n.t('Requests in Triton\'s queue'), value: ({ sample }, f) => f.value(sample.tritonPending) },
      { id: 'thisWindow', label: () => vscode.l10n.t('From this window'), value: ({ activity }, f) => windowActivity(activity, f) },
      { id: 'weights', label: () => vscode.l10n.t('Model weights'), value: ({ sample }) => weightsText(sample) },
    ],
  },
  {
    kind: 'charts', id: 'schedulerCharts', group: 'scheduler', heading: () => vscode.l10n.t('Continuous batching ({0})', recent()), charts: [
      { id: 'activeRows', label: () => vscode.l10n.t('Active rows'), minTop: 1, axis: rows },
      { id: 'waitingRequests', label: () => vscode.l10n.t('Waiting for a row'), minTop: 1, axis: requests },
      { id: 'generatedTokensPerSecond', label: () => vscode.l10n.t('Generated tokens/s'), minTop: 1, axis: (_top, text) => vscode.l10n.t('{0} tokens/s', text) },
      { id: 'rowsPerStep', label: () => vscode.l10n.t('Rows per decode step'), minTop: 1, axis: rows },
      { id: 'decodeStepsPerSecond', label: () => vscode.l10n.t('Decode steps/s'), minTop: 1, axis: (_top, text) => vscode.l10n.t('{0} steps/s', text) },
      { id: 'prefillTokensPerSecond', label: () => vscode.l10n.t('Prefill tokens/s'), minTop: 1, axis: (_top, text) => vscode.l10n.t('{0} tokens/s', text) },
      { id: 'timeToFirstTokenMs', label: () => vscode.l10n.t('Time to first token (ms)'), minTop: 1, axis: (_top, text) => vscode.l10n.t('{0} ms', text) },
    ],
  },
  {
    kind: 'table', id: 'schedulerTotals', group: 'scheduler', heading: () => vscode.l10n.t('Continuous batching since the model was loaded'), rows: [
      { id: 'generatedTokens', label: () => vscode.l10n.t('Tokens generated (finished answers)'), value: scheduler('generatedTokens') },
      { id: 'prefillTokens', label: () => vscode.l10n.t('Prompt tokens prefilled'), value: scheduler('prefillTokens') },
      { id: 'decodeSteps', label: () => vscode.l10n.t('Decode steps'), value: scheduler('decodeSteps') },
      { id: 'rowsPerStep', label: () => vscode.l10n.t('Rows per decode step (average batch)'), value: scheduler('rowsPerStep') },
      { id: 'timeToFirstToken', label: () => vscode.l10n.t('Time to first token (ms, mean)'), value: scheduler('meanTimeToFirstTokenMs') },
      { id: 'busyRejections', label: () => vscode.l10n.t('Requests refused as busy'), value: scheduler('busyRejections') },
      { id: 'cancelledRequests', label: () => vscode.l10n.t('Requests cancelled'), value: scheduler('cancelledRequests') },
    ],
  },
  {
    kind: 'charts', id: 'tritonCharts', heading: () => vscode.l10n.t('Triton ({0})', recent()), charts: [
      { id: 'tritonPending', label: () => vscode.l10n.t('Requests in Triton\'s queue'), minTop: 1, axis: requests },
      { id: 'requestsPerSecond', label: () => vscode.l10n.t('Requests finished per second'), minTop: 0.001, axis: (_top, text) => vscode.l10n.t('{0} requests/s', text) },
      { id: 'batchSize', label: () => vscode.l10n.t('Batch size'), minTop: 1, axis: requests },
      { id: 'queueMs', label: () => vscode.l10n.t('Queue ms per request'), minTop: 0.001, axis: (_top, text) => vscode.l10n.t('{0} ms', text) },
      { id: 'computeMs', label: () => vscode.l10n.t('Compute ms per request'), minTop: 0.001, axis: (_top, text) => vscode.l10n.t('{0} ms', text) },
    ],
  },
  {
    kind: 'table', id: 'tritonTotals', heading: () => vscode.l10n.t('Triton since the server started'), rows: [
      { id: 'requests', label: () => vscode.l10n.t('Requests (successful)'), value: triton('requests') },
      { id: 'failures', label: () => vscode.l10n.t('Failed requests'), value: triton('failures') },
      { id: 'executions', label: () => vscode.l10n.t('Executions (batches)'), value: triton('executions') },
      { id: 'batch', label: () => vscode.l10n.t('Average batch size'), value: triton('averageBatchSize') },
      { id: 'queue', label: () => vscode.l10n.t('Queue time per request (ms)'), value: triton('queueMsPerRequest') },
      { id: 'compute', label: () => vscode.l10n.t('Compute time per request (ms)'), value: triton('computeMsPerRequest') },
    ],
  },
  { kind: 'list', id: 'gpus', group: 'gpu', heading: () => vscode.l10n.t('GPUs') },
  {
    kind: 'charts', id: 'gpuCharts', group: 'gpu', heading: () => vscode.l10n.t('GPUs ({0})', recent()), charts: [
      { id: 'gpuUtilizationPct', label: () => vscode.l10n.t('GPU utilisation %'), minTop: 100, axis: (_top, text) => vscode.l10n.t('{0} %', text) },
      { id: 'gpuMemoryUsedGiB', label: () => vscode.l10n.t('GPU memory used (GiB)'), minTop: 0.001, axis: (_top, text) => vscode.l10n.t('{0} GiB', text) },
    ],
  },
];

const ROWS = SECTIONS.flatMap((s) => (s.kind === 'table' ? s.rows : []));
const CHARTS = SECTIONS.flatMap((s) => (s.kind === 'charts' ? s.charts : []));

/** `model`: the served model as the title names it ("GLM-4-9B-Chat (glm-4-9b-chat)"). */
export function statusLayout(hidden: readonly Group[], model: string): StatusLayout {
  return {
    type: 'layout',
    title: vscode.l10n.t('Triton statistics for {0}', model),
    sections: SECTIONS.map(layoutSection),
    chart: CHART,
    collecting: vscode.l10n.t('collecting…'),
    axis: { start: vscode.l10n.t('3 min ago'), end: vscode.l10n.t('now') },
    hidden: [...hidden],
  };
}

function layoutSection(s: Section): StatusSection {
  const head = { id: s.id, heading: s.heading(), ...(s.group ? { group: s.group } : {}) };
  const figure = ({ id, label, group }: Row | Chart) => ({ id, label: label(), ...(group ? { group } : {}) });
  switch (s.kind) {
    case 'table': return { kind: 'table', ...head, rows: s.rows.map(figure) };
    case 'charts': return { kind: 'charts', ...head, charts: s.charts.map(figure) };
    case 'list': return { kind: 'list', ...head };
  }
}

/** The groups a sample has nothing for: no GPU figures, no continuous-batching figures. */
export function hiddenGroups(sample: StatusSample | undefined): Group[] {
  const out: Group[] = [];
  if (!sample?.scheduler) out.push('scheduler');
  if (!sample || sample.gpus.length === 0) out.push('gpu');
  return out;
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

/**
 * The figures of `sample`, the charts of `history` (which already holds the sample's point), this window's
 * activity, and why any are missing.
 */
export function statusUpdate(sample: StatusSample, history: StatusHistory, activity: ActivitySnapshot, notes: readonly string[], format: FigureFormat): StatusUpdate {
  const from: RowSource = { sample, triton: totals(sample.stats), scheduler: schedulerTotals(sample.scheduler), activity };
  const series: StatusUpdate['series'] = {};
  for (const chart of CHARTS) {
    const values = history.series(chart.id);
    const top = axisTop(values, chart.minTop);
    series[chart.id] = {
      d: sparklinePath(values, CHART.width, CHART.height, history.capacity, top),
      last: format.value(values.at(-1)),
      top: chart.axis(top, format.value(top)),
      empty: !hasValues(values),
    };
  }
  return {
    type: 'update',
    figures: Object.fromEntries(ROWS.map((row) => [row.id, row.value(from, format)])),
    series,
    lists: {
      gpus: sample.gpus.map((g) => vscode.l10n.t('{0}: {1}% busy, {2} of {3} GiB used', g.id, format.value(g.utilizationPct), format.gib(g.memoryUsedBytes), format.gib(g.memoryTotalBytes))),
    },
    hidden: hiddenGroups(sample),
    note: notes.join(' '),
  };
}

/** While there is no server to ask: the figures shown stay, what only a server has is hidden. */
export function noServerUpdate(activity: ActivitySnapshot, format: FigureFormat): StatusUpdate {
  return {
    type: 'update',
    figures: { thisWindow: windowActivity(activity, format) },
    series: {},
    lists: { gpus: [] },
    hidden: hiddenGroups(undefined),
    note: vscode.l10n.t('The server is not running.'),
  };
}

/** Only this window's activity changed: its row, with everything else as `last` left it. */
export function activityUpdate(last: StatusUpdate, activity: ActivitySnapshot, format: FigureFormat): StatusUpdate {
  return { type: 'update', figures: { thisWindow: windowActivity(activity, format) }, series: {}, lists: {}, hidden: last.hidden, note: last.note };
}
