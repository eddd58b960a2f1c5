#!/usr/bin/env node
// Code completions (`infill`) beside chat on the server: the real test tritonserver with the tiny engine marked
// fill-in-the-middle (TINY_ENGINE_FILL_IN_MIDDLE), paced at 10 ms per forward pass like a GPU step (whose cost is
// about the same for 1 or 8 rows), threads pinned. Figures:
//   completion_under_chat_slowdown  p95 latency (send → FINAL) of line completions sent one after another, with 4 chat
//                                   answers streaming ÷ alone; median of the paired rounds (target ≤ 1.5)
//   completion_cancel_free_steps    with one row: a running completion is cancelled (its connection closed, as the
//                                   editor does on a keystroke) while the next waits; decode steps from the step it
//                                   ended to the step the next was admitted (the scheduler's log lines); the
//                                   largest over the rounds (target ≤ 1)
// The end-to-end latency from a pause in typing to ghost text is the client's (completion_latency_*).
// Usage: node bench/completion_server_bench.mjs --out=<file> [--rounds=3] [--step-delay-ms=10] [--completions=20]
//          [--completion-tokens=32] [--chats=4] [--chat-tokens=2000]
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from './lib/args.mjs';
import { pairedRatios, quantile, round, summarize } from './lib/stats.mjs';
import { streamWithTimings } from './lib/stream-request.mjs';
import { modelName, startBenchServers, stopAll } from './lib/test-servers.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const FIM = { TINY_ENGINE_FILL_IN_MIDDLE: '1' };
const FINISHED = /request (\S+) (\w+) after (\d+) tokens \(prompt \d+ tokens; admitted at step (\d+), first token at step (\d+), finished at step (\d+)/g;

/** A line completion as the extension sends it (the same input set as chat: Triton batches identical sets only). */
function completion(id, maxNewTokens, n = 0) {
  const infill = {
    prefix: `import math\n\ndef area_${n}(r):\n    return `, suffix: `\n\nprint(area_${n}(2.0))\n`,
    path: 'geometry.py', language: 'Python', mode: 'line', references: [],
  };
  return { prompt: '', history: '[]', infill: JSON.stringify(infill), temperature: 0, top_p: 1, max_new_tokens: maxNewTokens, id };
}

const chat = (i, maxNewTokens) => ({ prompt: `chat ${i}: write a long essay`, history: '[]', temperature: 0, top_p: 1, max_new_tokens: maxNewTokens });

async function completionLatencies(url, s, round) {
  const latencies = [];
  for (let i = 0; i < s.completions; i += 1) {
    const r = await streamWithTimings(url, completion(`lat-${round}-${i}`, s.completionTokens, i));
    if (r.tokens !== s.completionTokens) throw new Error(`a completion was cut short (${r.tokens} tokens)`);
    latencies.push(r.totalMs);
  }
  return latencies;
}

/** Chat answers streaming while `work` runs; each is aborted once it is done (they are longer than it). */
async function withChats(url, s, work) {
  const controllers = Array.from({ length: s.chats }, () => new AbortController());
  const firsts = controllers.map((c, i) => openStream(url, chat(i, s.chatTokens), c.signal));
  await Promise.all(firsts.map((f) => f.firstDelta));
  try {
    return await work();
  } finally {
    for (const c of controllers) c.abort();
    await Promise.allSettled(firsts.map((f) => f.done));
  }
}

/** A stream read in the background: resolves `firstDelta` at its first event, `done` at its end (or abort). */
function openStream(url, body, signal) {
  let resolveFirst;
  const firstDelta = new Promise((r) => { resolveFirst = r; });
  const done = (async () => {
    const res = await fetch(`${url}/v2/models/${modelName}/generate_stream`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal,
    });
    if (res.status !== 200) throw new Error(`HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
    const reader = res.body.getReader();
    while (!(await reader.read()).done) resolveFirst();
  })().catch((e) => { resolveFirst(); if (e?.name !== 'AbortError') throw e; });
  return { firstDelta, done };
}

async function waitingRequests(metricsUrl) {
  const text = await (await fetch(metricsUrl)).text();
  const m = text.match(/^chatglm3_waiting_requests\{[^}]*\} ([0-9.e+]+)$/m);
  return m ? Number(m[1]) : 0;
}

function finishedLines(log) {
  return Object.fromEntries([...log.matchAll(FINISHED)].map((m) => [m[1], { reason: m[2], tokens: Number(m[3]), admitted: Number(m[4]), finished: Number(m[6]) }]));
}

async function cancelFreeSteps(server, round) {
  const leaver = new AbortController();
  const running = openStream(server.url, completion(`typing-${round}`, 2000), leaver.signal);
  await running.firstDelta;
  const next = streamWithTimings(server.url, completion(`next-${round}`, 8));
  const deadline = Date.now() + 30_000;
  while ((await waitingRequests(server.metricsUrl)) !== 1) {
    if (Date.now() > deadline) throw new Error('the next completion never waited for the row');
    await sleep(10);
  }
  leaver.abort(); // the next keystroke: the editor closes the stream, Triton cancels the request
  await running.done;
  await next;
  for (;;) {
    const lines = finishedLines(server.log());
    const left = lines[`typing-${round}`];
    const taken = lines[`next-${round}`];
    if (left && taken) {
      if (left.reason !== 'cancelled') throw new Error(`the running completion ended ${left.reason}, not cancelled`);
      return taken.admitted - left.finished;
    }
    if (Date.now() > deadline) throw new Error('the scheduler did not log both requests');
    await sleep(20);
  }
}

async function measure(s, log = () => {}) {
  const env = { ...FIM };
  const [shared, oneRow] = await startBenchServers([
    { label: 'completions', maxBatchSize: 8, stepDelayMs: s.stepDelayMs, env },
    { label: 'one-row', maxBatchSize: 1, maxQueueSize: 4, stepDelayMs: s.stepDelayMs, env },
  ]);
  try {
    await completionLatencies(shared.url, { ...s, completions: 2 }, 'warm');
    const alone = [];
    const busy = [];
    for (let r = 0; r < s.rounds; r += 1) {
      alone.push(await completionLatencies(shared.url, s, `alone-${r}`));
      busy.push(await withChats(shared.url, s, () => completionLatencies(shared.url, s, `busy-${r}`)));
      log(`round ${r + 1}/${s.rounds}: completion p95 alone ${quantile(alone[r], 0.95).toFixed(0)} ms, with ${s.chats} chats ${quantile(busy[r], 0.95).toFixed(0)} ms`);
    }
    const freeSteps = [];
    for (let r = 0; r < s.rounds; r += 1) freeSteps.push(await cancelFreeSteps(oneRow, r));
    log(`cancel → next admitted: ${freeSteps.join(', ')} steps`);
    const p95Alone = alone.map((l) => quantile(l, 0.95));
    const p95Busy = busy.map((l) => quantile(l, 0.95));
    return {
      benchmark: 'completion_server',
      settings: { ...s, server_version: shared.serverVersion },
      completion_under_chat_slowdown: summarize(pairedRatios(p95Busy, p95Alone), 3),
      completion_cancel_free_steps: { value: Math.max(...freeSteps), rounds: freeSteps },
      completion_p95_ms: { alone: summarize(p95Alone, 1), with_chats: summarize(p95Busy, 1) },
      completion_p50_ms: { alone: summarize(alone.map((l) => quantile(l, 0.5)), 1), with_chats: summarize(busy.map((l) => quantile(l, 0.5)), 1) },
      rounds: { alone_ms: alone.map((l) => l.map((x) => round(x, 1))), with_chats_ms: busy.map((l) => l.map((x) => round(x, 1))) },
    };
  } finally {
    await stopAll([shared, oneRow]);
  }
}

async function main() {
  const args = parseArgs();
  const settings = {
    rounds: args.int('rounds', 3), stepDelayMs: args.int('step-delay-ms', 10), completions: args.int('completions', 20),
    completionTokens: args.int('completion-tokens', 32), chats: args.int('chats', 4), chatTokens: args.int('chat-tokens', 2000),
  };
  const out = args.string('out');
  if (!out) throw new Error('--out=<file> is required');
  const loadStart = loadavg();
  const result = await measure(settings, (line) => console.log(line));
  // Paced steps hide most of the CPU's own speed, not a machine busy with other work: say how busy it was.
  result.machine = { cores: cpus().length, load_average: { start: loadStart.map((x) => round(x, 2)), end: loadavg().map((x) => round(x, 2)) } };
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`completion_under_chat_slowdown ${result.completion_under_chat_slowdown.value}, completion_cancel_free_steps ${result.completion_cancel_free_steps.value} → ${out}`);
}

main().catch((e) => { console.error(e?.stack ?? e); process.exitCode = 1; });
