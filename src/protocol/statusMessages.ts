// The Server Status view <-> host protocol, in the chat's style (./messages.ts): zod schemas are the source of
// truth, both sides parse what they receive. The host owns the figures: `layout` names them (sections of tables,
// charts and lists; id + localized label, in display order) and `update` carries their formatted values by id and
// the groups hidden now, so a new figure is a new entry on the host side and nothing here or in the page changes.
import { z } from 'zod';
import { LIMITS } from './limits';
import { messageParser, messageSchema, type ProtocolError } from './validation';

export const STATUS_LIMITS = {
  /** Table rows and charts (each), and GPUs listed. */
  figures: 64,
  sections: 16,
  gpus: 64,
  label: 200,
  help: 400,
  /**
   * A formatted number ("1,234.5", "–") or a short phrase: the weights row ("int8 (8-bit quantized weights), float16
   * activations" is 51 characters; 40 dropped every update of an int8 model), one per differing instance.
   */
  figureText: 160,
  /** SVG path data of one sparkline (a few hundred points). */
  sparklinePath: 20_000,
  chartSidePx: 2_000,
} as const;

/** Names a figure, a section or a group: a table row or a series (`requests`, `gpuUtilizationPct`, `gpu`, ...). */
export const FIGURE_ID_PATTERN = /^[A-Za-z][A-Za-z0-9]{0,39}$/;
/** Sparkline path data as the host draws it: absolute moves and lines only. */
export const SPARKLINE_PATH_PATTERN = /^[ML0-9 .-]*$/;

const figureId = z.string().regex(FIGURE_ID_PATTERN);
const label = z.string().min(1).max(STATUS_LIMITS.label);
const figureText = z.string().max(STATUS_LIMITS.figureText);
const chartSide = z.number().int().positive().max(STATUS_LIMITS.chartSidePx);
const byFigureId = <T extends z.ZodTypeAny>(value: T) => z.record(figureId, value)
  .refine((r) => Object.keys(r).length <= STATUS_LIMITS.figures, 'too many figures');

// ---- status view -> host ----
export const statusViewToHostSchema = z.discriminatedUnion('type', [
  /** The page is listening: the host answers with the layout and the latest figures. */
  messageSchema('ready', {}),
]);
export type StatusViewToHost = z.infer<typeof statusViewToHostSchema>;

// ---- host -> status view ----
/** A figure of the page: a table row or a chart; `group` names the figures shown or hidden together. */
/** A row or chart: its label, and `help`, what the figure means in plain words (the label's tooltip). */
const figure = z.object({ id: figureId, label, help: z.string().min(1).max(STATUS_LIMITS.help).optional(), group: figureId.optional() }).strict();
const figures = z.array(figure).max(STATUS_LIMITS.figures);
const section = <K extends string, S extends z.ZodRawShape>(kind: K, shape: S) =>
  z.object({ kind: z.literal(kind), id: figureId, heading: label, group: figureId.optional(), ...shape }).strict();

export const statusSectionSchema = z.discriminatedUnion('kind', [
  /** Rows of figures, top to bottom. */
  section('table', { rows: figures }),
  /** Sparklines, in order; each draws the series of the same id. */
  section('charts', { charts: figures }),
  /** Lines of text replaced by each update (one per GPU). */
  section('list', {}),
]);
export type StatusSection = z.infer<typeof statusSectionSchema>;

const groups = z.array(figureId).max(STATUS_LIMITS.figures);

export const hostToStatusViewSchema = z.discriminatedUnion('type', [
  messageSchema('layout', {
    title: label,
    /** The page from top to bottom. */
    sections: z.array(statusSectionSchema).max(STATUS_LIMITS.sections),
    /** The box every sparkline path is drawn in. */
    chart: z.object({ width: chartSide, height: chartSide }).strict(),
    /** What a chart says until its series holds a value ("collecting…"). */
    collecting: label,
    /** The x axis's two ends ("3 min ago", "now"). */
    axis: z.object({ start: label, end: label }).strict(),
    /** Groups hidden until an update says otherwise. */
    hidden: groups,
  }),
  messageSchema('update', {
    /** Values of table rows; a row without one keeps its last value. */
    figures: byFigureId(figureText),
    /**
     * Each chart's path, latest value, the top of its y axis with the unit ("20 tokens/s") and whether it holds a
     * value yet; a chart without an entry keeps its last.
     */
    series: byFigureId(z.object({
      d: z.string().max(STATUS_LIMITS.sparklinePath).regex(SPARKLINE_PATH_PATTERN), last: figureText, top: figureText, empty: z.boolean(),
    }).strict()),
    /** Lines of each list section (replace the list); a list without an entry keeps its lines. */
    lists: byFigureId(z.array(z.string().max(STATUS_LIMITS.label)).max(STATUS_LIMITS.gpus)),
    /** Groups of figures (and sections) hidden now: what the server does not report (no GPU metrics, no scheduler). */
    hidden: groups,
    /** Why figures are missing (server not running, no metrics...); '' when nothing is. */
    note: z.string().max(LIMITS.errorText),
  }),
]);
export type HostToStatusView = z.infer<typeof hostToStatusViewSchema>;
export type StatusLayout = Extract<HostToStatusView, { type: 'layout' }>;
export type StatusFigure = z.infer<typeof figure>;
export type StatusUpdate = Extract<HostToStatusView, { type: 'update' }>;

/** Validates a message posted by the status view. Never throws. */
export const parseStatusViewToHost: (raw: unknown) => StatusViewToHost | ProtocolError = messageParser(statusViewToHostSchema);

/** Validates a message posted to the status view. Never throws. */
export const parseHostToStatusView: (raw: unknown) => HostToStatusView | ProtocolError = messageParser(hostToStatusViewSchema);
