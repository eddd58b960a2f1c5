#!/usr/bin/env node
// Throughput and latency against concurrency, with dynamic batching (max_batch_size 8, the product default) and
// without (max_batch_size 1, no dynamic_batching block: requests go to the model one by one). A third server,
// max_batch_size 1 that keeps the dynamic batcher (what the extension renders for maxBatchSize 1), shows the cost
// of Triton 2.51's batcher idle wait (bench/README.md). All servers run side by side and every round visits each
// (concurrency, configuration) pair in turn, so a busy shared machine slows all alike. Per point: tokens/s over
// the group's wall time and the median request latency, each the median of `rounds` rounds after a warm-up.
// Usage: node bench/curve.mjs --out=<file> [--rounds=5] [--tokens=256] [--levels=1,2,4,8,16]
import { writeFileSync } from 'node:fs';
import { parseArgs } from './lib/args.mjs';
import { median, pairedRatios, round, summarize } from './lib/stats.mjs';
import { concurrentRound } from './lib/stream-request.mjs';
import { startBenchServers, stopAll } from './lib/test-servers.mjs';

export async function measureCurve({ rounds = 5, maxNewTokens = 256, levels = [1, 2, 4, 8, 16], log = () => {} } = {}) {
  const servers = await startBenchServers([
    { label: 'batched', maxBatchSize: 8 },
    { label: 'unbatched', maxBatchSize: 1, dynamicBatching: false },
    // Triton's 20 ms queue delay, as the extension rendered every batcher before the idle engine's gather took it over.
    { label: 'unbatched_with_batcher', maxBatchSize: 1, queueDelayUs: 20_000 },
  ]);
  try {
    const raw = Object.fromEntries(servers.map((s) => [s.label, Object.fromEntries(levels.map((c) => [c, []]))]));
    for (const s of servers) await concurrentRound(s.url, Math.max(...levels), maxNewTokens); // warm-up
    for (let r = 0; r < rounds; r += 1) {
      for (const c of levels) {
        for (const s of servers) {
          const m = await concurrentRound(s.url, c, maxNewTokens);
          raw[s.label][c].push(m);
          log(`round ${r + 1}/${rounds} c=${c} ${s.label}: ${m.tokens_per_second.toFixed(0)} tok/s, median latency ${median(m.latencies_ms).toFixed(0)} ms`);
        }
      }
    }
    const configurations = {};
    for (const s of servers) {
      configurations[s.label] = {
        max_batch_size: s.maxBatchSize,
        dynamic_batching: s.label !== 'unbatched',
        points: levels.map((c) => ({
          concurrency: c,
          tokens_per_second: summarize(raw[s.label][c].map((m) => m.tokens_per_second), 1),
          median_latency_ms: summarize(raw[s.label][c].map((m) => median(m.latencies_ms)), 1),
          rounds: raw[s.label][c].map((m) => ({
            seconds: round(m.seconds, 4), tokens: m.tokens, tokens_per_second: round(m.tokens_per_second, 1),
            latencies_ms: m.latencies_ms.map((x) => round(x, 1)),
          })),
        })),
        triton_stats: await s.batchStats(),
      };
    }
    const speedupOver = (base) => Object.fromEntries(levels.map((c) => [c, summarize(pairedRatios(
      raw.batched[c].map((m) => m.tokens_per_second), raw[base][c].map((m) => m.tokens_per_second)), 3)]));
    return {
      benchmark: 'concurrency_curve',
      settings: { rounds, max_new_tokens: maxNewTokens, levels, queue_delay: 'batched: Triton 0, idle gather 20 ms (committed config); max batch 1 + batcher: Triton 20 ms', warmup: `one round at concurrency ${Math.max(...levels)} per configuration` },
      server_version: servers[0].serverVersion,
      configurations,
      // batched ÷ max batch 1 without a batcher: what batching itself buys.
      batching_speedup_by_concurrency: speedupOver('unbatched'),
      // batched ÷ max batch 1 with the batcher (inflated by the batcher's idle wait in the baseline).
      speedup_over_max_batch_1_with_batcher: speedupOver('unbatched_with_batcher'),
    };
  } finally {
    await stopAll(servers);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = parseArgs();
  const out = args.string('out');
  const result = await measureCurve({
    rounds: args.int('rounds', 5), maxNewTokens: args.int('tokens', 256), levels: args.ints('levels', [1, 2, 4, 8, 16]),
    log: (line) => console.log(`[curve] ${line}`),
  });
  if (out) writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  else console.log(JSON.stringify(result, null, 2));
}
