// Starts the test tritonserver (real server, real model.py, tiny engine on CPU; see test/support/triton-process.mjs)
// with a given batching configuration and loads the model, for benchmarks that compare configurations side by side.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts, modelName, prepareTestRepository, startTritonServer } from '../../test/support/triton-process.mjs';
import { PINNED_THREADS } from './machine.mjs';

export { modelName };

// Every tritonserver a bench starts runs in a process group of its own (with its Python backend stubs): a bench
// that is interrupted or dies must not leave them running. The groups still alive are killed when this process
// exits for any reason (its own end, an uncaught error, process.exit) and on SIGINT / SIGTERM.
const liveGroups = new Set();
let exitHooked = false;

function killLiveGroups() {
  for (const pgid of liveGroups) {
    try { process.kill(-pgid, 'SIGKILL'); } catch { /* already gone */ }
  }
  liveGroups.clear();
}

function hookExit() {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', killLiveGroups);
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
    process.once(signal, () => {
      console.error(`${signal}: stopping the benchmark's tritonservers`);
      killLiveGroups();
      process.exit(code);
    });
  }
}

/**
 * `maxBatchSize` 8 is the product's default configuration (dynamic batching, 20 ms queue delay, 8 rows of the
 * continuous scheduler); 1 turns batching off. `maxQueueSize` is raised so that the largest concurrency of a
 * benchmark is never rejected. `scheduler` overrides the committed one (`continuous`), e.g. `per_execute`; `env` is
 * added to the server's environment (the tiny engine's knobs).
 */
export async function startBenchServer({ label, maxBatchSize, maxQueueSize = 64, queueDelayUs, stepDelayMs, dynamicBatching = true, scheduler, env: extraEnv = {} }) {
  // run-all.mjs points BENCH_TMP_DIR at its own temporary directory, which it removes even after killing a part.
  const dir = mkdtempSync(join(process.env.BENCH_TMP_DIR || tmpdir(), `bench-${label}-`));
  const overrides = { maxBatchSize, maxQueueSize };
  if (queueDelayUs !== undefined) overrides.queueDelayUs = queueDelayUs;
  if (scheduler !== undefined) overrides.scheduler = scheduler;
  let server;
  const stop = async () => {
    try {
      await server?.stop();
    } finally {
      if (server) liveGroups.delete(server.pid);
      rmSync(dir, { recursive: true, force: true });
    }
  };
  hookExit();
  try {
    const repository = prepareTestRepository(join(dir, 'repo'), overrides);
    if (!dynamicBatching) {
      const cfg = join(repository, modelName, 'config.pbtxt');
      writeFileSync(cfg, withoutDynamicBatching(readFileSync(cfg, 'utf8')));
    }
    // stepDelayMs: the tiny engine sleeps this long per decode step, like a GPU's memory-bound step (README).
    const env = { ...PINNED_THREADS, ...(stepDelayMs ? { TINY_ENGINE_STEP_DELAY_MS: String(stepDelayMs) } : {}), ...extraEnv };
    try {
      server = await startTritonServer({ repository, env, startTimeoutMs: 120_000, ...(await distinctPorts()) });
    } catch (err) {
      // Another process may have taken one of the ports between our check and tritonserver's bind: retry once.
      if (!/listen|address/i.test(String(err?.message))) throw err;
      server = await startTritonServer({ repository, env, startTimeoutMs: 120_000, ...(await distinctPorts()) });
    }
    liveGroups.add(server.pid); // startTritonServer spawns it detached: its pid is the group's id
    const load = await fetch(`${server.url}/v2/repository/models/${modelName}/load`, { method: 'POST', body: '{}' });
    if (load.status !== 200) throw new Error(`loading ${modelName} (${label}) failed: HTTP ${load.status} ${await load.text()}\n${server.log().slice(-4000)}`);
    const meta = await (await fetch(`${server.url}/v2`)).json();
    return {
      label, maxBatchSize, url: server.url, metricsUrl: server.metricsUrl, serverVersion: meta.version, stop,
      /** The server's output so far (the model's log lines: steps of each finished request). */
      log: () => server.log(),
      /** Triton's own counters: how many executions, and how many requests each batch size served. */
      async batchStats() {
        const body = await (await fetch(`${server.url}/v2/models/${modelName}/stats`)).json();
        const m = body.model_stats[0];
        const q = m.inference_stats.queue;
        return {
          inference_count: m.inference_count,
          execution_count: m.execution_count,
          executions_by_batch_size: Object.fromEntries(m.batch_stats.map((b) => [b.batch_size, b.compute_infer.count])),
          // Time requests spent in Triton's scheduler queue: batching delay plus any dispatch stall (README).
          queue_ms_mean: q.count ? +(q.ns / q.count / 1e6).toFixed(2) : 0,
        };
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Starts several servers; if one fails, the ones already started are stopped before the error is thrown. */
export async function startBenchServers(configs) {
  const started = [];
  try {
    for (const c of configs) started.push(await startBenchServer(c));
    return started;
  } catch (err) {
    await stopAll(started);
    throw err;
  }
}

export async function stopAll(servers) {
  const results = await Promise.allSettled(servers.map((s) => s.stop()));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Three different free loopback ports for one tritonserver. */
export async function distinctPorts() {
  const [httpPort, grpcPort, metricsPort] = await freePorts(3);
  return { httpPort, grpcPort, metricsPort };
}

/**
 * The config without its `dynamic_batching { ... }` block: Triton then hands requests to the model instance one
 * by one without a batcher thread (and so without the batcher's 500 ms idle wait, see bench/README.md).
 */
export function withoutDynamicBatching(configText) {
  const start = configText.search(/^dynamic_batching\s*\{/m);
  if (start < 0) throw new Error('config.pbtxt has no dynamic_batching block');
  let depth = 0;
  for (let i = configText.indexOf('{', start); i < configText.length; i += 1) {
    if (configText[i] === '{') depth += 1;
    else if (configText[i] === '}' && --depth === 0) return configText.slice(0, start) + configText.slice(i + 1).replace(/^\n/, '');
  }
  throw new Error('config.pbtxt has an unbalanced dynamic_batching block');
}
