// The Server Status page: builds its sections (tables of figures, sparklines, lists) from the host's `layout`, each
// label with a tooltip saying in plain words what the figure means, then writes the figures of each `update` into
// them, as text and SVG path attributes only, and hides the groups the server does not report (no GPU metrics, no
// continuous-batching figures).
import type { StatusFigure, StatusLayout, StatusSection, StatusUpdate } from '../../protocol';
import { el } from '../shared/dom';

const SVG_NS = 'http://www.w3.org/2000/svg';
/** Shown until a figure has a value. */
const NO_VALUE = '–';

interface ChartNodes {
  path: SVGPathElement;
  last: HTMLElement;
  /** The top of the y axis with its unit ("20 tokens/s"). */
  top: HTMLElement;
  /** "collecting…", shown until the series holds a value. */
  collecting: HTMLElement;
}

export class StatusPage {
  private readonly figures = new Map<string, HTMLElement>();
  private readonly charts = new Map<string, ChartNodes>();
  private readonly lists = new Map<string, HTMLElement>();
  /** Every element that belongs to a group, by group. */
  private readonly grouped = new Map<string, HTMLElement[]>();
  private note: HTMLElement | undefined;
  /** An update that came before the layout, applied once there is one. */
  private pending: StatusUpdate | undefined;

  constructor(private readonly root: HTMLElement) {}

  showLayout(layout: StatusLayout): void {
    this.figures.clear();
    this.charts.clear();
    this.lists.clear();
    this.grouped.clear();
    this.note = el('p', { id: 'note', class: 'note', role: 'status' });
    this.root.replaceChildren(el('h1', {}, layout.title), this.note, ...layout.sections.map((s) => this.section(s, layout)));
    this.hide(layout.hidden);
    if (this.pending) this.showUpdate(this.pending);
    this.pending = undefined;
  }

  showUpdate(update: StatusUpdate): void {
    if (!this.note) {
      this.pending = update;
      return;
    }
    for (const [id, text] of Object.entries(update.figures)) {
      const cell = this.figures.get(id);
      if (cell) cell.textContent = text;
    }
    for (const [id, { d, last, top, empty }] of Object.entries(update.series)) {
      const chart = this.charts.get(id);
      if (!chart) continue;
      chart.path.setAttribute('d', d);
      chart.last.textContent = last;
      chart.top.textContent = top;
      chart.collecting.hidden = !empty;
    }
    for (const [id, lines] of Object.entries(update.lists)) {
      this.lists.get(id)?.replaceChildren(...lines.map((line) => el('li', {}, line)));
    }
    this.hide(update.hidden);
    this.note.textContent = update.note;
  }

  private section(section: StatusSection, layout: StatusLayout): HTMLElement {
    let body: HTMLElement;
    switch (section.kind) {
      case 'table':
        body = el('table', { class: 'figures' }, el('tbody', {}, ...section.rows.map((row) => this.row(row))));
        break;
      case 'charts':
        body = el('div', { class: 'charts' }, ...section.charts.map((chart) => this.chart(chart, layout)));
        break;
      case 'list':
        body = el('ul', { id: `list-${section.id}`, class: 'list' });
        this.lists.set(section.id, body);
        break;
    }
    return this.inGroup(el('section', { id: `section-${section.id}` }, el('h2', {}, section.heading), body), section.group);
  }

  private row({ id, label, help, group }: StatusFigure): HTMLElement {
    const value = el('td', { id: `figure-${id}` }, NO_VALUE);
    this.figures.set(id, value);
    return this.inGroup(el('tr', {}, el('th', { scope: 'row' }, labelWithHelp(label, help)), value), group);
  }

  /**
   * A chart: its label and latest value, a y axis from 0 to the top the host names (with the unit), the x axis
   * from "3 min ago" to "now", and "collecting…" over the plot until the series holds a value. The plot stretches
   * to the chart's width (the path keeps its stroke), so the chart fits a side-bar-wide panel.
   */
  private chart({ id, label, help, group }: StatusFigure, { chart: { width, height }, collecting, axis }: StatusLayout): HTMLElement {
    const last = el('span', { class: 'last', id: `last-${id}` }, NO_VALUE);
    const path = svg('path', { id: `path-${id}`, fill: 'none', stroke: 'currentColor', 'stroke-width': '1.5', 'vector-effect': 'non-scaling-stroke', d: '' });
    const box = svg('svg', { viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': label }, path);
    const top = el('span', { class: 'axis-top', id: `top-${id}` }, NO_VALUE);
    const waiting = el('p', { class: 'collecting', id: `collecting-${id}` }, collecting);
    this.charts.set(id, { path, last, top, collecting: waiting });
    return this.inGroup(el('figure', { class: 'chart', id: `chart-${id}` },
      el('figcaption', {}, labelWithHelp(label, help, 'chart-label'), last),
      el('div', { class: 'axis-y', 'aria-hidden': 'true' }, top, el('span', { class: 'axis-zero' }, '0')),
      el('div', { class: 'plot' }, box, waiting),
      el('div', { class: 'axis-x', 'aria-hidden': 'true' }, el('span', {}, axis.start), el('span', {}, axis.end))), group);
  }

  private inGroup(node: HTMLElement, group: string | undefined): HTMLElement {
    if (group) {
      node.setAttribute('data-group', group);
      this.grouped.set(group, [...(this.grouped.get(group) ?? []), node]);
    }
    return node;
  }

  private hide(groups: readonly string[]): void {
    const hidden = new Set(groups);
    for (const [group, nodes] of this.grouped) for (const node of nodes) node.hidden = hidden.has(group);
  }
}

/**
 * A figure's label; with `help` (what it means, in plain words) as its tooltip and its accessible description, and
 * focusable, so that the keyboard reaches the explanation too.
 */
function labelWithHelp(label: string, help: string | undefined, className = 'figure-label'): HTMLElement {
  if (!help) return el('span', { class: className }, label);
  return el('span', { class: `${className} has-help`, title: help, tabindex: '0', 'aria-description': help }, label);
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string>, ...children: Node[]): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}
