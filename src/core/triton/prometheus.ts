// Minimal parser for the Prometheus text exposition format served by Triton's metrics port (:8002/metrics).
// Enough for counters, gauges, summaries and histograms as flat samples; exemplars and timestamps are ignored.

export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedMetrics {
  samples: MetricSample[];
  /** `# HELP` text per metric family. */
  help: Record<string, string>;
  /** `# TYPE` per metric family (counter, gauge, summary, histogram, untyped). */
  types: Record<string, string>;
}

export function parsePrometheusText(text: string): ParsedMetrics {
  const result: ParsedMetrics = { samples: [], help: {}, types: {} };
  for (const rawLine of text.split('\n')) {
    const line = rawLine.trim();
    if (!line) continue;
    if (line.startsWith('#')) {
      const m = /^#\s*(HELP|TYPE)\s+(\S+)\s*(.*)$/.exec(line);
      if (m) (m[1] === 'HELP' ? result.help : result.types)[m[2]!] = m[3]!;
      continue;
    }
    const sample = parseSampleLine(line);
    if (sample) result.samples.push(sample);
  }
  return result;
}

function parseSampleLine(line: string): MetricSample | undefined {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) return undefined;
  const name = nameMatch[0];
  let pos = name.length;
  const labels: Record<string, string> = {};
  if (line[pos] === '{') {
    pos++;
    for (;;) {
      while (line[pos] === ' ' || line[pos] === ',') pos++;
      if (line[pos] === '}') { pos++; break; }
      const key = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(pos));
      if (!key) return undefined;
      pos += key[0].length;
      while (line[pos] === ' ') pos++;
      if (line[pos] !== '=' || line[pos + 1] !== '"') return undefined;
      pos += 2;
      let value = '';
      while (pos < line.length && line[pos] !== '"') {
        if (line[pos] === '\\' && pos + 1 < line.length) {
          const next = line[pos + 1];
          value += next === 'n' ? '\n' : next;
          pos += 2;
        } else {
          value += line[pos];
          pos++;
        }
      }
      if (line[pos] !== '"') return undefined;
      pos++;
      labels[key[0]] = value;
    }
  }
  const rest = line.slice(pos).trim().split(/\s+/);
  if (!rest[0]) return undefined;
  const value = parsePromNumber(rest[0]);
  if (value === undefined) return undefined;
  return { name, labels, value };
}

function parsePromNumber(s: string): number | undefined {
  if (s === '+Inf' || s === 'Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  const n = Number(s);
  return Number.isNaN(n) ? undefined : n;
}

/** Samples of one metric whose labels include all of `labels`. */
export function findSamples(metrics: ParsedMetrics, name: string, labels: Record<string, string> = {}): MetricSample[] {
  return metrics.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** Sum of the matching samples' values (0 if none): e.g. total `nv_inference_count` of one model. */
export function sumMetric(metrics: ParsedMetrics, name: string, labels: Record<string, string> = {}): number {
  return findSamples(metrics, name, labels).reduce((acc, s) => acc + s.value, 0);
}
