// openai_stream_overhead: tokens/s of 8 concurrent streamed answers through the OpenAI-compatible endpoint
// (src/core/openai, driven by the official `openai` client) ÷ the same 8 answers straight from Triton's
// generate_stream (the chat core's streamChat), same test tritonserver, same greedy requests (same inputs, so the
// same tokens). Rounds alternate which path goes first; the figure is the median of the paired per-round ratios.
// The tiny engine is paced at a GPU-like decode step (as the client bench's headline figures): unpaced, its CPU
// step is so short that HTTP framing would be measured against a decode far faster than any real GPU's.
// Usage: node --import tsx bench/openai.ts --out=<file> [--rounds=5] [--tokens=256] [--step-delay-ms=10]
import { writeFileSync } from 'node:fs';
import OpenAI from 'openai';
import { modelSamplingDefaults, startOpenAiServer } from '../src/core/openai';
import { DEFAULT_MODEL_SETTINGS } from '../src/core/repository';
import { DEFAULT_MODEL_ID as MODEL_NAME } from '../src/core/models/catalog';
import { streamChat, TritonClient } from '../src/core/triton';
import { loadStats, loadTestServers } from './lib/bench-server';
import { readCliArgs } from './lib/cli-args';

const CONCURRENCY = 8;

interface Round { seconds: number; tokens: number; tokensPerSecond: number }

async function timed(run: (i: number) => Promise<number>): Promise<Round> {
  const t0 = performance.now();
  const counts = await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => run(i)));
  const seconds = (performance.now() - t0) / 1000;
  const tokens = counts.reduce((a, b) => a + b, 0);
  return { seconds, tokens, tokensPerSecond: tokens / seconds };
}

export async function measureOpenAi(o: { rounds: number; maxNewTokens: number; stepDelayMs: number }): Promise<Record<string, unknown>> {
  const { startBenchServer } = await loadTestServers();
  const { summarize, pairedRatios, round } = await loadStats();
  const server = await startBenchServer({ label: 'openai', maxBatchSize: CONCURRENCY, stepDelayMs: o.stepDelayMs });
  const client = new TritonClient({ baseUrl: server.url });
  const endpoint = await startOpenAiServer({
    backend: { client: () => client, model: MODEL_NAME, defaults: () => modelSamplingDefaults(DEFAULT_MODEL_SETTINGS), idleTimeoutMs: 120_000 },
    host: '127.0.0.1', port: 0,
  });
  const openai = new OpenAI({ baseURL: endpoint.url, apiKey: 'unused', maxRetries: 0 });
  const prompt = (i: number) => `benchmark request ${i}: explain this code`;
  const direct = async (i: number): Promise<number> => {
    for await (const ev of streamChat(client, MODEL_NAME, { prompt: prompt(i), history: [], temperature: 0, topP: 1, maxNewTokens: o.maxNewTokens })) {
      if (ev.type === 'final') return ev.completionTokens;
    }
    throw new Error('no final event');
  };
  const viaEndpoint = async (i: number): Promise<number> => {
    const stream = await openai.chat.completions.create({
      model: MODEL_NAME, messages: [{ role: 'user', content: prompt(i) }], temperature: 0, top_p: 1, max_tokens: o.maxNewTokens,
      stream: true, stream_options: { include_usage: true },
    });
    let tokens: number | undefined;
    for await (const chunk of stream) if (chunk.usage) tokens = chunk.usage.completion_tokens;
    if (tokens === undefined) throw new Error('no usage chunk');
    return tokens;
  };
  try {
    await timed(direct); // warm-up of both paths
    await timed(viaEndpoint);
    const d: Round[] = [];
    const e: Round[] = [];
    for (let r = 0; r < o.rounds; r += 1) {
      if (r % 2 === 0) { d.push(await timed(direct)); e.push(await timed(viaEndpoint)); } else { e.push(await timed(viaEndpoint)); d.push(await timed(direct)); }
    }
    const ratios = pairedRatios(e.map((x) => x.tokensPerSecond), d.map((x) => x.tokensPerSecond));
    return {
      openai_stream_overhead: {
        ...summarize(ratios, 3),
        concurrency: CONCURRENCY, max_new_tokens: o.maxNewTokens, step_delay_ms: o.stepDelayMs,
        endpoint_tokens_per_second: summarize(e.map((x) => x.tokensPerSecond), 2),
        direct_tokens_per_second: summarize(d.map((x) => x.tokensPerSecond), 2),
        rounds: e.map((x, i) => ({ endpoint_s: round(x.seconds, 4), direct_s: round(d[i]!.seconds, 4), endpoint_tokens: x.tokens, direct_tokens: d[i]!.tokens })),
      },
    };
  } finally {
    await endpoint.close();
    await client.close();
    await server.stop();
  }
}

async function main(): Promise<void> {
  const args = readCliArgs();
  const result = await measureOpenAi({ rounds: args.int('rounds', 5), maxNewTokens: args.int('tokens', 256), stepDelayMs: args.int('step-delay-ms', 10) });
  const out = args.get('out');
  if (out) writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  else console.log(JSON.stringify(result, null, 2));
}

if (require.main === module) {
  main().catch((e) => { console.error(e); process.exitCode = 1; });
}
