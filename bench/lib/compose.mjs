// Turns the parts' raw results into bench/results/latest.json: one `{ value, median_of, min, max }` entry per
// headline figure, with its target, whether it is met, and the raw figures behind it.
import { pairedRatios, round, summarize } from './stats.mjs';

/** Headline figures: key → target (`op` value) and the unit shown in the README table. */
export const TARGETS = {
  server_batching_speedup: { op: '>=', value: 4, stretch: 6, unit: '×', what: 'tokens/s of 8 concurrent streams, max batch 8 ÷ max batch 1' },
  late_join_wait_ratio: { op: '>=', value: 10, unit: '×', what: 'wait to the first delta of a 16-token request sent 300 ms after a 400-token answer started, per_execute ÷ continuous (same native engine, 10 ms/step)' },
  staggered_throughput_ratio: { op: '>=', value: 1.5, unit: '×', what: 'tokens/s of 16 requests 50 ms apart (answers 32–256 tokens), continuous ÷ per_execute' },
  staggered_p95_latency_ratio: { op: '<=', value: 0.5, unit: '', what: 'p95 request latency of the same 16 staggered requests, continuous ÷ per_execute' },
  explain_fanout_speedup: { op: '>=', value: 3, unit: '×', what: 'wall time of 8 explains one after another ÷ concurrently (extension code path)' },
  ttft_fraction: { op: '<=', value: 0.05, unit: '', what: 'time to first streamed delta ÷ time to the whole 256-token answer (streamChat)' },
  openai_stream_overhead: { op: '>=', value: 0.95, unit: '×', what: 'tokens/s of 8 concurrent streamed answers through the OpenAI-compatible endpoint (openai client) ÷ straight from generate_stream (streamChat), same server, paced tiny engine' },
  completion_latency_p50_ms: { op: null, unit: 'ms', what: 'median time from the last keystroke to the suggestion (debounce 250 ms included) with 2 chat answers streaming, the editor\'s completion path, paced tiny engine (10 ms a step)' },
  completion_latency_p95_ms: { op: '<=', value: 300, unit: 'ms', what: 'p95 of the same; target: debounce 250 ms + 4 decode steps + 1 prefill pass of 10 ms each' },
  completion_under_chat_slowdown: { op: '<=', value: 1.5, unit: '×', what: 'p95 latency of line completions sent one after another, with 4 chat answers streaming ÷ alone, same server, paced tiny engine' },
  completion_cancel_free_steps: { op: '<=', value: 1, unit: '', what: 'decode steps from a cancelled completion\'s end to the admission of the completion waiting for its row (one row), the largest over the rounds' },
  client_overhead_ratio: { op: '<=', value: 1.15, unit: '×', what: 'TritonClient median request time ÷ bare undici.request, same endpoint' },
  webview_stream_linearity: { op: '<=', value: 2.2, unit: '×', what: 'chat panel render cost streaming 8k tokens ÷ 4k tokens (headless Chromium)' },
  webview_ms_per_1k_tokens: { op: null, unit: 'ms', what: 'chat panel render time per 1000 streamed tokens' },
  webview_long_block_linearity: { op: '<=', value: 2, unit: '×', what: 'per-frame render cost, last tenth ÷ first tenth, while one 64 KB block (paragraph, list, table or code fence: the worst) streams at 64 chars per frame' },
  webview_max_frame_ms_2mb: { op: '<=', value: 100, unit: 'ms', what: 'longest chat panel frame while a 2 MB answer (a nested list, a 24-column table: the worst) streams in 4 KB deltas and ends (headless Chromium)' },
  vsix_bytes: { op: '<=', value: 2 * 1024 * 1024, unit: 'B', what: 'dist/triton-chatglm.vsix (npm run package)' },
  extension_bundle_bytes: { op: null, unit: 'B', what: 'dist/extension.js (production bundle)' },
  webview_bundle_bytes: { op: null, unit: 'B', what: 'dist/webview.js (production bundle)' },
  activation_ms: { op: null, unit: 'ms', what: 'activate() to first registered command, real VS Code of the e2e suite' },
  decode_host_syncs_per_step: { op: '<=', value: 1, unit: '', what: 'host synchronisations per decode step (step, sampler, readback), counted by a TorchDispatchMode on CPU' },
  decode_ops_per_layer: { op: null, unit: '', what: 'compute ops (no views) per layer of one decode step, plain attention, float32' },
  glm4_tiny_decode_tokens_per_s: { op: null, unit: 'tok/s', what: 'greedy decode tokens/s, 4 rows, glm4-tiny sizes (3 layers, 128 wide) with GLM-4\'s config, float32, one CPU thread' },
  chatglm3_tiny_decode_tokens_per_s: { op: null, unit: 'tok/s', what: 'the same at the same sizes with ChatGLM3\'s config (rotary base 10000, epsilon 1e-5)' },
  prefill_stall_ratio: { op: '<=', value: 3, unit: '×', what: 'p99 gap between decode steps of running rows while a 4,000-token prompt is admitted ÷ their median gap before (unpaced, continuous scheduler)' },
  prefill_peak_transient_mib: { op: '<=', value: 384, unit: 'MiB', what: 'peak bytes the native engine creates for one 2,048-token prefill chunk at position 6,144, ChatGLM3-6B shapes, float16 (meta device, attention kernel excepted)' },
  int8_weight_bytes_ratio: { op: null, unit: '', what: 'int8 model bytes ÷ float16 model bytes at ChatGLM3-6B shapes (ChatGLM3\'s quantized layers; embeddings and output layer stay float16)' },
  download_throughput_ratio: { op: '>=', value: 0.9, unit: '×', what: 'bytes/s of the weights download (sha256 while streaming + write to the Hub cache) ÷ a plain undici GET of the same bytes to /dev/null, same fake Hub on loopback' },
};

export function meets(key, value) {
  const t = TARGETS[key];
  if (!t?.op || value === null || value === undefined || !Number.isFinite(value)) return null;
  return t.op === '>=' ? value >= t.value : value <= t.value;
}

function entry(key, figure, extra = {}) {
  const t = TARGETS[key];
  const target = t.op ? { op: t.op, value: t.value, ...(t.stretch ? { stretch: t.stretch } : {}) } : null;
  return { ...figure, target, met: meets(key, figure.value), what: t.what, ...extra };
}

function missing(key, reason) {
  return entry(key, { value: null, median_of: 0, min: null, max: null }, { reason });
}

/**
 * The server speedup from bench/results/server.json: value = its ratio of medians (speedup_median),
 * min/max = the ratios of the rounds it ran side by side (batched round i ÷ unbatched round i).
 */
export function serverSpeedupFromServerBench(server) {
  const b = server?.dynamic_batching?.rounds?.map((r) => r.tokens_per_second);
  const u = server?.no_batching?.rounds?.map((r) => r.tokens_per_second);
  if (!Array.isArray(b) || !Array.isArray(u) || b.length === 0 || b.length !== u.length || !Number.isFinite(server.speedup_median)) {
    throw new Error('bench/results/server.json lacks dynamic_batching/no_batching rounds or speedup_median');
  }
  const paired = summarize(pairedRatios(b, u), 3);
  return {
    value: round(server.speedup_median, 3), median_of: b.length, min: paired.min, max: paired.max,
    source: 'bench/server_bench.mjs (bench/results/server.json)',
    raw: {
      per_round_ratios: pairedRatios(b, u).map((x) => round(x, 3)),
      batched_tokens_per_second: server.dynamic_batching.tokens_per_second,
      unbatched_tokens_per_second: server.no_batching.tokens_per_second,
      speedup_execute_time: server.speedup_execute_time ?? null,
      batched_server_stats: server.dynamic_batching.server_stats,
      unbatched_server_stats: server.no_batching.server_stats,
      description: server.description,
      date: server.date,
    },
  };
}

/** The same measurement from the curve's concurrency-8 point (used when the server bench did not run). */
export function serverSpeedupFromCurve(curve) {
  const at8 = curve?.batching_speedup_by_concurrency?.[8];
  if (!at8) throw new Error('the concurrency curve has no point at 8 concurrent requests');
  return { ...at8, source: 'bench/curve.mjs, concurrency 8 (server bench not run in this mode)', raw: { settings: curve.settings } };
}

/** `parts`: name → { ok: true, result } | { ok: false, error }. */
export function composeResults({ parts, machine, mode, startedAt, finishedAt, loadAverage }) {
  const ok = (name) => (parts[name]?.ok ? parts[name].result : undefined);
  const why = (name) => (parts[name] ? parts[name].error : 'not run');
  const out = {
    generated_at: finishedAt.toISOString(),
    mode,
    duration_s: Math.round((finishedAt - startedAt) / 1000),
    machine,
    load_average: loadAverage,
    note: 'Ratios are measured side by side in one run (medians after a warm-up; min and max kept); absolute figures come from a shared 2-core CPU machine with the tiny test engine and are only comparable within a run.',
  };

  let server;
  try {
    if (ok('server')) server = serverSpeedupFromServerBench(ok('server'));
    else if (ok('curve')) server = { ...serverSpeedupFromCurve(ok('curve')), ...(parts.server ? { server_bench_error: why('server') } : {}) };
  } catch (e) {
    server = undefined;
    out.server_batching_speedup = missing('server_batching_speedup', e.message);
  }
  if (server) {
    const { value, median_of, min, max, ...rest } = server;
    const curve = ok('curve');
    // The same question answered other ways in this run: Triton's batcher idle wait slows a max-batch-1 baseline
    // that keeps the batcher, so the wall-clock ratio alone overstates what batching buys (README).
    const crossChecks = {
      server_bench_execute_time_ratio: ok('server')?.speedup_execute_time ?? null,
      curve_at_8_vs_max_batch_1_without_batcher: curve?.batching_speedup_by_concurrency?.[8] ?? null,
      curve_at_8_vs_max_batch_1_with_batcher: curve?.speedup_over_max_batch_1_with_batcher?.[8] ?? null,
    };
    out.server_batching_speedup = entry('server_batching_speedup', { value, median_of, min, max }, { ...rest, cross_checks: crossChecks });
  } else if (!out.server_batching_speedup) {
    out.server_batching_speedup = missing('server_batching_speedup', `server bench: ${why('server')}; curve: ${why('curve')}`);
  }

  const pick = (obj) => ({ value: obj.value, median_of: obj.median_of, min: obj.min, max: obj.max });
  const strip = (obj) => Object.fromEntries(Object.entries(obj).filter(([k]) => !['value', 'median_of', 'min', 'max'].includes(k)));
  const sched = ok('scheduler');
  for (const key of ['late_join_wait_ratio', 'staggered_throughput_ratio', 'staggered_p95_latency_ratio']) {
    if (sched?.[key]) {
      out[key] = entry(key, pick(sched[key]), {
        source: 'bench/scheduler_bench.mjs',
        raw: {
          late_join_wait_ms: sched.late_join_wait_ms, staggered_tokens_per_second: sched.staggered_tokens_per_second,
          staggered_p95_ms: sched.staggered_p95_ms, continuous_rows_per_step: sched.continuous_rows_per_step, settings: sched.settings,
        },
      });
    } else {
      out[key] = missing(key, `scheduler bench: ${why('scheduler')}`);
    }
  }

  const client = ok('client');
  if (client?.explain_fanout) {
    out.explain_fanout_speedup = entry('explain_fanout_speedup', pick(client.explain_fanout), {
      raw: strip(client.explain_fanout),
      unpaced: client.explain_fanout_unpaced ? { ...pick(client.explain_fanout_unpaced), ...strip(client.explain_fanout_unpaced) } : null,
    });
  }
  else out.explain_fanout_speedup = missing('explain_fanout_speedup', `client bench: ${why('client')}`);
  if (client?.ttft) {
    out.ttft_fraction = entry('ttft_fraction', pick(client.ttft), {
      raw: strip(client.ttft),
      unpaced: client.ttft_unpaced ? { ...pick(client.ttft_unpaced), ...strip(client.ttft_unpaced) } : null,
    });
  } else {
    out.ttft_fraction = missing('ttft_fraction', `client bench: ${why('client')}`);
  }
  if (client?.client_overhead) out.client_overhead_ratio = entry('client_overhead_ratio', pick(client.client_overhead), { raw: strip(client.client_overhead) });
  else out.client_overhead_ratio = missing('client_overhead_ratio', `client bench: ${why('client')}`);

  const oa = ok('openai');
  if (oa?.openai_stream_overhead) out.openai_stream_overhead = entry('openai_stream_overhead', pick(oa.openai_stream_overhead), { source: 'bench/openai.ts', raw: strip(oa.openai_stream_overhead) });
  else out.openai_stream_overhead = missing('openai_stream_overhead', `openai bench: ${why('openai')}`);

  const comp = ok('completion');
  for (const key of ['completion_latency_p50_ms', 'completion_latency_p95_ms']) {
    if (comp?.[key]) out[key] = entry(key, pick(comp[key]), { source: 'bench/completion.ts', raw: { ...strip(comp[key]), detail: comp.completion_latency_detail } });
    else out[key] = missing(key, `completion bench: ${why('completion')}`);
  }
  const cs = ok('completion-server');
  if (cs?.completion_under_chat_slowdown) {
    out.completion_under_chat_slowdown = entry('completion_under_chat_slowdown', pick(cs.completion_under_chat_slowdown), {
      source: 'bench/completion_server_bench.mjs', raw: { p95_ms: cs.completion_p95_ms, p50_ms: cs.completion_p50_ms, settings: cs.settings },
    });
  } else {
    out.completion_under_chat_slowdown = missing('completion_under_chat_slowdown', `completion-server bench: ${why('completion-server')}`);
  }
  const freed = cs?.completion_cancel_free_steps?.rounds;
  if (Array.isArray(freed) && freed.length) {
    // The target bounds the worst round: value = the largest, as the bench reports it.
    out.completion_cancel_free_steps = entry('completion_cancel_free_steps', { value: Math.max(...freed), median_of: freed.length, min: Math.min(...freed), max: Math.max(...freed) }, {
      source: 'bench/completion_server_bench.mjs', statistic: 'the largest of the rounds', raw: { rounds: freed },
    });
  } else {
    out.completion_cancel_free_steps = missing('completion_cancel_free_steps', `completion-server bench: ${why('completion-server')}`);
  }

  const web = ok('webview');
  if (web) {
    out.webview_stream_linearity = entry('webview_stream_linearity', pick(web.linearity), { raw: { note: web.linearity.note, settings: web.settings, rounds: web.rounds } });
    out.webview_ms_per_1k_tokens = entry('webview_ms_per_1k_tokens', pick(web.ms_per_1k_tokens), { raw: { note: web.ms_per_1k_tokens.note } });
    if (web.long_block_linearity) {
      out.webview_long_block_linearity = entry('webview_long_block_linearity', pick(web.long_block_linearity), { raw: strip(web.long_block_linearity) });
    } else {
      out.webview_long_block_linearity = missing('webview_long_block_linearity', 'the webview bench did not measure long blocks');
    }
    if (web.huge_answer) out.webview_max_frame_ms_2mb = entry('webview_max_frame_ms_2mb', pick(web.huge_answer), { raw: strip(web.huge_answer) });
    else out.webview_max_frame_ms_2mb = missing('webview_max_frame_ms_2mb', 'the webview bench did not stream a huge answer');
    if (web.audit) out.webview_audit_cases = web.audit;
  } else {
    for (const key of ['webview_stream_linearity', 'webview_ms_per_1k_tokens', 'webview_long_block_linearity', 'webview_max_frame_ms_2mb']) out[key] = missing(key, `webview bench: ${why('webview')}`);
  }

  const foot = ok('footprint');
  for (const key of ['vsix_bytes', 'extension_bundle_bytes', 'webview_bundle_bytes']) {
    if (foot?.[key]) {
      const { value, median_of, min, max, file, reason } = foot[key];
      out[key] = entry(key, { value, median_of, min, max }, { file, ...(reason ? { reason } : {}) });
    } else {
      out[key] = missing(key, `footprint: ${why('footprint')}`);
    }
  }
  if (foot) out.footprint_details = { package_ms: foot.package_ms, largest_vsix_entries: foot.largest_vsix_entries };

  const act = ok('activation');
  if (act && act.value !== null && act.value !== undefined) {
    const { value, median_of, min, max, ...rest } = act;
    out.activation_ms = entry('activation_ms', { value, median_of, min, max }, rest);
  } else {
    out.activation_ms = missing('activation_ms', act?.reason ?? `activation: ${why('activation')}`);
  }

  const engine = ok('engine');
  for (const key of ['decode_host_syncs_per_step', 'decode_ops_per_layer', 'prefill_stall_ratio', 'glm4_tiny_decode_tokens_per_s', 'chatglm3_tiny_decode_tokens_per_s']) {
    if (engine?.[key]) out[key] = entry(key, pick(engine[key]), { source: 'bench/engine_bench.py', raw: strip(engine[key]) });
    else out[key] = missing(key, `engine bench: ${why('engine')}`);
  }
  const memory = ok('memory');
  for (const key of ['prefill_peak_transient_mib', 'int8_weight_bytes_ratio']) {
    if (memory?.[key]) out[key] = entry(key, pick(memory[key]), { source: 'bench/memory_plan_bench.py', raw: memory[key].raw });
    else out[key] = missing(key, `memory: ${why('memory')}`);
  }
  const dl = ok('download');
  if (dl?.download_throughput_ratio) {
    out.download_throughput_ratio = entry('download_throughput_ratio', pick(dl.download_throughput_ratio), { source: 'bench/download.ts', raw: strip(dl) });
  } else {
    out.download_throughput_ratio = missing('download_throughput_ratio', `download bench: ${why('download')}`);
  }

  const curve = ok('curve');
  out.concurrency_curve = curve ?? { error: why('curve') };
  if (client) out.client_bench_triton_stats = { unpaced: client.triton_stats ?? null, paced: client.paced_triton_stats ?? null };
  out.errors = Object.fromEntries(Object.entries(parts).filter(([, p]) => !p.ok).map(([n, p]) => [n, p.error]));
  out.summary = Object.fromEntries(Object.keys(TARGETS).map((k) => [k, { value: out[k].value, met: out[k].met }]));
  return out;
}
