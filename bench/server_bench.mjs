#!/usr/bin/env node
// Server benchmark: tokens/s of 8 concurrent streamed requests through the real tritonserver (CPU, tiny engine)
// with 8 rows generating together (max_batch_size 8 = max_active_rows 8, the shipped config: continuous
// scheduler) versus 1 active row. Same model, same greedy requests, threads pinned to 1; one warm-up round, then the
// median of 5 measured rounds, alternating between the two servers (min, max and raw figures kept).
// Writes bench/results/server.json. Target: batched >= 4x unbatched.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { modelName, prepareTestRepository, startTritonServer } from '../test/support/triton-process.mjs';
import { withoutDynamicBatching } from './lib/test-servers.mjs';

const CONCURRENCY = 8;
const MAX_NEW_TOKENS = 256;
const ROUNDS = 5;
const TARGET = 4;
// The scheduler of the shipped config (continuous); `--scheduler=per_execute` measures the old path.
const SCHEDULER = (process.argv.find((a) => a.startsWith('--scheduler=')) ?? '--scheduler=continuous').slice('--scheduler='.length);
const outFile = fileURLToPath(new URL('./results/server.json', import.meta.url));

async function streamOne(url, i) {
  // Every request carries the same set of inputs: Triton's dynamic batcher only merges requests whose inputs match.
  const body = { prompt: `benchmark request ${i}: explain this code`, history: '[]', temperature: 0, top_p: 1, max_new_tokens: MAX_NEW_TOKENS };
  const res = await fetch(`${url}/v2/models/${modelName}/generate_stream`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`request ${i}: HTTP ${res.status} ${text}`);
  const events = text.split('\n\n').filter((b) => b.startsWith('data:')).map((b) => JSON.parse(b.slice(5)));
  const final = events.at(-1);
  if (final.error || final.completion_tokens === undefined) throw new Error(`request ${i}: ${JSON.stringify(final)}`);
  return { tokens: final.completion_tokens, events: events.length };
}

async function round(url) {
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => streamOne(url, i)));
  const seconds = (performance.now() - started) / 1000;
  const tokens = results.reduce((n, r) => n + r.tokens, 0);
  return { seconds, tokens, tokensPerSecond: tokens / seconds };
}

async function startServer(label, maxBatchSize) {
  const dir = mkdtempSync(join(tmpdir(), `bench-${label}-`));
  const repository = prepareTestRepository(join(dir, 'repo'), { maxBatchSize, scheduler: SCHEDULER });
  if (maxBatchSize === 1) {
    // As the extension renders it (src/core/repository/renderConfig.ts): batch size 1 gets no dynamic batcher,
    // whose 500 ms idle wake-up would otherwise slow this baseline down and flatter the ratio.
    const cfg = join(repository, modelName, 'config.pbtxt');
    writeFileSync(cfg, withoutDynamicBatching(readFileSync(cfg, 'utf8')));
  }
  const server = await startTritonServer({ repository, env: { TINY_ENGINE_THREADS: '1' } });
  const stop = async () => { await server.stop(); rmSync(dir, { recursive: true, force: true }); };
  try {
    const load = await fetch(`${server.url}/v2/repository/models/${modelName}/load`, { method: 'POST', body: '{}' });
    if (load.status !== 200) throw new Error(`load failed: ${await load.text()}\n${server.log()}`);
  } catch (err) {
    await stop();
    throw err;
  }
  return { label, maxBatchSize, url: server.url, stop, rounds: [] };
}

async function modelStats(url) {
  return (await (await fetch(`${url}/v2/models/${modelName}/stats`)).json()).model_stats[0];
}

/** Seconds the model spent executing (sum over executions, from batch_stats) between two stats snapshots. */
function computeSeconds(before, after) {
  const ns = (stats) => stats.batch_stats.reduce((sum, b) => sum + Number(b.compute_infer.ns), 0);
  return (ns(after) - ns(before)) / 1e9;
}

function summarise(s) {
  const tps = s.rounds.map((r) => r.tokensPerSecond).sort((a, b) => a - b);
  const tokens = s.rounds.reduce((n, r) => n + r.tokens, 0);
  const compute = computeSeconds(s.statsBefore, s.statsAfter);
  const wall = s.rounds.reduce((n, r) => n + r.seconds, 0);
  return {
    max_batch_size: s.maxBatchSize,
    tokens_per_second: { median: tps[Math.floor(tps.length / 2)], min: tps[0], max: tps.at(-1) },
    rounds: s.rounds.map((r) => ({ seconds: +r.seconds.toFixed(4), tokens: r.tokens, tokens_per_second: +r.tokensPerSecond.toFixed(2) })),
    // Time inside execute() only: excludes HTTP, queueing and the dynamic batcher's idle gaps between executions.
    execute_seconds: +compute.toFixed(4),
    wall_seconds: +wall.toFixed(4),
    tokens_per_execute_second: +(tokens / compute).toFixed(2),
    server_stats: {
      inference_count: s.statsAfter.inference_count - s.statsBefore.inference_count,
      execution_count: s.statsAfter.execution_count - s.statsBefore.execution_count,
      batch_sizes: Object.fromEntries(s.statsAfter.batch_stats.map((b) => {
        const old = s.statsBefore.batch_stats.find((o) => o.batch_size === b.batch_size);
        return [b.batch_size, b.compute_infer.count - (old?.compute_infer.count ?? 0)];
      }).filter(([, n]) => n > 0)),
    },
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Both servers run side by side (idle while the other is measured) and the rounds alternate, so that a busy
// shared machine slows both configurations alike instead of whichever happened to run second.
const servers = [];
let batched;
let unbatched;
try {
  servers.push(await startServer('batched', 8));
  servers.push(await startServer('unbatched', 1));
  for (const s of servers) await round(s.url); // warm-up
  await sleep(500); // statistics are recorded when execute() returns, just after the last FINAL
  for (const s of servers) s.statsBefore = await modelStats(s.url);
  for (let r = 0; r < ROUNDS; r += 1) {
    for (const s of servers) s.rounds.push(await round(s.url));
  }
  await sleep(500);
  for (const s of servers) s.statsAfter = await modelStats(s.url);
  batched = summarise(servers[0]);
  unbatched = summarise(servers[1]);
} finally {
  for (const s of servers) await s.stop();
}
const ratio = batched.tokens_per_second.median / unbatched.tokens_per_second.median;
const result = {
  benchmark: 'server',
  description: `${CONCURRENCY} concurrent streamed greedy requests x ${MAX_NEW_TOKENS} new tokens, scheduler ${SCHEDULER}, tiny engine (native engine code, 2 layers, 64 wide) on CPU, OMP/torch threads 1; median of ${ROUNDS} alternating rounds per configuration after a warm-up`,
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model },
  dynamic_batching: batched,
  no_batching: unbatched,
  speedup_median: +ratio.toFixed(2),
  target: TARGET,
  meets_target: ratio >= TARGET,
  // The same comparison on time inside execute() only (excludes HTTP, queueing and scheduling gaps). With the
  // continuous scheduler execute() only enqueues, so that time says nothing about generation: null then.
  scheduler: SCHEDULER,
  speedup_execute_time: SCHEDULER === 'per_execute'
    ? +(batched.tokens_per_execute_second / unbatched.tokens_per_execute_second).toFixed(2) : null,
};
mkdirSync(fileURLToPath(new URL('./results', import.meta.url)), { recursive: true });
writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
console.log(`dynamic batching (max 8): ${batched.tokens_per_second.median.toFixed(1)} tok/s (min ${batched.tokens_per_second.min.toFixed(1)}, max ${batched.tokens_per_second.max.toFixed(1)})`);
console.log(`max_batch_size 1:         ${unbatched.tokens_per_second.median.toFixed(1)} tok/s (min ${unbatched.tokens_per_second.min.toFixed(1)}, max ${unbatched.tokens_per_second.max.toFixed(1)})`);
console.log(`speedup ${ratio.toFixed(2)}x (target ${TARGET}x); inside execute() only: ${result.speedup_execute_time ?? 'n/a (continuous)'}x → ${outFile}`);
