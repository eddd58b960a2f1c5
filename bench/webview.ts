// Chat panel render cost while an answer streams, in headless Chromium, through the webview tests' measurement
// (test/webview/support/render-cost.ts): the real webview bundle (with its benchmark-only RENDER_STATS on), deltas
// a few tokens per animation frame, per-frame render time recorded by the streaming renderer itself. Per round one
// short and one long answer (order alternating), each in a fresh panel with 10 earlier turns; linearity =
// cost(long) ÷ cost(short), so 2.0 means the cost per token does not grow with the answer's length.
// Usage: node --import tsx bench/webview.ts --out=<file> [--rounds=5] [--short=4000] [--long=8000] [--per-frame=8]
import { writeFileSync } from 'node:fs';
import { startHarness } from '../test/webview/support/harness';
import { measureStreamingRenderCost, type RenderCost } from '../test/webview/support/render-cost';
import { loadStats } from './lib/bench-server';
import { readCliArgs } from './lib/cli-args';

export interface WebviewBenchOptions {
  rounds: number;
  shortTokens: number;
  longTokens: number;
  tokensPerFrame: number;
  log: (line: string) => void;
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
    return {
      linearity: {
        ...summarize(pairedRatios(long.map((x) => x.totalMs), short.map((x) => x.totalMs)), 3),
        note: `render time streaming ${o.longTokens} tokens ÷ ${o.shortTokens} tokens; ${round(o.longTokens / o.shortTokens, 2)} = perfectly linear`,
      },
      ms_per_1k_tokens: {
        ...summarize(long.map((x) => x.totalMs / (x.tokens / 1000)), 2),
        note: `render time per 1000 streamed tokens over the ${o.longTokens}-token answer (the final full render excluded; see finalize_ms)`,
      },
      settings: { short_tokens: o.shortTokens, long_tokens: o.longTokens, tokens_per_frame: o.tokensPerFrame, prior_turns: 10, browser: harness.browser.version() },
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
    log: (line) => console.log(`[webview] ${line}`),
  });
  const out = args.get('out');
  if (out) writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  else console.log(JSON.stringify(result, null, 2));
}

if (require.main === module) {
  main().catch((e) => { console.error(e); process.exitCode = 1; });
}
