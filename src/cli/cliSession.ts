// The CLI's way into the core: its flags become the extension's settings (one mapping for both front ends), and
// the server session runs with the terminal as its user interface: progress on stderr, no questions asked.
import { join } from 'node:path';
import { productionParts, ServerSession, toSessionSettings, type SessionLog, type SessionSettings, type SessionStep, type SessionUi } from '../core/session';
import { parseSettings } from '../core/settings/settingsParser';
import type { ExtensionSettings } from '../core/settings/settingsSchema';
import { LifecycleMachine } from '../core/state/lifecycle';
import type { TritonClient } from '../core/triton';
import { hubCacheCandidates } from '../core/weights/hubCache';
import type { CliConfig } from './options';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  signal: AbortSignal;
  /** Directory holding triton/ (the packaged model repository and Dockerfile). */
  packageRoot: string;
  /** stderr is a terminal: progress is redrawn in place (download's bar). */
  tty?: boolean;
}

export interface CliSession {
  session: ServerSession<TritonClient>;
  state: LifecycleMachine;
  settings: SessionSettings;
  log: SessionLog;
}

/** The extension's settings as the flags (and their environment variables) set them; the defaults elsewhere. */
export function settingsFromCli(cfg: CliConfig): ExtensionSettings {
  const s = parseSettings(() => undefined, true).settings;
  const set = <K extends keyof ExtensionSettings>(key: K, value: ExtensionSettings[K] | undefined) => {
    if (value !== undefined) s[key] = value;
  };
  set('serverMode', cfg.url ? 'external' : 'managed');
  set('externalUrl', cfg.url);
  set('externalCaFile', cfg.caFile);
  set('dockerPath', cfg.dockerPath);
  set('image', cfg.image);
  set('containerName', cfg.containerName);
  set('httpPort', cfg.httpPort);
  set('grpcPort', cfg.grpcPort);
  set('metricsPort', cfg.metricsPort);
  set('bindAddress', cfg.bindAddress);
  set('gpus', cfg.gpuIds === 'all' ? [] : cfg.gpuIds);
  set('shmSize', cfg.shmSize);
  set('raiseUlimits', cfg.raiseUlimits);
  set('weightsPath', cfg.weightsPath);
  set('maxBatchSize', cfg.maxBatchSize);
  set('engine', cfg.engine);
  set('model', cfg.model);
  return s;
}

export function sessionSettingsFromCli(cfg: CliConfig, io: CliIo): SessionSettings {
  const source = cfg.repositorySource ?? join(io.packageRoot, 'triton', 'model_repository');
  return toSessionSettings(settingsFromCli(cfg), { source, destination: cfg.repositoryPath }, cfg.adminKey, cfg.teamKey);
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Container steps are printed as they start ("running..."); the rest of the policy's steps are not news here. */
const PRINTED_STEPS = new Set<SessionStep>(['preflight', 'removing-old', 'running', 'waiting-live']);

function terminalUi(io: CliIo, modelName: () => string): SessionUi {
  return {
    progress: (_operation, task, signal) => task({
      step: (step) => { if (PRINTED_STEPS.has(step)) io.err(`${step}...\n`); },
      detail: () => undefined,
      loadProgress: (p) => io.err(`loading ${modelName()}: ${p.state ?? 'starting'} (${seconds(p.elapsedMs)})\n`),
    }, AbortSignal.any([signal, io.signal])),
    // The CLI never loads on its own: each command prints what to run next instead.
    offerLoad: async () => false,
    showError: (context, error) => io.err(`${context}: ${error instanceof Error ? error.message : String(error)}\n`),
  };
}

/** Everything reaches the terminal with --verbose; warnings always. */
export function terminalLog(cfg: CliConfig, io: CliIo): SessionLog {
  const verbose = (text: string) => { if (cfg.verbose) io.err(`${text}\n`); };
  return {
    info: verbose,
    debug: () => undefined,
    warn: (message) => io.err(`warning: ${message}\n`),
    error: (message, error) => verbose(error === undefined ? message : `${message}: ${error instanceof Error ? error.message : String(error)}`),
    container: (line) => verbose(`[container] ${line}`),
    addSecret: () => undefined,
  };
}

export function openSession(cfg: CliConfig, io: CliIo): CliSession {
  const settings = sessionSettingsFromCli(cfg, io);
  const log = terminalLog(cfg, io);
  const state = new LifecycleMachine(settings.mode);
  const timeoutMs = cfg.timeoutS !== undefined ? cfg.timeoutS * 1000 : undefined;
  const session: CliSession['session'] = new ServerSession({
    ...productionParts(log, timeoutMs !== undefined ? { livenessTimeoutMs: timeoutMs } : {}),
    // The chosen model's snapshot: in the cache `download` uses (--dir) first, then the usual places.
    weightsCaches: () => hubCacheCandidates(process.env, undefined, [cfg.downloadDir]),
    state,
    settings: () => settings,
    ui: terminalUi(io, (): string => session.modelName),
    log,
  }, {
    watch: false,
    loadProgressIntervalMs: 5_000,
    unloadTimeoutMs: timeoutMs ?? 120_000,
    ...(timeoutMs !== undefined ? { loadTimeoutMs: timeoutMs } : {}),
  });
  return { session, state, settings, log };
}
