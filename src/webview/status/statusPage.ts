// The Server Status page: builds its headings, totals table and sparklines from the host's `layout`, then writes
// the figures of each `update` into them, as text and SVG path attributes only.
import type { StatusLayout, StatusUpdate } from '../../protocol';
import { el } from '../shared/dom';

const SVG_NS = 'http://www.w3.org/2000/svg';
/** Shown until a figure has a value. */
const NO_VALUE = '–';

interface ChartNodes {
  path: SVGPathElement;
  last: HTMLElement;
}

export class StatusPage {
  private readonly totals = new Map<string, HTMLElement>();
  private readonly charts = new Map<string, ChartNodes>();
  private note: HTMLElement | undefined;
  private gpus: HTMLElement | undefined;
  /** An update that came before the layout, applied once there is one. */
  private pending: StatusUpdate | undefined;

  constructor(private readonly root: HTMLElement) {}

  showLayout(layout: StatusLayout): void {
    this.totals.clear();
    this.charts.clear();
    this.note = el('p', { id: 'note', class: 'note', role: 'status' });
    this.gpus = el('ul', { id: 'gpus' });
    const rows = layout.totals.map(({ id, label }) => {
      const value = el('td', { id: `total-${id}` }, NO_VALUE);
      this.totals.set(id, value);
      return el('tr', {}, el('th', { scope: 'row' }, label), value);
    });
    const charts = layout.charts.map(({ id, label }) => {
      const last = el('span', { class: 'last', id: `last-${id}` }, NO_VALUE);
      const path = svg('path', { id: `path-${id}`, fill: 'none', stroke: 'currentColor', 'stroke-width': '1.5', d: '' });
      const { width, height } = layout.chart;
      const box = svg('svg', { viewBox: `0 0 ${width} ${height}`, width: String(width), height: String(height), role: 'img', 'aria-label': label }, path);
      this.charts.set(id, { path, last });
      return el('figure', { class: 'chart' }, el('figcaption', {}, `${label} `, last), box);
    });
    this.root.replaceChildren(
      el('h1', {}, layout.title),
      this.note,
      el('h2', {}, layout.headings.totals),
      el('table', { class: 'totals' }, el('tbody', {}, ...rows)),
      el('h2', {}, layout.headings.charts),
      el('div', { class: 'charts' }, ...charts),
      el('h2', {}, layout.headings.gpus),
      this.gpus,
    );
    if (this.pending) this.showUpdate(this.pending);
    this.pending = undefined;
  }

  showUpdate(update: StatusUpdate): void {
    if (!this.note || !this.gpus) {
      this.pending = update;
      return;
    }
    for (const [id, text] of Object.entries(update.totals)) {
      const cell = this.totals.get(id);
      if (cell) cell.textContent = text;
    }
    for (const [id, { d, last }] of Object.entries(update.series)) {
      const chart = this.charts.get(id);
      if (!chart) continue;
      chart.path.setAttribute('d', d);
      chart.last.textContent = last;
    }
    this.gpus.replaceChildren(...update.gpus.map((line) => el('li', {}, line)));
    this.note.textContent = update.note;
  }
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string>, ...children: Node[]): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}
