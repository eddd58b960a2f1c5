// The CLI's commands over the core layers: server/ (container), repository/ (rendering), triton/ (client).
// Output goes through `CliIo` so tests can capture it; each command returns its exit code or throws.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ChatMessage, ChatRequest } from '../core/chat/messages';
import { installRepository, MODEL_NAME, type ModelSettings } from '../core/repository';
import {
  ContainerManager, isLoopback, isLive, logsArgs, resolveSettings, ServerError, type PreflightCheck, type ServerSettings,
} from '../core/server';
import { findSamples, streamChat, sumMetric, summarizeStatistics, TritonClient } from '../core/triton';
import { readHistory, writeHistory } from './historyFile';
import { UsageError, type CliConfig } from './options';
import { EXIT } from './reportError';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  signal: AbortSignal;
  /** Directory holding triton/ (the packaged model repository and Dockerfile). */
  packageRoot: string;
}

interface Connection {
  url: string;
  metricsUrl: string | undefined;
  adminKey: string | undefined;
  adminHeader: string | undefined;
  external: boolean;
}

/** The server is neither reachable at --url nor running as our container. */
export class ServerNotRunningError extends Error {
  override readonly name = 'ServerNotRunningError';
  constructor(message: string, readonly logTail: string[] = []) {
    super(message);
  }
}

export async function runCommand(cfg: CliConfig, io: CliIo): Promise<number> {
  switch (cfg.command) {
    case 'status': return status(cfg, io);
    case 'preflight': return preflight(cfg, io);
    case 'build-image': return buildImage(cfg, io);
    case 'start': return start(cfg, io, false);
    case 'restart': return start(cfg, io, true);
    case 'stop': return stop(cfg, io);
    case 'load': return load(cfg, io);
    case 'unload': return unload(cfg, io);
    case 'chat': return chat(cfg, io);
    case 'stats': return stats(cfg, io);
    case 'logs': return logs(cfg, io);
  }
}

// ---- configuration ------------------------------------------------------------------------------------------

function repositorySource(cfg: CliConfig, io: CliIo): string {
  return cfg.repositorySource ?? join(io.packageRoot, 'triton', 'model_repository');
}

function serverSettings(cfg: CliConfig, needsWeights: boolean): ServerSettings {
  if (needsWeights && !cfg.weightsPath) {
    throw new UsageError(`"${cfg.command}" needs the ChatGLM3-6B weights: --weights DIR (or TRITON_CHATGLM_WEIGHTS).`);
  }
  return resolveSettings({
    dockerPath: cfg.dockerPath,
    image: cfg.image,
    containerName: cfg.containerName,
    httpPort: cfg.httpPort,
    grpcPort: cfg.grpcPort,
    metricsPort: cfg.metricsPort,
    bindAddress: cfg.bindAddress,
    gpuIds: cfg.gpuIds,
    shmSize: cfg.shmSize,
    // Commands that never run a container (status, stop, load...) do not use the weights path.
    weightsPath: cfg.weightsPath ?? '/',
    repositoryPath: cfg.repositoryPath,
  });
}

/** Model settings rendered into config.pbtxt: GPU ids as the container sees them (docker renumbers from 0). */
export function modelSettingsFor(cfg: CliConfig): Partial<ModelSettings> {
  const gpuCount = cfg.gpuIds && cfg.gpuIds !== 'all' ? cfg.gpuIds.length : 1;
  const out: Partial<ModelSettings> = { gpuIds: Array.from({ length: gpuCount }, (_, i) => i) };
  if (cfg.maxBatchSize !== undefined) out.maxBatchSize = cfg.maxBatchSize;
  return out;
}

function manager(cfg: CliConfig, io: CliIo, needsWeights = false): ContainerManager {
  if (cfg.url) throw new UsageError(`"${cfg.command}" manages the local container; it cannot be used with --url.`);
  return new ContainerManager(serverSettings(cfg, needsWeights), {
    onCommand: cfg.verbose ? (line) => io.err(`$ ${line}\n`) : undefined,
    livenessTimeoutMs: cfg.timeoutS !== undefined ? cfg.timeoutS * 1000 : undefined,
  });
}

async function connect(cfg: CliConfig, io: CliIo): Promise<Connection> {
  if (cfg.url) {
    return { url: cfg.url, metricsUrl: undefined, adminKey: cfg.adminKey, adminHeader: undefined, external: true };
  }
  const m = manager(cfg, io);
  try {
    const s = await m.status(io.signal);
    if (s.state === 'running') {
      const h = s.handle;
      return { url: h.url, metricsUrl: h.metricsUrl, adminKey: cfg.adminKey ?? h.adminKey, adminHeader: h.adminHeader, external: false };
    }
    if (s.state === 'exited') throw new ServerNotRunningError(`The Triton container stopped (exit code ${s.exitCode}).`, s.logTail);
    if (s.state === 'foreign') throw new ServerError({ code: 'name-conflict', message: `The container "${m.settings.containerName}" was not started by triton-chatglm.`, fix: 'Use --container to pick our container, or remove that one.' });
    throw new ServerNotRunningError('The Triton server is not running.');
  } finally {
    m.dispose();
  }
}

function client(c: Connection): TritonClient {
  return new TritonClient({ baseUrl: c.url, metricsUrl: c.metricsUrl, adminKey: c.adminKey, adminHeader: c.adminHeader });
}

async function withClient<T>(c: Connection, fn: (t: TritonClient) => Promise<T>): Promise<T> {
  const t = client(c);
  try {
    return await fn(t);
  } finally {
    await t.destroy();
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

// ---- commands -------------------------------------------------------------------------------------------------

async function status(cfg: CliConfig, io: CliIo): Promise<number> {
  const report: Record<string, unknown> = {};
  let url: string | undefined;
  let key: string | undefined;
  let adminHeader: string | undefined;
  if (cfg.url) {
    report.container = 'external';
    url = cfg.url;
    key = cfg.adminKey;
  } else {
    const m = manager(cfg, io);
    try {
      const s = await m.status(io.signal);
      report.container = s.state;
      if (s.state === 'running') {
        Object.assign(report, { containerId: s.handle.containerId, containerName: s.handle.containerName, url: s.handle.url, image: s.handle.image });
        url = s.handle.url;
        key = s.handle.adminKey;
        adminHeader = s.handle.adminHeader;
      } else if (s.state === 'exited') {
        Object.assign(report, { containerId: s.containerId, exitCode: s.exitCode, logTail: s.logTail });
      }
    } finally {
      m.dispose();
    }
  }
  let live = false;
  if (url) {
    live = await isLive(url);
    report.live = live;
    report.url = url;
    if (live) {
      await withClient({ url, metricsUrl: undefined, adminKey: key, adminHeader, external: !!cfg.url }, async (t) => {
        if (key) {
          const row = await t.modelState(MODEL_NAME, { signal: io.signal });
          report.model = row?.state ?? 'NOT LOADED';
          if (row?.reason) report.modelReason = row.reason;
        } else {
          report.model = (await t.isModelReady(MODEL_NAME, { signal: io.signal })) ? 'READY' : 'NOT READY';
        }
      });
    }
  }
  if (cfg.json) {
    io.out(`${JSON.stringify(report)}\n`);
  } else {
    const c = report.container;
    if (c === 'running') io.out(`container: running (${String(report.containerName)}, ${String(report.containerId).slice(0, 12)}, ${String(report.image)})\n`);
    else if (c === 'exited') {
      io.out(`container: exited with code ${String(report.exitCode)}\n`);
      const tail = (report.logTail as string[]).slice(-20);
      if (tail.length) io.out(`last log lines:\n${tail.map((l) => `  ${l}`).join('\n')}\n`);
    } else if (c === 'external') io.out('container: none (external server)\n');
    else if (c === 'foreign') io.out('container: a container with this name exists but was not started by triton-chatglm\n');
    else io.out('container: none\n');
    if (url) io.out(`server:    ${live ? 'live' : 'not answering'} at ${url}\n`);
    if (report.model) io.out(`model:     ${MODEL_NAME} ${String(report.model)}${report.modelReason ? ` (${String(report.modelReason)})` : ''}\n`);
  }
  return live ? EXIT.ok : EXIT.notRunning;
}

function checkLine(c: PreflightCheck): string {
  if (c.level === 'ok' || c.level === 'skipped') return `${c.level.padEnd(8)} ${c.id}\n`;
  return `${c.level.padEnd(8)} ${c.id}: ${c.error?.message ?? ''}\n         fix: ${c.error?.fix ?? ''}\n`;
}

async function preflight(cfg: CliConfig, io: CliIo): Promise<number> {
  const m = manager(cfg, io, true);
  const report = await m.preflight({ signal: io.signal });
  if (cfg.json) io.out(`${JSON.stringify({ ok: report.ok, checks: report.checks.map((c) => ({ id: c.id, level: c.level, code: c.error?.code, message: c.error?.message, fix: c.error?.fix })) })}\n`);
  else for (const c of report.checks) io.out(checkLine(c));
  return report.ok ? EXIT.ok : EXIT.failed;
}

async function buildImage(cfg: CliConfig, io: CliIo): Promise<number> {
  const m = manager(cfg, io);
  await runBuild(cfg, io, m);
  io.out(`built ${m.settings.image}\n`);
  return EXIT.ok;
}

async function runBuild(cfg: CliConfig, io: CliIo, m: ContainerManager): Promise<void> {
  const context = dirname(repositorySource(cfg, io));
  if (!existsSync(join(context, 'Dockerfile'))) {
    throw new ServerError({ code: 'image-missing', message: `There is no Dockerfile in ${context} to build the image from.`, fix: 'Pass --repository-source pointing at triton/model_repository of this package, or --image of an existing image.' });
  }
  io.err(`building ${m.settings.image} from ${context}\n`);
  await m.buildImage(context, (line) => io.err(`${line}\n`), io.signal);
}

async function start(cfg: CliConfig, io: CliIo, restart: boolean): Promise<number> {
  const m = manager(cfg, io, true);
  try {
    const installed = await installRepository({ source: repositorySource(cfg, io), destination: cfg.repositoryPath, settings: modelSettingsFor(cfg) });
    if (cfg.verbose) io.err(`model repository: ${installed.path}${installed.changed.length ? ` (${installed.changed.length} files updated)` : ''}\n`);
    if (cfg.buildImage && !(await m.imagePresent(io.signal))) await runBuild(cfg, io, m);
    if (!isLoopback(m.settings.bindAddress)) io.err(`warning: the server will be reachable from other machines on ${m.settings.bindAddress}.\n`);
    const started = Date.now();
    const opts = {
      preflight: cfg.preflight,
      signal: io.signal,
      onProgress: (p: string) => { if (p !== 'live') io.err(`${p}...\n`); },
      onLog: cfg.verbose ? (l: string) => io.err(`[container] ${l}\n`) : undefined,
    };
    const h = restart ? await m.restart(opts) : await m.start(opts);
    io.out(h.attached
      ? `already running: ${h.containerName} (${h.containerId.slice(0, 12)}) at ${h.url}\n`
      : `started ${h.containerName} (${h.containerId.slice(0, 12)}); Triton is live at ${h.url} after ${seconds(Date.now() - started)}\n`);
    io.out(`next: triton-chatglm load\n`);
    return EXIT.ok;
  } finally {
    m.dispose();
  }
}

async function stop(cfg: CliConfig, io: CliIo): Promise<number> {
  const m = manager(cfg, io);
  try {
    const before = await m.status(io.signal);
    await m.stop(io.signal);
    io.out(before.state === 'absent' ? 'no container to stop\n' : `stopped and removed ${m.settings.containerName}\n`);
    return EXIT.ok;
  } finally {
    m.dispose();
  }
}

async function load(cfg: CliConfig, io: CliIo): Promise<number> {
  const c = await connect(cfg, io);
  const started = Date.now();
  await withClient(c, (t) => t.loadModel(MODEL_NAME, {
    signal: io.signal,
    timeoutMs: cfg.timeoutS !== undefined ? cfg.timeoutS * 1000 : undefined,
    progressIntervalMs: 5_000,
    onProgress: (p) => io.err(`loading ${MODEL_NAME}: ${p.state ?? 'starting'} (${seconds(p.elapsedMs)})\n`),
  }));
  io.out(`${MODEL_NAME} is ready (loaded in ${seconds(Date.now() - started)})\n`);
  return EXIT.ok;
}

async function unload(cfg: CliConfig, io: CliIo): Promise<number> {
  const c = await connect(cfg, io);
  await withClient(c, async (t) => {
    await t.unloadModel(MODEL_NAME, { signal: io.signal });
    // Unload returns at once; GPU memory is free only when the model reaches UNAVAILABLE.
    await t.waitForState(MODEL_NAME, 'UNAVAILABLE', { signal: io.signal, timeoutMs: (cfg.timeoutS ?? 120) * 1000, intervalMs: 250 });
  });
  io.out(`${MODEL_NAME} unloaded\n`);
  return EXIT.ok;
}

async function chat(cfg: CliConfig, io: CliIo): Promise<number> {
  // Read the history first: a bad file is refused before anything is sent (and is never overwritten).
  let history: ChatMessage[] = cfg.historyFile ? await readHistory(cfg.historyFile) : [];
  if (cfg.system && !history.some((m) => m.role === 'system')) history = [{ role: 'system', content: cfg.system }, ...history];
  const c = await connect(cfg, io);
  const req: ChatRequest = { prompt: cfg.prompt, history };
  if (cfg.temperature !== undefined) req.temperature = cfg.temperature;
  if (cfg.topP !== undefined) req.topP = cfg.topP;
  if (cfg.maxNewTokens !== undefined) req.maxNewTokens = cfg.maxNewTokens;
  if (cfg.historyLen !== undefined) req.historyLen = cfg.historyLen;
  let answer = '';
  await withClient(c, async (t) => {
    for await (const ev of streamChat(t, MODEL_NAME, req, { signal: io.signal, idleTimeoutMs: (cfg.timeoutS ?? 300) * 1000 })) {
      if (ev.type === 'delta') {
        answer += ev.text;
        io.out(ev.text);
      } else {
        io.out('\n');
        if (cfg.verbose) {
          io.err(`[${ev.finishReason}; ${ev.promptTokens} prompt + ${ev.completionTokens} answer tokens${ev.historyTrimmed ? `; ${ev.historyTrimmed} old messages did not fit` : ''}]\n`);
        }
      }
    }
  });
  if (cfg.historyFile) {
    await writeHistory(cfg.historyFile, [...history, { role: 'user', content: cfg.prompt }, { role: 'assistant', content: answer }]);
  }
  return EXIT.ok;
}

async function stats(cfg: CliConfig, io: CliIo): Promise<number> {
  const c = await connect(cfg, io);
  await withClient(c, async (t) => {
    const [raw] = await t.modelStatistics(MODEL_NAME, { signal: io.signal });
    if (!raw) throw new ServerNotRunningError(`No statistics for ${MODEL_NAME}: it is not loaded.`);
    const s = summarizeStatistics(raw);
    let gpu: Record<string, number> | undefined;
    if (c.metricsUrl) {
      try {
        const m = await t.metrics({ signal: io.signal });
        gpu = { pendingRequests: sumMetric(m, 'nv_inference_pending_request_count', { model: MODEL_NAME }) };
        // GPU gauges exist only where Triton sees a GPU (not on a CPU-only server).
        if (findSamples(m, 'nv_gpu_utilization').length) {
          gpu.gpuUtilization = sumMetric(m, 'nv_gpu_utilization');
          gpu.gpuMemoryUsedBytes = sumMetric(m, 'nv_gpu_memory_used_bytes');
        }
      } catch { /* metrics are optional (disabled, or not published) */ }
    }
    if (cfg.json) {
      io.out(`${JSON.stringify({ ...s, metrics: gpu })}\n`);
      return;
    }
    const ms = (ns: number) => `${(ns / 1e6).toFixed(1)} ms`;
    io.out(`model:              ${s.model} (version ${s.version})\n`);
    io.out(`requests:           ${s.inferenceCount} (${s.successCount} ok, ${s.failureCount} failed)\n`);
    io.out(`batches executed:   ${s.executionCount}; average batch size ${s.averageBatchSize.toFixed(2)}\n`);
    io.out(`batch sizes:        ${s.batches.map((b) => `${b.batchSize}×${b.executions}`).join(', ') || 'none yet'}\n`);
    io.out(`average queue time: ${ms(s.averageQueueNs)}; average compute: ${ms(s.averageComputeNs)}\n`);
    if (gpu) io.out(`pending requests:   ${gpu.pendingRequests}\n`);
    if (gpu?.gpuUtilization !== undefined) io.out(`GPU:                ${(gpu.gpuUtilization * 100).toFixed(0)}% busy; ${((gpu.gpuMemoryUsedBytes ?? 0) / 2 ** 30).toFixed(2)} GiB used\n`);
  });
  return EXIT.ok;
}

async function logs(cfg: CliConfig, io: CliIo): Promise<number> {
  const m = manager(cfg, io);
  try {
    if (!cfg.follow) {
      const s = await m.status(io.signal);
      if (s.state === 'absent') throw new ServerNotRunningError('There is no container, so no log.');
      for (const line of await m.logTail(m.settings.containerName, cfg.tail ?? 100)) io.out(`${line}\n`);
      return EXIT.ok;
    }
    const stream = m.docker.stream(logsArgs(m.settings.containerName, { follow: true, tail: cfg.tail }), (line) => io.out(`${line}\n`), { signal: io.signal });
    const code = await stream.done;
    return io.signal.aborted ? EXIT.ok : code === 0 ? EXIT.ok : EXIT.failed;
  } finally {
    m.dispose();
  }
}
