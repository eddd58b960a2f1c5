// What the Server Status view shows, in one table: its sections (what runs now, the continuous scheduler's figures,
// Triton's, the GPUs), each row and chart with its localized label and group, and how the host turns a sample of the
// server's statistics and metrics into the view's `layout` and `update` messages (src/protocol/statusMessages.ts).
// A new figure is one entry here plus its value in src/core/status/statusModel.ts.
import * as vscode from 'vscode';
import type { ActivitySnapshot } from '../../core/status/activity';
import { instanceRows } from '../../core/status/instanceFigures';
import type { WeightsInfo } from '../../core/status/weightsInfo';
import {
  axisTop, hasValues, schedulerTotals, sparklinePath, totals, type SchedulerTotals, type SeriesName, type StatusHistory, type StatusSample, type StatusTotals,
} from '../../core/status/statusModel';
import type { StatusLayout, StatusSection, StatusUpdate } from '../../protocol';

/** The box each sparkline is drawn in (px). */
const CHART = { width: 240, height: 40 } as const;

/**
 * Figures shown or hidden together: the continuous scheduler's (absent with the hf engine), the GPUs', the
 * per-instance rows (shown with two or more model instances: tritonChatglm.gpus) and a team server's replicas.
 */
type Group = 'scheduler' | 'gpu' | 'instances' | 'replicas';

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
  /** What the figure means, in plain words (the label's tooltip). */
  help: () => string;
  group?: Group;
  value: (from: RowSource, format: FigureFormat) => string;
}

interface Chart {
  id: SeriesName;
  label: () => string;
  /** What the figure means, in plain words (the label's tooltip). */
  help: () => string;
  group?: Group;
  /** The smallest top of the y axis, so a flat, small series does not fill the box. */
  minTop: number;
  /** The top of the y axis with the unit of the values ("20 tokens/s", "1 row"), from the number and its text. */
  axis: (top: number, text: string) => string;
}

/** Axis labels of counts, singular for 1. */
const answers = (top: number, text: string) => (top === 1 ? vscode.l10n.t('{0} answer', text) : vscode.l10n.t('{0} answers', text));
const requests = (top: number, text: string) => (top === 1 ? vscode.l10n.t('{0} request', text) : vscode.l10n.t('{0} requests', text));


type Section =
  | { kind: 'table'; id: string; heading: () => string; group?: Group; rows: readonly Row[] }
  | { kind: 'charts'; id: string; heading: () => string; group?: Group; charts: readonly Chart[] }
  | { kind: 'list'; id: 'gpus' | 'instances' | 'replicas'; heading: () => string; group?: Group };

const triton = (figure: keyof StatusTotals) => ({ triton: sums }: RowSource, f: FigureFormat) => f.value(sums?.[figure]);
const scheduler = (figure: keyof SchedulerTotals) => ({ scheduler: sums }: RowSource, f: FigureFormat) => f.value(sums?.[figure]);
const recent = () => vscode.l10n.t('last 3 minutes, every 2 s');
/** This window's answers and queued explanations, as the "From this window" row shows them. */
const windowActivity = (a: ActivitySnapshot, f: FigureFormat) => vscode.l10n.t('{0} generating, {1} queued', f.value(a.answers.length), f.value(a.queuedExplanations));

const oneWeights = (weights: WeightsInfo) => weights.quantization === 'int8'
  ? vscode.l10n.t('int8 (8-bit quantized weights), {0} activations', weights.dtype)
  : vscode.l10n.t('{0} (not quantized)', weights.dtype);

/**
 * The quantization in use (tritonChatglm.quantization, or the memory plan's choice for `auto`); with several
 * instances each GPU's plan chooses, so differing choices are all named.
 */
const weightsText = ({ weights, instances }: StatusSample) => {
  const texts = [...new Set((instances ?? []).flatMap((i) => (i.weights ? [oneWeights(i.weights)] : [])))];
  if (texts.length > 1) return texts.join('; ');
  return weights ? oneWeights(weights) : '–';
};

/** What each figure means: one sentence each, shared by a row and the chart of the same figure. */
const HELP = {
  generating: () => vscode.l10n.t('Answers the server is writing right now, for every window. It writes several at once: each step adds one token to each of them.'),
  waiting: () => vscode.l10n.t('Answers accepted but not started yet: the server is already writing as many at once as it can.'),
  tritonQueue: () => vscode.l10n.t('Requests Triton has received but not yet handed to the model.'),
  thisWindow: () => vscode.l10n.t('This window\'s chat answers and explanations: those being written, and those waiting to be sent.'),
  weights: () => vscode.l10n.t('The number format of the loaded model weights; int8 needs about half the GPU memory of float16.'),
  tokensPerSecond: () => vscode.l10n.t('Answer tokens written per second, all answers together.'),
  answersPerStep: () => vscode.l10n.t('How many answers each step of the model moved on by one token: the more, the better the GPU is used.'),
  stepsPerSecond: () => vscode.l10n.t('Steps of the model per second; each step writes one token of every answer being written.'),
  promptTokens: () => vscode.l10n.t('Tokens of the questions (with their history and attachments) the model read before answering.'),
  firstToken: () => vscode.l10n.t('From a question\'s arrival to the first token of its answer.'),
  tokensWritten: () => vscode.l10n.t('Answer tokens of the answers finished since the model was loaded.'),
  steps: () => vscode.l10n.t('Steps of the model since it was loaded; each writes one token of every answer being written.'),
  refused: () => vscode.l10n.t('Requests turned away because the server was writing as many answers as it can and its queue was full.'),
  cancelled: () => vscode.l10n.t('Answers stopped before they were complete (Stop, or a window closed).'),
  requestsDone: () => vscode.l10n.t('Requests Triton answered, successfully, since the server started.'),
  requestsFailed: () => vscode.l10n.t('Requests that ended in an error.'),
  batches: () => vscode.l10n.t('How often Triton ran the model; one run can serve several requests together.'),
  perBatch: () => vscode.l10n.t('How many requests Triton handed to the model together in one run.'),
  waitTime: () => vscode.l10n.t('How long a request waited in Triton before the model took it.'),
  modelTime: () => vscode.l10n.t('How long the model worked on a request, from taking it to its last token.'),
  gpuBusy: () => vscode.l10n.t('The share of time the GPU was computing.'),
  gpuMemory: () => vscode.l10n.t('GPU memory in use, by the model and everything else on that GPU.'),
};

/** The page, top to bottom: plain words in the labels, the engine's terms only in the tooltips' explanations. */
const SECTIONS: readonly Section[] = [
  { kind: 'list', id: 'replicas', group: 'replicas', heading: () => vscode.l10n.t('Team server replicas, as its proxy sees them') },
  {
    kind: 'table', id: 'now', heading: () => vscode.l10n.t('Now'), rows: [
      { id: 'activeRows', group: 'scheduler', label: () => vscode.l10n.t('Answers being written'), help: HELP.generating, value: ({ sample }, f) => f.value(sample.scheduler?.activeRows) },
      { id: 'waitingRequests', group: 'scheduler', label: () => vscode.l10n.t('Answers waiting their turn'), help: HELP.waiting, value: ({ sample }, f) => f.value(sample.scheduler?.waitingRequests) },
      { id: 'tritonPending', label: () => vscode.l10n.t('Requests in Triton\'s queue'), help: HELP.tritonQueue, value: ({ sample }, f) => f.value(sample.tritonPending) },
      { id: 'thisWindow', label: () => vscode.l10n.t('From this window'), help: HELP.thisWindow, value: ({ activity }, f) => windowActivity(activity, f) },
      { id: 'weights', label: () => vscode.l10n.t('Model weights'), help: HELP.weights, value: ({ sample }) => weightsText(sample) },
    ],
  },
  { kind: 'list', id: 'instances', group: 'instances', heading: () => vscode.l10n.t('Model instances (the figures above are their sum)') },
  {
    kind: 'charts', id: 'schedulerCharts', group: 'scheduler', heading: () => vscode.l10n.t('Answers ({0})', recent()), charts: [
      { id: 'activeRows', label: () => vscode.l10n.t('Answers being written'), help: HELP.generating, minTop: 1, axis: answers },
      { id: 'waitingRequests', label: () => vscode.l10n.t('Answers waiting their turn'), help: HELP.waiting, minTop: 1, axis: answers },
      { id: 'generatedTokensPerSecond', label: () => vscode.l10n.t('Tokens written per second'), help: HELP.tokensPerSecond, minTop: 1, axis: (_top, text) => vscode.l10n.t('{0} tokens/s', text) },
      { id: 'rowsPerStep', label: () => vscode.l10n.t('Answers per step'), help: HELP.answersPerStep, minTop: 1, axis: answers },
      { id: 'decodeStepsPerSecond', label: () => vscode.l10n.t('Steps per second'), help: HELP.stepsPerSecond, minTop: 1, axis: (_top, text) => vscode.l10n.t('{0} steps/s', text) },
      { id: 'prefillTokensPerSecond', label: () => vscode.l10n.t('Question tokens read per second'), help: HELP.promptTokens, minTop: 1, axis: (_top, text) => vscode.l10n.t('{0} tokens/s', text) },
      { id: 'timeToFirstTokenMs', label: () => vscode.l10n.t('Time to first token (ms)'), help: HELP.firstToken, minTop: 1, axis: (_top, text) => vscode.l10n.t('{0} ms', text) },
    ],
  },
  {
    kind: 'table', id: 'schedulerTotals', group: 'scheduler', heading: () => vscode.l10n.t('Answers since the model was loaded'), rows: [
      { id: 'generatedTokens', label: () => vscode.l10n.t('Tokens written (finished answers)'), help: HELP.tokensWritten, value: scheduler('generatedTokens') },
      { id: 'prefillTokens', label: () => vscode.l10n.t('Question tokens read'), help: HELP.promptTokens, value: scheduler('prefillTokens') },
      { id: 'decodeSteps', label: () => vscode.l10n.t('Steps'), help: HELP.steps, value: scheduler('decodeSteps') },
      { id: 'rowsPerStep', label: () => vscode.l10n.t('Answers per step (average)'), help: HELP.answersPerStep, value: scheduler('rowsPerStep') },
      { id: 'timeToFirstToken', label: () => vscode.l10n.t('Time to first token (ms, mean)'), help: HELP.firstToken, value: scheduler('meanTimeToFirstTokenMs') },
      { id: 'busyRejections', label: () => vscode.l10n.t('Requests refused as busy'), help: HELP.refused, value: scheduler('busyRejections') },
      { id: 'cancelledRequests', label: () => vscode.l10n.t('Requests cancelled'), help: HELP.cancelled, value: scheduler('cancelledRequests') },
    ],
  },
  {
    kind: 'charts', id: 'tritonCharts', heading: () => vscode.l10n.t('Triton ({0})', recent()), charts: [
      { id: 'tritonPending', label: () => vscode.l10n.t('Requests in Triton\'s queue'), help: HELP.tritonQueue, minTop: 1, axis: requests },
      { id: 'requestsPerSecond', label: () => vscode.l10n.t('Requests finished per second'), help: HELP.requestsDone, minTop: 0.001, axis: (_top, text) => vscode.l10n.t('{0} requests/s', text) },
      { id: 'batchSize', label: () => vscode.l10n.t('Requests per run'), help: HELP.perBatch, minTop: 1, axis: requests },
      { id: 'queueMs', label: () => vscode.l10n.t('Waiting time per request (ms)'), help: HELP.waitTime, minTop: 0.001, axis: (_top, text) => vscode.l10n.t('{0} ms', text) },
      { id: 'computeMs', label: () => vscode.l10n.t('Model time per request (ms)'), help: HELP.modelTime, minTop: 0.001, axis: (_top, text) => vscode.l10n.t('{0} ms', text) },
    ],
  },
  {
    kind: 'table', id: 'tritonTotals', heading: () => vscode.l10n.t('Triton since the server started'), rows: [
      { id: 'requests', label: () => vscode.l10n.t('Requests (successful)'), help: HELP.requestsDone, value: triton('requests') },
      { id: 'failures', label: () => vscode.l10n.t('Failed requests'), help: HELP.requestsFailed, value: triton('failures') },
      { id: 'executions', label: () => vscode.l10n.t('Model runs'), help: HELP.batches, value: triton('executions') },
      { id: 'batch', label: () => vscode.l10n.t('Requests per run (average)'), help: HELP.perBatch, value: triton('averageBatchSize') },
      { id: 'queue', label: () => vscode.l10n.t('Waiting time per request (ms)'), help: HELP.waitTime, value: triton('queueMsPerRequest') },
      { id: 'compute', label: () => vscode.l10n.t('Model time per request (ms)'), help: HELP.modelTime, value: triton('computeMsPerRequest') },
    ],
  },
  { kind: 'list', id: 'gpus', group: 'gpu', heading: () => vscode.l10n.t('GPUs') },
  {
    kind: 'charts', id: 'gpuCharts', group: 'gpu', heading: () => vscode.l10n.t('GPUs ({0})', recent()), charts: [
      { id: 'gpuUtilizationPct', label: () => vscode.l10n.t('GPU utilisation %'), help: HELP.gpuBusy, minTop: 100, axis: (_top, text) => vscode.l10n.t('{0} %', text) },
      { id: 'gpuMemoryUsedGiB', label: () => vscode.l10n.t('GPU memory used (GiB)'), help: HELP.gpuMemory, minTop: 0.001, axis: (_top, text) => vscode.l10n.t('{0} GiB', text) },
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
  const figure = ({ id, label, help, group }: Row | Chart) => ({ id, label: label(), help: help(), ...(group ? { group } : {}) });
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
  if ((sample?.instances?.length ?? 0) < 2) out.push('instances');
  if (!sample?.replicas?.length) out.push('replicas');
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

/** One line per model instance: where it runs, its rows now, its tokens/s since `previous`, its finished tokens. */
function instanceLines(sample: StatusSample, previous: StatusSample | undefined, format: FigureFormat): string[] {
  return instanceRows(previous, sample).map((i) => vscode.l10n.t('{0} on {1}: {2} generating, {3} waiting, {4} tokens/s, {5} tokens in finished answers',
    i.instance, i.device ?? '–', format.value(i.activeRows), format.value(i.waitingRequests), format.value(i.rates?.generatedTokensPerSecond), format.value(i.generatedTokens)));
}

/** One line per replica of a team server: ready, or the proxy's HTTP status for it (502: unreachable, 503: loading). */
const replicaLines = (sample: StatusSample) => (sample.replicas ?? []).map((r) => (r.ready
  ? vscode.l10n.t('{0}: ready', r.name)
  : vscode.l10n.t('{0}: not ready (HTTP {1})', r.name, String(r.status))));

/**
 * The figures of `sample`, the charts of `history` (which already holds the sample's point), this window's
 * activity, and why any are missing; `previous` (the sample before) gives each instance's rates.
 */
export function statusUpdate(sample: StatusSample, history: StatusHistory, activity: ActivitySnapshot, notes: readonly string[], format: FigureFormat, previous?: StatusSample): StatusUpdate {
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
      instances: instanceLines(sample, previous, format),
      replicas: replicaLines(sample),
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
    lists: { gpus: [], instances: [], replicas: [] },
    hidden: hiddenGroups(undefined),
    note: vscode.l10n.t('The server is not running.'),
  };
}

/** Only this window's activity changed: its row, with everything else as `last` left it. */
export function activityUpdate(last: StatusUpdate, activity: ActivitySnapshot, format: FigureFormat): StatusUpdate {
  return { type: 'update', figures: { thisWindow: windowActivity(activity, format) }, series: {}, lists: {}, hidden: last.hidden, note: last.note };
}
