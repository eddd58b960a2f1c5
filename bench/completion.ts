// completion_latency_p50_ms / _p95_ms: from the pause in typing to ghost text, while 2 chat answers stream — the
// editor's own path (src/core/completion: debounce, cancel-previous, the infill request, post-processing) against
// the test tritonserver whose tiny engine takes `infill` (TINY_ENGINE_FILL_IN_MIDDLE=1) and is paced like a GPU step.
// Each round "types" three keystrokes 60 ms apart (each one cancelling the request before it, as in the editor)
// and measures from the last keystroke to the suggestion. The completion is scripted ("1" then a line break:
// TINY_ENGINE_SCRIPTS), so the figure is the latency of a completion, not the length of random text.
// Target (issue #30): p95 ≤ debounce + 4 decode steps + the request's prefill (one paced forward pass).
// Usage: node --import tsx bench/completion.ts --out=<file> [--rounds=20] [--step-delay-ms=10] [--debounce-ms=250] [--queue-delay-us=N]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompletionService, type InfillRequester } from '../src/core/completion/completionService';
import { requestInfill } from '../src/core/completion/infillClient';
import { DEFAULT_MODEL_ID as MODEL_NAME } from '../src/core/models/catalog';
import { streamChat, TritonClient } from '../src/core/triton';
import { loadStats, loadTestServers } from './lib/bench-server';
import { readCliArgs } from './lib/cli-args';

const CHATS = 2;
const MARK = 'bench_completion_';

export async function measureCompletion(o: { rounds: number; stepDelayMs: number; debounceMs: number; queueDelayUs?: number }): Promise<Record<string, unknown>> {
  const { startBenchServer } = await loadTestServers();
  const { summarize, round } = await loadStats();
  const dir = mkdtempSync(join(process.env.BENCH_TMP_DIR || tmpdir(), 'bench-completion-'));
  const scripts = join(dir, 'scripts.json');
  writeFileSync(scripts, JSON.stringify([{ match: `${MARK}`, answer: '1\n' }]));
  const server = await startBenchServer({
    label: 'completion', maxBatchSize: 8, stepDelayMs: o.stepDelayMs, ...(o.queueDelayUs !== undefined ? { queueDelayUs: o.queueDelayUs } : {}), env: { TINY_ENGINE_FILL_IN_MIDDLE: '1', TINY_ENGINE_SCRIPTS: scripts },
  });
  const client = new TritonClient({ baseUrl: server.url });
  const stopChats = new AbortController();
  // Two chat answers stream the whole time (a new one starts when one ends).
  const chatLoop = async (i: number) => {
    while (!stopChats.signal.aborted) {
      try {
        for await (const ev of streamChat(client, MODEL_NAME, { prompt: `chat ${i}: tell a long story`, history: [], maxNewTokens: 2048 }, { signal: stopChats.signal })) void ev;
      } catch { /* aborted at the end */ }
    }
  };
  // Where the time goes: the moments of the request that got past the debounce (the last keystroke's), client side.
  let phase: { sent?: number; firstDelta?: number; answered?: number } = {};
  const timedRequest: InfillRequester = async (payload, options) => {
    phase = { sent: performance.now() };
    const enough = options.enough;
    const result = await requestInfill(client, MODEL_NAME, payload, {
      ...options,
      enough: (text) => { phase.firstDelta ??= performance.now(); return enough?.(text) ?? false; },
    });
    phase.firstDelta ??= performance.now();
    phase.answered = performance.now();
    return result;
  };
  const service = new CompletionService(timedRequest, {
    settings: () => ({ enabled: true, languages: {}, debounceMs: o.debounceMs, exclude: [], maxNewTokens: { line: 64, block: 256 } }),
  });
  const doc = (r: number, typed: string) => {
    const text = `import math\n\ndef area(r):\n    ${MARK}${r} = ${typed}\n    return math.pi * r * r\n`;
    return { text, offset: text.indexOf('\n    return'), path: 'bench.py', languageId: 'python' };
  };
  const chats = Array.from({ length: CHATS }, (_, i) => chatLoop(i));
  try {
    const latencies: number[] = [];
    const phases = { debounce: [] as number[], toFirstDelta: [] as number[], toLine: [] as number[], postProcess: [] as number[], tritonQueue: [] as number[] };
    // Triton's own queue time since the last call (ms): with one request reaching the server per round (the chats
    // are counted only when they start), it is that request's wait in the dynamic batcher.
    let queueNs = 0;
    const queueMs = async () => {
      const stats = (await (await fetch(`${server.url}/v2/models/${MODEL_NAME}/stats`)).json()) as { model_stats: { inference_stats: { queue: { ns: number | string } } }[] };
      const ns = Number(stats.model_stats[0]!.inference_stats.queue.ns);
      const delta = (ns - queueNs) / 1e6;
      queueNs = ns;
      return delta;
    };
    await queueMs();
    const cancelledByTyping: number[] = [];
    for (let r = -1; r < o.rounds; r += 1) { // round -1: warm-up
      const before = service.gate.counts.cancelled;
      const typing = ['r', 'r *', 'r * '].map((typed, k) => new Promise<{ t0: number; outcome: Awaited<ReturnType<CompletionService['complete']>> }>((resolve, reject) => {
        setTimeout(() => {
          const t0 = performance.now();
          service.complete({ documentKey: `round-${r}`, document: doc(r, typed) }).then((outcome) => resolve({ t0, outcome }), reject);
        }, k * 60);
      }));
      const results = await Promise.all(typing);
      const last = results.at(-1)!;
      if (last.outcome.kind !== 'text') throw new Error(`round ${r}: no completion (${JSON.stringify(last.outcome)})`);
      const done = performance.now();
      const ms = done - last.t0;
      const { sent, firstDelta, answered } = phase;
      if (sent === undefined || firstDelta === undefined || answered === undefined || sent < last.t0) throw new Error(`round ${r}: the request was not timed`);
      const queue = await queueMs();
      if (r >= 0) {
        latencies.push(ms); cancelledByTyping.push(service.gate.counts.cancelled - before);
        phases.debounce.push(sent - last.t0); phases.toFirstDelta.push(firstDelta - sent); phases.toLine.push(answered - firstDelta);
        phases.postProcess.push(done - answered); phases.tritonQueue.push(queue);
      }
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
    const target = o.debounceMs + 5 * o.stepDelayMs;
    return {
      // In the { value, median_of, min, max } shape of latest.json: value is the percentile of the rounds'
      // latencies (nearest rank), median_of the number of rounds, min and max the fastest and slowest round.
      completion_latency_p50_ms: { value: round(pct(50), 1), median_of: latencies.length, min: round(sorted[0]!, 1), max: round(sorted.at(-1)!, 1), statistic: `p50 of ${latencies.length} rounds`, target_ms_at_most: target },
      completion_latency_p95_ms: { value: round(pct(95), 1), median_of: latencies.length, min: round(sorted[0]!, 1), max: round(sorted.at(-1)!, 1), statistic: `p95 of ${latencies.length} rounds`, target_ms_at_most: target, met: pct(95) <= target },
      completion_latency_detail: {
        debounce_ms: o.debounceMs, step_delay_ms: o.stepDelayMs, queue_delay_us: o.queueDelayUs ?? 'the rendered default', chat_streams: CHATS, keystrokes_per_round: 3,
        target: 'debounce + 4 decode steps + 1 paced prefill pass', all_ms: summarize(latencies, 1),
        superseded_requests_per_round: summarize(cancelledByTyping, 0),
        // Medians of the parts of a round, ms: the last keystroke to the request leaving (the debounce timer),
        // to the first text (HTTP, Triton's queue, admission, prefill, the first token's send), to the line being
        // complete (the next tokens), to the suggestion (post-processing); Triton's own queue time within the second.
        breakdown_ms: {
          debounce: summarize(phases.debounce, 1), send_to_first_delta: summarize(phases.toFirstDelta, 1),
          first_delta_to_line: summarize(phases.toLine, 1), post_process: summarize(phases.postProcess, 2),
          triton_queue: summarize(phases.tritonQueue, 1),
        },
      },
    };
  } finally {
    stopChats.abort();
    await Promise.allSettled(chats);
    await client.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = readCliArgs();
  const queue = args.get('queue-delay-us');
  const result = await measureCompletion({
    rounds: args.int('rounds', 20), stepDelayMs: args.int('step-delay-ms', 10), debounceMs: args.int('debounce-ms', 250),
    ...(queue !== undefined ? { queueDelayUs: Number(queue) } : {}),
  });
  const out = args.get('out');
  if (out) writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  else console.log(JSON.stringify(result, null, 2));
}

if (require.main === module) {
  main().catch((e) => { console.error(e); process.exitCode = 1; });
}
