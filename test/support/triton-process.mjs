// Starts the real `tritonserver` (Triton 2.51.0 from the nvidia-pytriton wheel, see scripts/setup-python.sh)
// on CPU for tests, benchmarks and the fake `docker`. Plain JavaScript so that the fake docker CLI can import it
// without a TypeScript loader.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
export const modelRepositorySource = join(projectRoot, 'triton/model_repository');
export const modelName = 'chatglm3-6b';
/** Where the tiny test engine and the pb_utils stand-in live; put on the stub's PYTHONPATH. */
export const testingPythonPath = join(projectRoot, 'triton/testing');
/**
 * Engine plug-in used in tests instead of the real checkpoint (config.pbtxt's `engine` parameter): the native
 * engine's forward pass, KV cache and schedulers on a tiny random model with a byte tokenizer.
 */
export const tinyEngine = 'tiny_engine:TinyEngine';

export function tritonHome() {
  const fromEnv = process.env.TRITONSERVER_HOME;
  if (fromEnv) return fromEnv;
  const marker = join(projectRoot, '.venv/tritonserver-home');
  if (!existsSync(marker)) throw new Error('tritonserver is not installed: run scripts/setup-python.sh');
  return readFileSync(marker, 'utf8').trim();
}

/**
 * What a GPU container would run, adapted to this CPU machine: KIND_GPU instances become KIND_CPU and the
 * engine becomes the tiny model (the native engine's code on a tiny random ChatGLM3; its scheduler stays what the
 * config says). Optional overrides change batching for a test: `maxBatchSize` and `maxQueueSize` set Triton's
 * batch and queue and the scheduler's `max_active_rows` and `max_waiting`, as the extension's renderer does;
 * `scheduler` picks `continuous` or `per_execute`.
 */
export function patchConfigForTests(text, overrides = {}) {
  let out = text.replace(/kind:\s*KIND_GPU(\s+gpus:\s*\[[^\]]*\])?/g, 'kind: KIND_CPU');
  out = setParameter(out, 'engine', overrides.engine ?? tinyEngine);
  if (overrides.scheduler !== undefined) out = setParameter(out, 'scheduler', overrides.scheduler);
  if (overrides.scheduler === 'per_execute') out = perExecuteQueueDelay(out);
  if (overrides.maxBatchSize !== undefined) {
    out = out.replace(/^max_batch_size:\s*\d+/m, `max_batch_size: ${overrides.maxBatchSize}`);
    out = setParameter(out, 'max_active_rows', String(overrides.maxBatchSize));
    // Triton refuses a warmup sample whose batch_size exceeds max_batch_size (the load fails).
    out = out.replace(/^(\s*batch_size:\s*)(\d+)/gm, (_m, head, n) => `${head}${Math.min(Number(n), Math.max(1, overrides.maxBatchSize))}`);
  }
  if (overrides.decoupled !== undefined) out = out.replace(/decoupled:\s*(true|false)/, `decoupled: ${overrides.decoupled}`);
  if (overrides.queueDelayUs !== undefined) out = out.replace(/max_queue_delay_microseconds:\s*\d+/, `max_queue_delay_microseconds: ${overrides.queueDelayUs}`);
  if (overrides.maxQueueSize !== undefined) {
    // As renderConfig renders it for the continuous scheduler: Triton's queue is max_waiting + its burst allowance.
    out = out.replace(/max_queue_size:\s*\d+/, `max_queue_size: ${overrides.maxQueueSize === 0 ? 0 : overrides.maxQueueSize + 1024}`);
    out = setParameter(out, 'max_waiting', String(overrides.maxQueueSize));
  }
  if (overrides.instanceCount !== undefined) out = out.replace(/count:\s*\d+(\s+kind:)/, `count: ${overrides.instanceCount}$1`);
  for (const [k, v] of Object.entries(overrides.parameters ?? {})) out = setParameter(out, k, v);
  return out;
}

/**
 * As renderConfig.ts renders per_execute: the queue delay (the committed idle_gather_ms of the continuous
 * scheduler) is Triton's dynamic batcher's again, the only batching that scheduler has.
 */
function perExecuteQueueDelay(text) {
  const re = /^parameters \{ key: "idle_gather_ms" value \{ string_value: "([^"]*)" \} \}\n/m;
  const ms = re.exec(text)?.[1];
  if (ms === undefined) return text;
  return text.replace(re, '').replace(/max_queue_delay_microseconds:\s*\d+/, `max_queue_delay_microseconds: ${Math.round(Number(ms) * 1000)}`);
}

function setParameter(text, key, value) {
  const line = `parameters { key: "${key}" value { string_value: "${value}" } }`;
  const re = new RegExp(`^parameters \\{ key: "${key}" value \\{ string_value: "[^"]*" \\} \\}$`, 'm');
  return re.test(text) ? text.replace(re, line) : `${text.trimEnd()}\n${line}\n`;
}

/** Copies a model repository (default: ours) to `dest` and patches its config for CPU tests. */
export function prepareTestRepository(dest, overrides = {}, source = modelRepositorySource) {
  mkdirSync(dest, { recursive: true });
  cpSync(source, dest, { recursive: true, filter: (p) => !p.includes('__pycache__') });
  const cfg = join(dest, modelName, 'config.pbtxt');
  writeFileSync(cfg, patchConfigForTests(readFileSync(cfg, 'utf8'), overrides));
  return dest;
}

/**
 * A snapshot of the packaged repository source and its warmup requests under `work/source`, so that later installs
 * compare against exactly what the first one copied; returns the snapshot's model_repository folder.
 */
export function snapshotRepositorySource(work) {
  const source = join(work, 'source/model_repository');
  cpSync(modelRepositorySource, source, { recursive: true, filter: (p) => !p.includes('__pycache__') });
  cpSync(join(modelRepositorySource, '../warmup_requests.json'), join(work, 'source/warmup_requests.json'));
  return source;
}

/**
 * `count` different free loopback ports, held open together while they are chosen: asking for one free port
 * several times in a row can return the same port twice, and tritonserver then refuses to start.
 */
export async function freePorts(count) {
  const servers = await Promise.all(Array.from({ length: count }, () => new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve(srv));
  })));
  const ports = servers.map((srv) => srv.address().port);
  await Promise.all(servers.map((srv) => new Promise((r) => srv.close(r))));
  return ports;
}

const handedOut = new Set();

/** A free loopback port this process has not handed out before (see freePorts: the OS may repeat itself). */
export async function freePort() {
  for (;;) {
    const port = await new Promise((resolve, reject) => {
      const srv = createServer();
      srv.unref();
      srv.on('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const chosen = srv.address().port;
        srv.close(() => resolve(chosen));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** Command line and environment for tritonserver; `restrictedKey` restricts the model-repository API. */
export function tritonCommand({ repository, httpPort, grpcPort, metricsPort, address = '127.0.0.1', restrictedKey, extraArgs = [], env = {} }) {
  const home = tritonHome();
  const args = [
    `--model-repository=${repository}`,
    '--model-control-mode=explicit',
    `--backend-directory=${join(home, 'backends')}`,
    `--http-port=${httpPort}`, `--http-address=${address}`,
    `--grpc-port=${grpcPort}`, `--grpc-address=${address}`,
    `--metrics-port=${metricsPort}`, `--metrics-address=${address}`,
    '--allow-gpu-metrics=false',
    '--log-verbose=0',
  ];
  if (restrictedKey) {
    args.push(`--http-restricted-api=model-repository,model-config,shared-memory,trace,logging:x-triton-admin=${restrictedKey}`);
  }
  args.push(...extraArgs);
  const environment = {
    ...process.env,
    OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1',
    PYTHONPATH: [testingPythonPath, process.env.PYTHONPATH].filter(Boolean).join(':'),
    PYTHONDONTWRITEBYTECODE: '1',
    ...env,
  };
  return { binary: join(home, 'bin/tritonserver'), args, env: environment };
}

/**
 * Starts tritonserver and waits until /v2/health/live answers. Returns ports, base URL and stop().
 * `logFile` receives stdout and stderr; otherwise they are kept in memory (`log()`).
 */
export async function startTritonServer(options) {
  const [p1, p2, p3] = await freePorts(3);
  const httpPort = options.httpPort ?? p1;
  const grpcPort = options.grpcPort ?? p2;
  const metricsPort = options.metricsPort ?? p3;
  const cmd = tritonCommand({ ...options, httpPort, grpcPort, metricsPort });
  let logText = '';
  const stdio = options.logFile ? ['ignore', openSync(options.logFile, 'a'), openSync(options.logFile, 'a')] : ['ignore', 'pipe', 'pipe'];
  const child = spawn(cmd.binary, cmd.args, { env: cmd.env, stdio, detached: true });
  if (!options.logFile) {
    child.stdout.on('data', (d) => { logText += d; });
    child.stderr.on('data', (d) => { logText += d; });
  }
  const url = `http://127.0.0.1:${httpPort}`;
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  let exited = false;
  child.on('exit', () => { exited = true; });
  for (;;) {
    if (exited) throw new Error(`tritonserver exited during start:\n${logText || readLog(options.logFile)}`);
    try {
      const res = await fetch(`${url}/v2/health/live`);
      if (res.status === 200) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`tritonserver did not become live:\n${logText}`); }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    pid: child.pid, child, url, httpPort, grpcPort, metricsPort,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    log: () => logText || readLog(options.logFile),
    async stop(signal = 'SIGTERM', timeoutMs = 20_000) {
      // The whole process group goes, even when tritonserver itself is already gone: a Python backend stub
      // (triton_python_backend_stub, same group) can outlive it.
      const killGroup = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } };
      if (exited) { killGroup(); return; }
      const done = new Promise((r) => child.once('exit', r));
      try { process.kill(-child.pid, signal); } catch { /* already gone */ }
      const timer = setTimeout(killGroup, timeoutMs);
      await done;
      clearTimeout(timer);
      killGroup();
    },
  };
}

function readLog(file) {
  try { return file ? readFileSync(file, 'utf8') : ''; } catch { return ''; }
}
