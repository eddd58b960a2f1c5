// Chat panel render cost while an answer streams, in headless Chromium, through the webview tests' measurement
// (test/webview/support/render-cost.ts): the real webview bundle (with its benchmark-only RENDER_STATS on), deltas
// a few tokens per animation frame, per-frame render time recorded by the streaming renderer itself. Per round one
// short and one long answer (order alternating), each in a fresh panel with 10 earlier turns; linearity =
// cost(long) ÷ cost(short), so 2.0 means the cost per token does not grow with the answer's length.
//
// Long-block linearity: one block with no blank line (a paragraph, a list, a table, a code fence) of `blockChars`
// streams `blockPerFrame` characters a frame into a fresh panel (after a short warm-up block in the same page);
// the figure is the per-frame cost of the last tenth of the frames ÷ the first tenth (1 = a frame costs the same
// at the end of the block as at its start), worst block kind per round. Frames are paced as fast as the page runs
// them (test/webview/support/page-scripts.ts FAST_FRAMES): the work per frame is the same, without 16 ms waits.
// Huge answer (webview_max_frame_ms_2mb, issue 31): a `hugeChars` answer (2 MB: a list nested four levels deep, and a
// table 24 columns wide, no blank line) streams in 4 KB deltas, one a frame, into a fresh panel; the figure is the
// longest frame of both per round, the end of the answer included (its end step, finalize_ms, and the frames after it
// that render its groups again; an answer over WHOLE_RENDER_MAX is not rendered again as a whole).
// `--audit` also streams the audit's cases of issue 14 once each at the display's frame rate (not part of run-all).
// Usage: node --import tsx bench/webview.ts --out=<file> [--rounds=5] [--short=4000] [--long=8000] [--per-frame=8]
//          [--block-chars=65536] [--block-per-frame=64] [--block-rounds=5] [--huge-chars=2097152] [--huge-rounds=3] [--audit]
import { writeFileSync } from 'node:fs';
import { startHarness, type Harness } from '../test/webview/support/harness';
import { auditCases, hugeAnswer, longBlock, measureTextStream, type HugeAnswerKind, type LongBlockCost, type LongBlockKind } from '../test/webview/support/long-block-cost';
import { FAST_FRAMES } from '../test/webview/support/page-scripts';
import { measureStreamingRenderCost, type RenderCost } from '../test/webview/support/render-cost';
import { loadStats } from './lib/bench-server';
import { readCliArgs } from './lib/cli-args';

export interface WebviewBenchOptions {
  rounds: number;
  shortTokens: number;
  longTokens: number;
  tokensPerFrame: number;
  blockChars: number;
  blockPerFrame: number;
  blockRounds: number;
  hugeChars: number;
  hugeRounds: number;
  audit: boolean;
  log: (line: string) => void;
}

const BLOCK_KINDS: LongBlockKind[] = ['paragraph', 'list', 'table', 'fence'];

async function streamInFreshPanel(harness: Harness, text: string, perFrame: number, options: { fast: boolean; warmup?: string }): Promise<LongBlockCost> {
  const panel = await harness.open({ init: options.fast ? [FAST_FRAMES] : [] });
  try {
    const cost = await measureTextStream(panel, text, perFrame, options.warmup);
    if (panel.errors.length) throw new Error(`the panel reported errors: ${panel.errors.slice(0, 3).join('; ')}`);
    if (!(cost.frames > 0) || !Number.isFinite(cost.growth)) throw new Error(`no render statistics: ${JSON.stringify(cost)}`);
    return cost;
  } finally {
    await panel.page.close();
  }
}

async function measureLongBlocks(harness: Harness, o: WebviewBenchOptions) {
  const { summarize, median, round } = await loadStats();
  const perKind: Record<string, LongBlockCost[]> = Object.fromEntries(BLOCK_KINDS.map((k) => [k, []]));
  const worstPerRound: number[] = [];
  for (let r = 0; r < o.blockRounds; r += 1) {
    const order = BLOCK_KINDS.map((_, i) => BLOCK_KINDS[(i + r) % BLOCK_KINDS.length]!);
    let worst = 0;
    for (const kind of order) {
      const cost = await streamInFreshPanel(harness, longBlock(kind, o.blockChars), o.blockPerFrame, { fast: true, warmup: longBlock(kind, Math.min(8192, o.blockChars)) });
      perKind[kind]!.push(cost);
      worst = Math.max(worst, cost.growth);
    }
    worstPerRound.push(worst);
    o.log(`long blocks round ${r + 1}/${o.blockRounds}: ${BLOCK_KINDS.map((k) => `${k} ${perKind[k]!.at(-1)!.growth.toFixed(2)}×`).join(', ')}`);
  }
  const kinds = Object.fromEntries(BLOCK_KINDS.map((k) => {
    const xs = perKind[k]!;
    return [k, {
      growth: summarize(xs.map((x) => x.growth), 3),
      first_tenth_frame_ms: round(median(xs.map((x) => x.firstTenthAvgMs)), 3),
      last_tenth_frame_ms: round(median(xs.map((x) => x.lastTenthAvgMs)), 3),
      max_frame_ms: round(median(xs.map((x) => x.maxMs)), 2),
      finalize_ms: round(median(xs.map((x) => x.finalizeMs)), 1),
      frames: xs[0]!.frames,
    }];
  }));
  return {
    ...summarize(worstPerRound, 3),
    note: `per-frame render cost, last tenth ÷ first tenth of the frames, while one ${o.blockChars}-character block streams ${o.blockPerFrame} characters a frame; worst of ${BLOCK_KINDS.join(', ')} per round; 1 = constant cost per frame`,
    kinds,
  };
}

const HUGE_KINDS: HugeAnswerKind[] = ['nested-list', 'wide-table'];
const HUGE_DELTA = 4096;

async function measureHugeAnswer(harness: Harness, o: WebviewBenchOptions) {
  const { summarize, median, round } = await loadStats();
  const perKind: Record<string, LongBlockCost[]> = Object.fromEntries(HUGE_KINDS.map((k) => [k, []]));
  const worstPerRound: number[] = [];
  for (let r = 0; r < o.hugeRounds; r += 1) {
    let worst = 0;
    for (const kind of r % 2 ? [...HUGE_KINDS].reverse() : HUGE_KINDS) {
      const text = hugeAnswer(kind, o.hugeChars);
      const cost = await streamInFreshPanel(harness, text, HUGE_DELTA, { fast: true, warmup: text.slice(0, 32 * 1024) });
      perKind[kind]!.push(cost);
      worst = Math.max(worst, cost.maxMs, cost.finalizeMs);
    }
    worstPerRound.push(worst);
    o.log(`huge answer round ${r + 1}/${o.hugeRounds}: ${HUGE_KINDS.map((k) => { const c = perKind[k]!.at(-1)!; return `${k} max frame ${c.maxMs.toFixed(1)} ms, end ${c.finalizeMs.toFixed(1)} ms`; }).join(', ')}`);
  }
  return {
    ...summarize(worstPerRound, 1),
    note: `longest frame while a ${o.hugeChars}-character answer (${HUGE_KINDS.join(', ')}: the worst) streams in ${HUGE_DELTA}-character deltas, one a frame, and ends (the end step and the frames after it included)`,
    kinds: Object.fromEntries(HUGE_KINDS.map((k) => {
      const xs = perKind[k]!;
      return [k, {
        max_frame_ms: round(median(xs.map((x) => x.maxMs)), 1), last_tenth_frame_ms: round(median(xs.map((x) => x.lastTenthAvgMs)), 2),
        max_frame_chars: Math.max(...xs.map((x) => x.maxFrameChars)), frames: xs[0]!.frames,
        finalize_ms: round(median(xs.map((x) => x.finalizeMs)), 1), finalize_chars: Math.max(...xs.map((x) => x.finalizeChars)), longest_task_ms: round(median(xs.map((x) => x.longestTaskMs)), 0),
      }];
    })),
  };
}

async function measureAudit(harness: Harness, o: WebviewBenchOptions) {
  const { round } = await loadStats();
  const out: Record<string, unknown> = {};
  for (const c of auditCases()) {
    const x = await streamInFreshPanel(harness, c.text, c.charsPerFrame, { fast: false, warmup: c.text.slice(0, 8192) });
    out[c.name] = {
      chars: x.chars, chars_per_frame: x.charsPerFrame, frames: x.frames, first_tenth_frame_ms: round(x.firstTenthAvgMs, 2), last_tenth_frame_ms: round(x.lastTenthAvgMs, 2),
      max_frame_ms: round(x.maxMs, 1), total_ms: round(x.totalMs, 0), finalize_ms: round(x.finalizeMs, 1), longest_task_ms: round(x.longestTaskMs, 0), long_tasks: x.longTasks,
    };
    o.log(`audit ${c.name}: ${JSON.stringify(out[c.name])}`);
  }
  return out;
}

export async function measureWebview(o: WebviewBenchOptions): Promise<Record<string, unknown>> {
  const { summarize, pairedRatios, round } = await loadStats();
  const harness = await startHarness();
  try {
    const once = async (tokens: number): Promise<RenderCost> => {
      const panel = await harness.open();
      try {
        const cost = await measureStreamingRenderCost(panel, { tokens, tokensPerFrame: o.tokensPerFrame, priorTurns: 10 });
        if (panel.errors.length) throw new Error(`the panel reported errors: ${panel.errors.join('; ')}`);
        if (!(cost.frames > 0) || !Number.isFinite(cost.totalMs)) throw new Error(`no render statistics: ${JSON.stringify(cost)}`);
        return cost;
      } finally {
        await panel.page.close();
      }
    };
    await once(o.shortTokens); // warm-up (JIT, fonts, highlight.js grammars)
    const short: RenderCost[] = [];
    const long: RenderCost[] = [];
    for (let r = 0; r < o.rounds; r += 1) {
      if (r % 2 === 0) { short.push(await once(o.shortTokens)); long.push(await once(o.longTokens)); } else { long.push(await once(o.longTokens)); short.push(await once(o.shortTokens)); }
      o.log(`round ${r + 1}/${o.rounds}: ${o.shortTokens} tokens ${short.at(-1)!.totalMs.toFixed(0)} ms, ${o.longTokens} tokens ${long.at(-1)!.totalMs.toFixed(0)} ms of rendering`);
    }
    const raw = (xs: RenderCost[]) => xs.map((x) => ({
      tokens: x.tokens, chars: x.chars, frames: x.frames, total_ms: round(x.totalMs, 1), max_frame_ms: round(x.maxMs, 2),
      first_tenth_avg_ms: round(x.firstTenthAvgMs, 3), last_tenth_avg_ms: round(x.lastTenthAvgMs, 3), finalize_ms: round(x.finalizeMs, 1), wall_ms: round(x.wallMs, 0),
    }));
    const longBlocks = await measureLongBlocks(harness, o);
    const huge = o.hugeRounds > 0 ? await measureHugeAnswer(harness, o) : undefined;
    const audit = o.audit ? await measureAudit(harness, o) : undefined;
    return {
      long_block_linearity: longBlocks,
      ...(huge ? { huge_answer: huge } : {}),
      ...(audit ? { audit } : {}),
      linearity: {
        ...summarize(pairedRatios(long.map((x) => x.totalMs), short.map((x) => x.totalMs)), 3),
        note: `render time streaming ${o.longTokens} tokens ÷ ${o.shortTokens} tokens; ${round(o.longTokens / o.shortTokens, 2)} = perfectly linear`,
      },
      ms_per_1k_tokens: {
        ...summarize(long.map((x) => x.totalMs / (x.tokens / 1000)), 2),
        note: `render time per 1000 streamed tokens over the ${o.longTokens}-token answer (the final full render excluded; see finalize_ms)`,
      },
      settings: {
        short_tokens: o.shortTokens, long_tokens: o.longTokens, tokens_per_frame: o.tokensPerFrame, prior_turns: 10, browser: harness.browser.version(),
        block_chars: o.blockChars, block_chars_per_frame: o.blockPerFrame, block_rounds: o.blockRounds,
      },
      rounds: { short: raw(short), long: raw(long) },
    };
  } finally {
    await harness.close();
  }
}

async function main(): Promise<void> {
  const args = readCliArgs();
  const int = args.int;
  const result = await measureWebview({
    rounds: int('rounds', 5), shortTokens: int('short', 4000), longTokens: int('long', 8000), tokensPerFrame: int('per-frame', 8),
    blockChars: int('block-chars', 65536), blockPerFrame: int('block-per-frame', 64), blockRounds: int('block-rounds', 5),
    hugeChars: int('huge-chars', 2 * 1024 * 1024), hugeRounds: int('huge-rounds', 3), audit: args.get('audit') === 'true',
    log: (line) => console.log(`[webview] ${line}`),
  });
  const out = args.get('out');
  if (out) writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  else console.log(JSON.stringify(result, null, 2));
}

if (require.main === module) {
  main().catch((e) => { console.error(e); process.exitCode = 1; });
}
