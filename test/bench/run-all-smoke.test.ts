// Runs the whole benchmark with tiny sizes (`bench/run-all.mjs --smoke`): the real test tritonserver, the
// extension's client code, the chat panel in headless Chromium, the footprint and the result files. Checks the
// shape of what it writes, never a timing, so the benchmark code cannot rot unnoticed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

const root = resolve(__dirname, '../..');

interface Figure { value: number | null; median_of: number; min: number | null; max: number | null; met: boolean | null; reason?: string; source?: string }

// Needs the tritonserver of scripts/setup-python.sh and /usr/bin/chromium, like the integration and webview stages.
test('bench/run-all.mjs --smoke measures every part and writes latest.json + the curve SVG', { timeout: 600_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  try {
    const out = join(dir, 'latest.json');
    const r = spawnSync(process.execPath, ['bench/run-all.mjs', '--smoke', `--out=${out}`, '--silent'], { cwd: root, encoding: 'utf8', timeout: 580_000 });
    assert.equal(r.status, 0, `run-all failed:\n${r.stdout}\n${r.stderr}`);
    const latest = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown> & { errors: Record<string, string>; machine: Record<string, unknown> };
    assert.deepEqual(latest.errors, {});
    assert.equal(latest.mode, 'smoke');
    assert.equal((latest.machine.threads as Record<string, string>).OMP_NUM_THREADS, '1');

    const measured = ['server_batching_speedup', 'late_join_wait_ratio', 'staggered_throughput_ratio', 'staggered_p95_latency_ratio',
      'explain_fanout_speedup', 'ttft_fraction', 'client_overhead_ratio', 'openai_stream_overhead',
      'completion_latency_p50_ms', 'completion_latency_p95_ms', 'completion_under_chat_slowdown',
      'webview_stream_linearity', 'webview_ms_per_1k_tokens', 'webview_long_block_linearity', 'webview_max_frame_ms_2mb', 'extension_bundle_bytes', 'webview_bundle_bytes',
      'decode_host_syncs_per_step', 'decode_ops_per_layer', 'prefill_stall_ratio', 'glm4_tiny_decode_tokens_per_s', 'chatglm3_tiny_decode_tokens_per_s',
      'prefill_peak_transient_mib', 'int8_weight_bytes_ratio', 'download_throughput_ratio'];
    for (const key of measured) {
      const f = latest[key] as Figure;
      assert.ok(f && typeof f.value === 'number' && Number.isFinite(f.value) && f.value > 0, `${key} has a positive value: ${JSON.stringify(f)}`);
      assert.ok(f.median_of >= 1 && (f.min as number) <= f.value && f.value <= (f.max as number), `${key} has a consistent spread: ${JSON.stringify(f)}`);
    }
    assert.match((latest.server_batching_speedup as Figure).source ?? '', /curve/, 'smoke mode takes the speedup from the curve');
    const freed = latest.completion_cancel_free_steps as Figure; // 0 is its best value, so not in the list above
    assert.ok(Number.isInteger(freed.value) && (freed.value as number) >= 0 && freed.median_of >= 1, `completion_cancel_free_steps: ${JSON.stringify(freed)}`);
    const ttft = latest.ttft_fraction as Figure;
    assert.ok((ttft.value as number) <= 1, 'the first delta cannot come after the whole answer');
    for (const key of ['vsix_bytes', 'activation_ms']) {
      const f = latest[key] as Figure;
      assert.ok(typeof f.value === 'number' || (f.value === null && typeof f.reason === 'string'), `${key} is a number or null with a reason`);
    }

    const curve = latest.concurrency_curve as { configurations: Record<string, { max_batch_size: number; points: Array<{ concurrency: number }> }> };
    assert.deepEqual(Object.keys(curve.configurations).sort(), ['batched', 'unbatched', 'unbatched_with_batcher']);
    assert.deepEqual(Object.values(curve.configurations).map((c) => c.max_batch_size).sort(), [1, 1, 8]);
    assert.deepEqual(curve.configurations.batched!.points.map((p) => p.concurrency), [1, 8]);
    const svg = readFileSync(join(dir, 'latest-concurrency.svg'), 'utf8');
    assert.match(svg, /^<svg /);
    assert.equal((svg.match(/<polyline /g) ?? []).length, 6, 'three configurations × two panels');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
