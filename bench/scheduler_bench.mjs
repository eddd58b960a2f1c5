#!/usr/bin/env node
// Continuous batching against one generation per execute(): the same native engine (the tiny model on CPU, see
// triton/testing/tiny_engine.py) under `scheduler: continuous` and `scheduler: per_execute`, paced at 10 ms per
// forward pass (like a GPU step, which costs about the same for 1 or 8 rows), threads pinned, both servers side
// by side and every round visiting both in turn. Figures (median of `rounds` paired rounds, min–max kept):
//   late_join_wait_ratio        a 16-token request sent 300 ms after a 400-token answer started: ms from sending
//                               to its first delta, per_execute ÷ continuous (target ≥ 10)
//   staggered_throughput_ratio  16 requests 50 ms apart, answer lengths 32–256 from a fixed seed: tokens/s over
//                               the group, continuous ÷ per_execute (target ≥ 1.5)
//   staggered_p95_latency_ratio the same group's 95th-percentile request latency, continuous ÷ per_execute (≤ 0.5)
// Usage: node bench/scheduler_bench.mjs --out=<file> [--rounds=5] [--step-delay-ms=10] [--long-tokens=400]
//          [--short-tokens=16] [--join-after-ms=300] [--requests=16] [--stagger-ms=50] [--min-tokens=32] [--max-tokens=256]
import { writeFileSync } from 'node:fs';
import { parseArgs } from './lib/args.mjs';
import { pairedRatios, quantile, round, summarize } from './lib/stats.mjs';
import { streamWithTimings } from './lib/stream-request.mjs';
import { startBenchServers, stopAll } from './lib/test-servers.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const request = (prompt, maxNewTokens) => ({ prompt, history: '[]', temperature: 0, top_p: 1, max_new_tokens: maxNewTokens });

/** Deterministic answer lengths in [min, max] (mulberry32), the same for both schedulers and every round. */
function answerLengths(count, min, max, seed = 20261201) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: count }, () => min + Math.floor(next() * (max - min + 1)));
}

async function lateJoin(url, s) {
  const long = streamWithTimings(url, request('write a long answer about the project', s.longTokens));
  await sleep(s.joinAfterMs);
  const short = await streamWithTimings(url, request('a short question that arrives later', s.shortTokens));
  const first = await long;
  if (first.tokens !== s.longTokens || short.tokens !== s.shortTokens) throw new Error('a late-join request was cut short');
  return { wait_ms: short.firstDeltaMs, short_total_ms: short.totalMs, long_total_ms: first.totalMs };
}

async function staggered(url, s, lengths) {
  const started = performance.now();
  const pending = lengths.map(async (n, i) => {
    await sleep(i * s.staggerMs);
    return streamWithTimings(url, request(`staggered request ${i}: explain this code`, n));
  });
  const results = await Promise.all(pending);
  const seconds = (performance.now() - started) / 1000;
  const tokens = results.reduce((sum, r) => sum + r.tokens, 0);
  const latencies = results.map((r) => r.totalMs);
  return { tokens, seconds, tokens_per_second: tokens / seconds, p95_ms: quantile(latencies, 0.95), latencies_ms: latencies.map((x) => round(x, 1)) };
}

/** The continuous scheduler's own counters (rows per step, steps) from /metrics. */
async function schedulerCounters(metricsUrl) {
  const text = await (await fetch(metricsUrl)).text();
  const sum = (name) => [...text.matchAll(new RegExp(`^${name}\\{[^}]*\\} ([0-9.e+]+)$`, 'gm'))].reduce((n, m) => n + Number(m[1]), 0);
  return { decode_steps: sum('chatglm3_decode_steps_total'), decode_rows: sum('chatglm3_decode_rows_total'), generated_tokens: sum('chatglm3_generated_tokens_total') };
}

async function measureSchedulers(s, log = () => {}) {
  const servers = await startBenchServers([
    { label: 'continuous', maxBatchSize: 8, stepDelayMs: s.stepDelayMs, scheduler: 'continuous' },
    { label: 'per_execute', maxBatchSize: 8, stepDelayMs: s.stepDelayMs, scheduler: 'per_execute' },
  ]);
  const lengths = answerLengths(s.requests, s.minTokens, s.maxTokens);
  try {
    const raw = Object.fromEntries(servers.map((srv) => [srv.label, { late_join: [], staggered: [] }]));
    for (const srv of servers) { // warm-up
      await lateJoin(srv.url, s);
      await staggered(srv.url, s, lengths);
    }
    const before = await schedulerCounters(servers[0].metricsUrl);
    for (let r = 0; r < s.rounds; r += 1) {
      for (const srv of servers) {
        const join = await lateJoin(srv.url, s);
        const group = await staggered(srv.url, s, lengths);
        raw[srv.label].late_join.push(join);
        raw[srv.label].staggered.push(group);
        log(`round ${r + 1}/${s.rounds} ${srv.label}: late join waited ${join.wait_ms.toFixed(0)} ms; staggered ${group.tokens_per_second.toFixed(0)} tok/s, p95 ${group.p95_ms.toFixed(0)} ms`);
      }
    }
    const after = await schedulerCounters(servers[0].metricsUrl);
    const c = raw.continuous;
    const p = raw.per_execute;
    const steps = after.decode_steps - before.decode_steps;
    return {
      benchmark: 'scheduler',
      settings: { ...s, answer_lengths: lengths, server_version: servers[0].serverVersion },
      late_join_wait_ratio: summarize(pairedRatios(p.late_join.map((x) => x.wait_ms), c.late_join.map((x) => x.wait_ms)), 2),
      staggered_throughput_ratio: summarize(pairedRatios(c.staggered.map((x) => x.tokens_per_second), p.staggered.map((x) => x.tokens_per_second)), 3),
      staggered_p95_latency_ratio: summarize(pairedRatios(c.staggered.map((x) => x.p95_ms), p.staggered.map((x) => x.p95_ms)), 3),
      late_join_wait_ms: { continuous: summarize(c.late_join.map((x) => x.wait_ms), 1), per_execute: summarize(p.late_join.map((x) => x.wait_ms), 1) },
      staggered_tokens_per_second: { continuous: summarize(c.staggered.map((x) => x.tokens_per_second), 1), per_execute: summarize(p.staggered.map((x) => x.tokens_per_second), 1) },
      staggered_p95_ms: { continuous: summarize(c.staggered.map((x) => x.p95_ms), 1), per_execute: summarize(p.staggered.map((x) => x.p95_ms), 1) },
      // From the continuous server's own metrics over the measured rounds: its average batch.
      continuous_rows_per_step: steps > 0 ? round((after.decode_rows - before.decode_rows) / steps, 3) : null,
      continuous_decode_steps: steps,
      rounds: raw,
    };
  } finally {
    await stopAll(servers);
  }
}

async function main() {
  const args = parseArgs();
  const settings = {
    rounds: args.int('rounds', 5), stepDelayMs: args.int('step-delay-ms', 10), longTokens: args.int('long-tokens', 400),
    shortTokens: args.int('short-tokens', 16), joinAfterMs: args.int('join-after-ms', 300), requests: args.int('requests', 16),
    staggerMs: args.int('stagger-ms', 50), minTokens: args.int('min-tokens', 32), maxTokens: args.int('max-tokens', 256),
  };
  const out = args.string('out');
  if (!out) throw new Error('--out=<file> is required');
  const result = await measureSchedulers(settings, (line) => console.log(line));
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`late_join_wait_ratio ${result.late_join_wait_ratio.value}x, staggered_throughput_ratio ${result.staggered_throughput_ratio.value}x, `
    + `staggered_p95_latency_ratio ${result.staggered_p95_latency_ratio.value} → ${out}`);
}

main().catch((e) => { console.error(e?.stack ?? e); process.exitCode = 1; });
