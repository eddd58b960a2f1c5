// The benchmark's pure pieces (bench/lib): statistics, result composition from the parts' outputs, the README
// table and the hand-written SVG. No timings are asserted anywhere.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

const bench = resolve(__dirname, '../../../bench');
const load = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(join(bench, rel)).href)) as T;

interface Figure { value: number | null; median_of: number; min: number | null; max: number | null; met?: boolean | null; reason?: string; source?: string }
interface Stats {
  median(v: number[]): number;
  quantile(v: number[], q: number): number;
  summarize(v: number[], digits?: number): Figure;
  pairedRatios(a: number[], b: number[]): number[];
}
interface Compose {
  TARGETS: Record<string, { op: string | null }>;
  meets(key: string, value: number | null): boolean | null;
  composeResults(input: Record<string, unknown>): Record<string, unknown> & { errors: Record<string, string> };
}
interface Svg { niceTicks(max: number, count?: number): number[]; concurrencyCurveSvg(curve: unknown, caption: string): string }
interface Report { resultsMarkdown(latest: unknown, svg: string): string; updateReadme(path: string, md: string): void; BEGIN: string; END: string }
interface Args { parseArgs(argv: string[]): { int(n: string, f: number): number; ints(n: string, f: number[]): number[]; has(n: string): boolean } }

test('median, quantile and summarize keep the spread; bad input is refused', async () => {
  const s = await load<Stats>('lib/stats.mjs');
  assert.equal(s.median([5, 1, 3]), 3);
  assert.equal(s.median([4, 1, 3, 2]), 2.5);
  assert.equal(s.quantile([0, 10], 0.25), 2.5);
  assert.deepEqual(s.summarize([3, 9, 1, 7, 5]), { value: 5, median_of: 5, min: 1, max: 9 });
  assert.throws(() => s.summarize([]), /no values/);
  assert.throws(() => s.summarize([1, Number.NaN]), /not a finite number/);
  assert.throws(() => s.quantile([1], 2), /quantile/);
  assert.deepEqual(s.pairedRatios([4, 9], [2, 3]), [2, 3]);
  assert.throws(() => s.pairedRatios([1, 2], [1]), /equally long/);
  assert.throws(() => s.pairedRatios([1], [0]), /not positive/);
});

test('targets: >= and <= figures are judged, recorded ones and missing values are not', async () => {
  const c = await load<Compose>('lib/compose.mjs');
  assert.equal(c.meets('server_batching_speedup', 4), true);
  assert.equal(c.meets('server_batching_speedup', 3.99), false);
  assert.equal(c.meets('ttft_fraction', 0.05), true);
  assert.equal(c.meets('ttft_fraction', 0.051), false);
  assert.equal(c.meets('webview_ms_per_1k_tokens', 12), null);
  assert.equal(c.meets('explain_fanout_speedup', null), null);
});

const curveFixture = {
  benchmark: 'concurrency_curve',
  settings: { rounds: 2, max_new_tokens: 16, levels: [1, 8] },
  server_version: '2.51.0',
  configurations: {
    batched: { max_batch_size: 8, points: [1, 8].map((c) => ({ concurrency: c, tokens_per_second: { value: 100 * c, median_of: 2, min: 90 * c, max: 110 * c }, median_latency_ms: { value: 40, median_of: 2, min: 35, max: 45 } })) },
    unbatched: { max_batch_size: 1, points: [1, 8].map((c) => ({ concurrency: c, tokens_per_second: { value: 120, median_of: 2, min: 100, max: 130 }, median_latency_ms: { value: 20 * c, median_of: 2, min: 18 * c, max: 25 * c } })) },
  },
  batching_speedup_by_concurrency: { 1: { value: 0.8, median_of: 2, min: 0.7, max: 0.9 }, 8: { value: 6.5, median_of: 2, min: 6, max: 7 } },
};

const serverFixture = {
  speedup_median: 4.5,
  description: 'fixture',
  dynamic_batching: { tokens_per_second: { median: 900 }, rounds: [{ tokens_per_second: 900 }, { tokens_per_second: 800 }, { tokens_per_second: 1000 }], server_stats: {} },
  no_batching: { tokens_per_second: { median: 200 }, rounds: [{ tokens_per_second: 200 }, { tokens_per_second: 250 }, { tokens_per_second: 200 }], server_stats: {} },
};

function composeInput(parts: Record<string, unknown>) {
  return {
    parts, mode: 'smoke', startedAt: new Date(0), finishedAt: new Date(5000), loadAverage: { start: [1, 1, 1], end: [1, 1, 1] },
    machine: { nproc: 2, cpu_model: 'Test CPU', memory_gib: 4, os: 'Test OS', node: 'v20', python: '3.11', torch: '1.13', numpy: '1.24', threads: { OMP_NUM_THREADS: '1' } },
  };
}

test('composeResults copies the server bench figure (ratio of medians, per-round spread) and every target key', async () => {
  const c = await load<Compose>('lib/compose.mjs');
  const latest = c.composeResults(composeInput({
    server: { ok: true, result: serverFixture },
    curve: { ok: true, result: curveFixture },
    client: { ok: false, error: 'exit 1: boom' },
  }));
  const server = latest.server_batching_speedup as Figure;
  assert.equal(server.value, 4.5);
  assert.equal(server.median_of, 3);
  assert.equal(server.min, 3.2); // 800 / 250
  assert.equal(server.max, 5); // 1000 / 200
  assert.equal(server.met, true);
  for (const key of Object.keys(c.TARGETS)) assert.ok(key in latest, `latest.json has ${key}`);
  const explain = latest.explain_fanout_speedup as Figure;
  assert.equal(explain.value, null);
  assert.match(explain.reason ?? '', /boom/);
  assert.deepEqual(Object.keys(latest.errors), ['client']);
});

test('without the server bench the speedup comes from the curve at concurrency 8, and says so', async () => {
  const c = await load<Compose>('lib/compose.mjs');
  const latest = c.composeResults(composeInput({ curve: { ok: true, result: curveFixture } }));
  const server = latest.server_batching_speedup as Figure;
  assert.equal(server.value, 6.5);
  assert.match(server.source ?? '', /curve/);
  const broken = c.composeResults(composeInput({ server: { ok: true, result: { speedup_median: 3 } } }));
  assert.equal((broken.server_batching_speedup as Figure).value, null);
  assert.match((broken.server_batching_speedup as Figure).reason ?? '', /server\.json/);
});

test('the README section lists every figure and the curve; only the marked section is replaced', async () => {
  const c = await load<Compose>('lib/compose.mjs');
  const r = await load<Report>('lib/report.mjs');
  const latest = c.composeResults(composeInput({ server: { ok: true, result: serverFixture }, curve: { ok: true, result: curveFixture } }));
  const md = r.resultsMarkdown(latest, 'concurrency.svg');
  for (const key of Object.keys(c.TARGETS)) assert.match(md, new RegExp(`\`${key}\``));
  assert.match(md, /results\/concurrency\.svg/);
  assert.match(md, /\| 8 \| 800 \| 120 \| 6\.50× \|/);
  assert.match(md, /Test CPU/);
  const dir = mkdtempSync(join(tmpdir(), 'bench-readme-'));
  try {
    const file = join(dir, 'README.md');
    writeFileSync(file, `# Title\nkept\n${r.BEGIN}\nold\n${r.END}\nalso kept\n`);
    r.updateReadme(file, 'new table');
    assert.equal(readFileSync(file, 'utf8'), `# Title\nkept\n${r.BEGIN}\nnew table\n${r.END}\nalso kept\n`);
    writeFileSync(file, 'no markers');
    assert.throws(() => r.updateReadme(file, 'x'), /markers/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the SVG chart has one line per configuration, escapes text and uses round ticks', async () => {
  const s = await load<Svg>('lib/svg-chart.mjs');
  assert.deepEqual(s.niceTicks(843), [0, 200, 400, 600, 800, 1000]);
  assert.deepEqual(s.niceTicks(0.7), [0, 0.2, 0.4, 0.6, 0.8]);
  const svg = s.concurrencyCurveSvg(curveFixture, 'caption <with> & "quotes"');
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.equal((svg.match(/<polyline /g) ?? []).length, 4, 'two configurations × two panels');
  assert.match(svg, /caption &lt;with&gt; &amp; &quot;quotes&quot;/);
  assert.doesNotMatch(svg, /NaN|undefined/);
});

test('benchmark options are validated', async () => {
  const a = await load<Args>('lib/args.mjs');
  const args = a.parseArgs(['--rounds=3', '--levels=1,2,4', '--quick']);
  assert.equal(args.int('rounds', 5), 3);
  assert.deepEqual(args.ints('levels', [1]), [1, 2, 4]);
  assert.equal(args.has('quick'), true);
  assert.throws(() => a.parseArgs(['rounds=3']), /unrecognised/);
  assert.throws(() => a.parseArgs(['--rounds=0']).int('rounds', 5), /integer >= 1/);
  assert.throws(() => a.parseArgs(['--levels=1,x']).ints('levels', [1]), /positive integers/);
});

test('the no-batcher baseline config drops exactly the dynamic_batching block', async () => {
  const t = await load<{ withoutDynamicBatching(text: string): string }>('lib/test-servers.mjs');
  const config = readFileSync(resolve(bench, '../triton/model_repository/chatglm3-6b/config.pbtxt'), 'utf8');
  const out = t.withoutDynamicBatching(config);
  assert.doesNotMatch(out, /dynamic_batching|max_queue_delay_microseconds|default_queue_policy/);
  assert.match(out, /max_batch_size: 8/);
  assert.match(out, /model_transaction_policy \{ decoupled: true \}/);
  assert.match(out, /instance_group \[/);
  assert.equal((out.match(/\{/g) ?? []).length, (out.match(/\}/g) ?? []).length, 'braces stay balanced');
  assert.throws(() => t.withoutDynamicBatching('max_batch_size: 1\n'), /no dynamic_batching block/);
  assert.throws(() => t.withoutDynamicBatching('dynamic_batching {\n  x { y }\n'), /unbalanced/);
});

test('--only keeps the figures of the parts it did not run from the previous file, marked with their run', async () => {
  const c = await load<Compose>('lib/compose.mjs');
  const m = await load<{ keepFiguresNotRun(latest: unknown, previous: unknown): Record<string, Figure & { kept_from?: string }> & { kept_from_previous_run: Record<string, string> } }>('lib/merge.mjs');
  const previous = { ...c.composeResults(composeInput({ server: { ok: true, result: serverFixture }, curve: { ok: true, result: curveFixture } })), generated_at: '2026-01-01T00:00:00.000Z' };
  const engine = { decode_host_syncs_per_step: { value: 1, median_of: 5, min: 1, max: 1 }, decode_ops_per_layer: { value: 28, median_of: 1, min: 28, max: 28 },
    prefill_stall_ratio: { value: 2.1, median_of: 5, min: 1.8, max: 2.6 } };
  const now = c.composeResults(composeInput({ engine: { ok: true, result: engine }, client: { ok: false, error: 'exit 1: boom' } }));
  const merged = m.keepFiguresNotRun(now, previous);
  assert.equal(merged.prefill_stall_ratio.value, 2.1);
  assert.equal(merged.prefill_stall_ratio.met, true);
  assert.equal(merged.decode_host_syncs_per_step.met, true);
  assert.equal(merged.server_batching_speedup.value, 4.5);
  assert.equal(merged.server_batching_speedup.kept_from, '2026-01-01T00:00:00.000Z');
  assert.equal(merged.explain_fanout_speedup.value, null, 'a part that ran and failed is not papered over');
  assert.equal(merged.kept_from_previous_run.server_batching_speedup, '2026-01-01T00:00:00.000Z');
  assert.equal(m.keepFiguresNotRun(now, { ...previous, mode: 'quick' }), now, 'never across modes');
});
