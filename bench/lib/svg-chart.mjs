// Hand-written SVG line charts for the concurrency curve (no chart library): x = concurrency on a log2 axis,
// one line per configuration through the medians, a whisker from min to max at every point.

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));

/** 1, 2, 2.5, 5 × 10^k steps giving about `count` ticks from 0 to max. */
export function niceTicks(max, count = 5) {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const ticks = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push(+v.toFixed(10));
  if (ticks.at(-1) < max) ticks.push(+(ticks.at(-1) + step).toFixed(10));
  return ticks;
}

/**
 * One panel. `series`: [{ name, points: [{ x, value, min, max }] }] with x > 0. Returns an <g> element string of
 * width × height placed at (left, top).
 */
export function linePanel({ title, yLabel, series, left, top, width, height }) {
  const pad = { l: 62, r: 14, t: 30, b: 44 };
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p.x)))].sort((a, b) => a - b);
  if (xs.length === 0) throw new Error(`chart '${title}' has no points`);
  const yTicks = niceTicks(Math.max(...series.flatMap((s) => s.points.map((p) => p.max ?? p.value))));
  const yMax = yTicks.at(-1);
  const lx = (x) => Math.log2(x);
  const [x0, x1] = [lx(xs[0]), lx(xs.at(-1))];
  const px = (x) => pad.l + (x1 === x0 ? 0.5 : (lx(x) - x0) / (x1 - x0)) * (width - pad.l - pad.r);
  const py = (y) => pad.t + (1 - y / yMax) * (height - pad.t - pad.b);
  const out = [`<g transform="translate(${left},${top})">`];
  out.push(`<text x="${width / 2}" y="18" text-anchor="middle" font-weight="bold">${esc(title)}</text>`);
  const tickText = yTicks.every(Number.isInteger) ? (t) => String(t) : (t) => String(+t.toPrecision(3));
  for (const t of yTicks) {
    out.push(`<line x1="${pad.l}" x2="${width - pad.r}" y1="${py(t).toFixed(1)}" y2="${py(t).toFixed(1)}" stroke="#ddd"/>`);
    out.push(`<text x="${pad.l - 6}" y="${(py(t) + 4).toFixed(1)}" text-anchor="end">${esc(tickText(t))}</text>`);
  }
  for (const x of xs) {
    out.push(`<line x1="${px(x).toFixed(1)}" x2="${px(x).toFixed(1)}" y1="${pad.t}" y2="${height - pad.b}" stroke="#f0f0f0"/>`);
    out.push(`<text x="${px(x).toFixed(1)}" y="${height - pad.b + 16}" text-anchor="middle">${x}</text>`);
  }
  out.push(`<text x="${(pad.l + width - pad.r) / 2}" y="${height - 8}" text-anchor="middle">concurrent requests</text>`);
  out.push(`<text transform="translate(14,${(pad.t + height - pad.b) / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`);
  out.push(`<rect x="${pad.l}" y="${pad.t}" width="${width - pad.l - pad.r}" height="${height - pad.t - pad.b}" fill="none" stroke="#888"/>`);
  series.forEach((s, i) => {
    const color = s.color ?? PALETTE[i % PALETTE.length];
    const pts = [...s.points].sort((a, b) => a.x - b.x);
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map((p) => `${px(p.x).toFixed(1)},${py(p.value).toFixed(1)}`).join(' ')}"/>`);
    for (const p of pts) {
      if (p.min !== undefined && p.max !== undefined) {
        out.push(`<line x1="${px(p.x).toFixed(1)}" x2="${px(p.x).toFixed(1)}" y1="${py(p.min).toFixed(1)}" y2="${py(p.max).toFixed(1)}" stroke="${color}" stroke-opacity="0.5" stroke-width="6"/>`);
      }
      out.push(`<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.value).toFixed(1)}" r="3.5" fill="${color}"><title>${esc(`${s.name}, ${p.x}: ${fmt(p.value)}`)}</title></circle>`);
    }
  });
  out.push('</g>');
  return out.join('\n');
}

/** The whole figure: panels side by side under a shared legend and caption. */
export function curveSvg({ caption, panels, legend }) {
  const pw = 440;
  const ph = 300;
  const width = pw * panels.length;
  const height = ph + 56;
  const body = panels.map((p, i) => linePanel({ ...p, left: i * pw, top: 28, width: pw, height: ph }));
  // Legend entries one after another; 7 px per character is a safe width estimate for 12 px sans-serif.
  let x = 20;
  const items = legend.map((name, i) => {
    const item = `<rect x="${x}" y="8" width="14" height="14" fill="${PALETTE[i % PALETTE.length]}"/><text x="${x + 20}" y="20">${esc(name)}</text>`;
    x += 20 + name.length * 7 + 24;
    return item;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    ...items,
    ...body,
    `<text x="${width / 2}" y="${height - 6}" text-anchor="middle" fill="#555" font-size="11">${esc(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}

/** Chart of a curve result from bench/curve.mjs: tokens/s and median latency per configuration. */
export function concurrencyCurveSvg(curve, caption) {
  const configs = Object.entries(curve.configurations);
  const names = configs.map(([, c]) => (c.max_batch_size > 1
    ? `dynamic batching, max batch ${c.max_batch_size}`
    : c.dynamic_batching ? 'max batch 1 + batcher (idle-wait stall)' : 'no batching, max batch 1'));
  const seriesOf = (field) => configs.map(([, c], i) => ({
    name: names[i],
    points: c.points.map((p) => ({ x: p.concurrency, value: p[field].value, min: p[field].min, max: p[field].max })),
  }));
  return curveSvg({
    caption,
    legend: names,
    panels: [
      { title: 'Throughput', yLabel: 'tokens/s (all requests)', series: seriesOf('tokens_per_second') },
      { title: 'Latency', yLabel: 'median request latency (ms)', series: seriesOf('median_latency_ms') },
    ],
  });
}
