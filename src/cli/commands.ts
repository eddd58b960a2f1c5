// The CLI's commands. The lifecycle ones (start, stop, restart, load, unload, status) run the core's server
// session, the same policy as the extension's commands; chat runs the same answer request as the chat panel.
// Output goes through CliIo so tests can capture it; each command returns its exit code or throws.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { requestAnswer } from '../core/chat/answerRunner';
import { failureCause } from '../core/chat/failureCause';
import type { ChatMessage, ChatRequest } from '../core/chat/messages';
import { DEFAULT_OPENAI_HOST, DEFAULT_OPENAI_PORT, isLoopbackHost, modelSamplingDefaults, startOpenAiServer } from '../core/openai';
import { DEFAULT_MODEL_SETTINGS } from '../core/repository';
import { chosenModel, modelTitle as named } from '../core/models/choice';
import { logsArgs, resolveSettings, ServerError, type PreflightCheck } from '../core/server';
import { containerManager, withModelWeights, type ModelReport, type SessionSettings } from '../core/session';
import { hubCacheCandidates } from '../core/weights/hubCache';
import { metricsFigures } from '../core/status/statusModel';
import type { TritonClient } from '../core/triton';
import { sleep } from '../core/util/abort';
import { openSession, seconds, sessionSettingsFromCli, terminalLog, type CliIo, type CliSession } from './cliSession';
import { complete } from './complete';
import { download } from './download';
import { readHistory, writeHistory } from './historyFile';
import { UsageError, type CliConfig } from './options';
import { EXIT } from './reportError';
import { reportStats, type StatsSample } from './statsReport';

export type { CliIo } from './cliSession';

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
    case 'complete': return complete(cfg, io, async (fn) => using(await connect(cfg, io), (cli) => fn(clientOf(cli), cli.session.modelName)));
    case 'stats': return stats(cfg, io);
    case 'logs': return logs(cfg, io);
    case 'download': return download(cfg, io);
    case 'serve-openai': return serveOpenai(cfg, io);
  }
}

// ---- preconditions and the session -------------------------------------------------------------------------

function requireManaged(cfg: CliConfig): void {
  if (cfg.url) throw new UsageError(`"${cfg.command}" manages the local container; it cannot be used with --url.`);
}

/**
 * The session's settings with the chosen model's weights: --weights when it holds that model, else its snapshot in
 * the Hugging Face cache (the extension's rule). Neither and no --weights: a usage error naming the model.
 */
async function requireWeights(cfg: CliConfig, io: CliIo): Promise<SessionSettings> {
  // The cache `download` uses (--dir, else the Hub's own) first, then the usual places.
  const settings = await withModelWeights(sessionSettingsFromCli(cfg, io), hubCacheCandidates(process.env, undefined, [cfg.downloadDir]));
  if (!settings.server.weightsPath) {
    const model = chosenModel(cfg.model);
    throw new UsageError(`"${cfg.command}" needs the weights of ${model.displayName}: none are in the Hugging Face cache. Run \`triton-chatglm download --model ${model.id}\`, or pass --weights DIR (or TRITON_CHATGLM_WEIGHTS).`);
  }
  return settings;
}

/** Runs `fn` and then lets go of the server (the container keeps running). */
async function using<T>(cli: CliSession, fn: (cli: CliSession) => Promise<T>): Promise<T> {
  try {
    return await fn(cli);
  } finally {
    await cli.session.dispose();
  }
}

/** A session attached to the running server; otherwise the error says why there is none. */
async function connect(cfg: CliConfig, io: CliIo): Promise<CliSession> {
  const cli = openSession(cfg, io);
  try {
    const found = await cli.session.attach();
    if (found.state === 'exited') throw new ServerNotRunningError(`The Triton container stopped (exit code ${found.exitCode}).`, found.logTail);
    if (found.state === 'foreign') {
      throw new ServerError({ code: 'name-conflict', message: `The container "${cli.settings.server.containerName}" was not started by triton-chatglm.`, fix: 'Use --container to pick our container, or remove that one.' });
    }
    if (found.state === 'absent' || !cli.session.client) throw new ServerNotRunningError('The Triton server is not running.');
    return cli;
  } catch (e) {
    await cli.session.dispose();
    throw e;
  }
}

function clientOf(cli: CliSession): TritonClient {
  const client = cli.session.client;
  if (!client) throw new ServerNotRunningError('The Triton server is not running.');
  return client;
}

/** Load and unload need a server that answers and a model that is not between states (another client's load). */
function requireSettledModel({ state, session }: CliSession): void {
  const { server, model } = state.current;
  if (server !== 'running') throw new ServerNotRunningError('The Triton server is not answering.');
  if (model === 'loading' || model === 'unloading') throw new Error(`${session.modelName} is ${model}; try again when that has finished.`);
}

// ---- commands -------------------------------------------------------------------------------------------------

async function status(cfg: CliConfig, io: CliIo): Promise<number> {
  return using(openSession(cfg, io), async ({ session }) => {
    const found = await session.attach();
    const report: Record<string, unknown> = { container: found.state };
    let url: string | undefined;
    if (found.state === 'running') {
      const h = found.handle;
      Object.assign(report, { containerId: h.containerId, containerName: h.containerName, url: h.url, image: h.image });
      url = h.url;
    } else if (found.state === 'exited') {
      Object.assign(report, { containerId: found.containerId, exitCode: found.exitCode, logTail: found.logTail });
    } else if (found.state === 'external') {
      url = cfg.url;
    }
    let live = false;
    if (url) {
      const server = await session.report();
      live = server?.live ?? false;
      report.live = live;
      report.url = url;
      report.modelName = session.modelName;
      if (server?.model) Object.assign(report, modelFields(server.model));
    }
    if (cfg.json) io.out(`${JSON.stringify(report)}\n`);
    else printStatus(io, report, url, live);
    return live ? EXIT.ok : EXIT.notRunning;
  });
}

function modelFields(model: ModelReport): Record<string, string> {
  if (model.via === 'readiness') return { model: model.ready ? 'READY' : 'NOT READY' };
  return { model: model.row?.state ?? 'NOT LOADED', ...(model.row?.reason ? { modelReason: model.row.reason } : {}) };
}

function printStatus(io: CliIo, report: Record<string, unknown>, url: string | undefined, live: boolean): void {
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
  if (report.model) io.out(`model:     ${named(String(report.modelName))} ${String(report.model)}${report.modelReason ? ` (${String(report.modelReason)})` : ''}\n`);
}

function checkLine(c: PreflightCheck): string {
  const head = `${c.level.padEnd(8)} ${c.id}`;
  switch (c.level) {
    case 'ok': case 'skipped': return `${head}\n`;
    case 'blocked': return `${head}: not checked, it needs ${c.blockedBy ?? 'the Docker daemon'}\n`;
    case 'unknown': return `${head}: ${c.note ?? 'cannot be checked here'}\n`;
    case 'error': case 'warning': return `${head}: ${c.error?.message ?? ''}\n         fix: ${c.error?.fix ?? ''}\n`;
  }
}

async function preflight(cfg: CliConfig, io: CliIo): Promise<number> {
  requireManaged(cfg);
  const m = containerManager(resolveSettings((await requireWeights(cfg, io)).server), terminalLog(cfg, io));
  try {
    const report = await m.preflight({ signal: io.signal });
    if (cfg.json) io.out(`${JSON.stringify({ ok: report.ok, checks: report.checks.map((c) => ({ id: c.id, level: c.level, code: c.error?.code, message: c.error?.message, fix: c.error?.fix, blockedBy: c.blockedBy, note: c.note })) })}\n`);
    else for (const c of report.checks) io.out(checkLine(c));
    return report.ok ? EXIT.ok : EXIT.failed;
  } finally {
    m.dispose();
  }
}

async function buildImage(cfg: CliConfig, io: CliIo): Promise<number> {
  requireManaged(cfg);
  return using(openSession(cfg, io), async (cli) => {
    await runBuild(io, cli);
    io.out(`built ${cli.settings.server.image}\n`);
    return EXIT.ok;
  });
}

async function runBuild(io: CliIo, { session, settings }: CliSession): Promise<void> {
  const context = dirname(settings.repository.source);
  if (!existsSync(join(context, 'Dockerfile'))) {
    throw new ServerError({ code: 'image-missing', message: `There is no Dockerfile in ${context} to build the image from.`, fix: 'Pass --repository-source pointing at triton/model_repository of this package, or --image of an existing image.' });
  }
  io.err(`building ${settings.server.image} from ${context}\n`);
  await session.buildImage(context, (line) => io.err(`${line}\n`), io.signal);
}

async function start(cfg: CliConfig, io: CliIo, restart: boolean): Promise<number> {
  requireManaged(cfg);
  await requireWeights(cfg, io);
  return using(openSession(cfg, io), async (cli) => {
    if (cfg.buildImage) {
      const m = containerManager(resolveSettings(cli.settings.server), cli.log);
      try {
        if (!(await m.imagePresent(io.signal))) await runBuild(io, cli);
      } finally {
        m.dispose();
      }
    }
    const started = Date.now();
    if (restart) await cli.session.stop();
    const h = await cli.session.start({ preflight: cfg.preflight });
    if (!h) return io.signal.aborted ? EXIT.interrupted : EXIT.failed;
    io.out(h.attached
      ? `already running: ${h.containerName} (${h.containerId.slice(0, 12)}) at ${h.url}\n`
      : `started ${h.containerName} (${h.containerId.slice(0, 12)}); Triton is live at ${h.url} after ${seconds(Date.now() - started)}\n`);
    io.out(`next: triton-chatglm load\n`);
    return EXIT.ok;
  });
}

async function stop(cfg: CliConfig, io: CliIo): Promise<number> {
  requireManaged(cfg);
  return using(openSession(cfg, io), async ({ session, settings }) => {
    const before = await session.attach();
    await session.stop();
    io.out(before.state === 'absent' ? 'no container to stop\n' : `stopped and removed ${settings.server.containerName}\n`);
    return EXIT.ok;
  });
}

async function load(cfg: CliConfig, io: CliIo): Promise<number> {
  return using(await connect(cfg, io), async (cli) => {
    const { session } = cli;
    requireSettledModel(cli);
    const started = Date.now();
    if (!(await session.load())) return EXIT.interrupted; // cancelled (Ctrl+C): the model was unloaded again
    io.out(`${named(session.modelName)} is ready (loaded in ${seconds(Date.now() - started)})\n`);
    return EXIT.ok;
  });
}

async function unload(cfg: CliConfig, io: CliIo): Promise<number> {
  return using(await connect(cfg, io), async (cli) => {
    requireSettledModel(cli);
    await cli.session.unload();
    io.out(`${named(cli.session.modelName)} unloaded\n`);
    return EXIT.ok;
  });
}

async function chat(cfg: CliConfig, io: CliIo): Promise<number> {
  // Read the history first: a bad file is refused before anything is sent (and is never overwritten).
  let history: ChatMessage[] = cfg.historyFile ? await readHistory(cfg.historyFile) : [];
  if (cfg.system && !history.some((m) => m.role === 'system')) history = [{ role: 'system', content: cfg.system }, ...history];
  const request: ChatRequest = { prompt: cfg.prompt, history };
  if (cfg.temperature !== undefined) request.temperature = cfg.temperature;
  if (cfg.topP !== undefined) request.topP = cfg.topP;
  if (cfg.topK !== undefined) request.topK = cfg.topK;
  if (cfg.repetitionPenalty !== undefined) request.repetitionPenalty = cfg.repetitionPenalty;
  if (cfg.seed !== undefined) request.seed = cfg.seed;
  if (cfg.maxNewTokens !== undefined) request.maxNewTokens = cfg.maxNewTokens;
  if (cfg.historyLen !== undefined) request.historyLen = cfg.historyLen;
  const answer = await using(await connect(cfg, io), async (cli) => {
    let text = '';
    const final = await requestAnswer(clientOf(cli), request, {
      model: cli.session.modelName,
      streaming: true,
      signal: io.signal,
      idleTimeoutMs: (cfg.timeoutS ?? 300) * 1000,
      onDelta: (delta) => {
        text += delta;
        io.out(delta);
      },
    }).catch(async (e: unknown) => {
      // A stream cut by a container that died is that exit (code, last lines), not "cannot reach Triton".
      if (text) io.out('\n');
      throw await failureCause(e, (error) => cli.session.explainFailure(error));
    });
    io.out('\n');
    if (cfg.verbose) {
      io.err(`[${final.finishReason}; ${final.promptTokens} prompt + ${final.completionTokens} answer tokens${final.historyTrimmed ? `; ${final.historyTrimmed} old messages did not fit` : ''}]\n`);
    }
    return text;
  });
  if (cfg.historyFile) {
    await writeHistory(cfg.historyFile, [...history, { role: 'user', content: cfg.prompt }, { role: 'assistant', content: answer }]);
  }
  return EXIT.ok;
}

/** Serves the OpenAI-compatible endpoint in front of the running server until Ctrl+C. */
async function serveOpenai(cfg: CliConfig, io: CliIo): Promise<number> {
  return using(await connect(cfg, io), async (cli) => {
    const host = cfg.openaiHost ?? DEFAULT_OPENAI_HOST;
    const endpoint = await startOpenAiServer({
      backend: {
        client: () => cli.session.client,
        model: cli.session.modelName,
        defaults: () => modelSamplingDefaults(DEFAULT_MODEL_SETTINGS),
        idleTimeoutMs: (cfg.timeoutS ?? 300) * 1000,
      },
      host,
      port: cfg.openaiPort ?? DEFAULT_OPENAI_PORT,
      ...(cfg.openaiApiKey ? { apiKey: cfg.openaiApiKey } : {}),
      log: (line) => io.err(`${line}\n`),
    });
    io.out(`OpenAI-compatible endpoint for ${named(cli.session.modelName)} at ${endpoint.url}${cfg.openaiApiKey ? ' (API key required)' : ''}\n`);
    if (!isLoopbackHost(host)) io.err(`warning: listening on ${host}: other machines can reach it; requests need the API key\n`);
    io.out('press Ctrl+C to stop\n');
    try {
      await new Promise<void>((resolve) => {
        if (io.signal.aborted) resolve();
        else io.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      await endpoint.close();
    }
    return EXIT.ok;
  });
}

/** `stats` samples twice, this far apart, for the rates (the Server Status view's interval is 2 s). */
const STATS_INTERVAL_MS = 1_000;

async function stats(cfg: CliConfig, io: CliIo): Promise<number> {
  return using(await connect(cfg, io), async (cli) => {
    const t = clientOf(cli);
    const name = cli.session.modelName;
    const first = await statusSample(t, name, io.signal);
    const firstStats = first.stats;
    if (!firstStats) throw new ServerNotRunningError(`No statistics for ${named(name)}: it is not loaded.`);
    // Rates need a second sample; the figures shown are the later one's.
    await sleep(STATS_INTERVAL_MS, io.signal);
    const sample = await statusSample(t, name, io.signal);
    reportStats(io, cfg.json === true, { ...first, stats: firstStats }, sample);
    return EXIT.ok;
  });
}

/** One sample of the model's statistics and the metrics port (which is optional: disabled, or not published). */
async function statusSample(t: TritonClient, modelName: string, signal: AbortSignal): Promise<StatsSample> {
  const [raw] = await t.modelStatistics(modelName, { signal });
  const sample: StatsSample = { at: Date.now(), gpus: [], metrics: false, ...(raw ? { stats: raw } : {}) };
  if (!t.metricsUrl) return sample;
  try {
    Object.assign(sample, metricsFigures(await t.metrics({ signal }), modelName), { metrics: true });
  } catch { /* no metrics: the statistics alone */ }
  return sample;
}

async function logs(cfg: CliConfig, io: CliIo): Promise<number> {
  requireManaged(cfg);
  const m = containerManager(sessionSettingsFromCli(cfg, io).server, terminalLog(cfg, io));
  try {
    if (!cfg.follow) {
      const status = await m.status(io.signal);
      if (status.state === 'absent') throw new ServerNotRunningError('There is no container, so no log.');
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
