// Fakes for the server session: a container layer, a Triton client and timers that the test drives by hand, so
// the policy is checked step by step and event by event, never by waiting for real time to pass.
import type { InstallResult, ModelSettings } from '../../../src/core/repository';
import {
  PREFLIGHT_CHECKS, ServerError, type LineStream, type PreflightCheck, type PreflightCheckId, type PreflightReport, type ServerHandle,
  type ServerSettings, type ServerStatus, type StartOptions,
} from '../../../src/core/server';
import {
  ServerSession, type ContainerControl, type Disposable, type SessionClient, type SessionSettings, type SessionStep, type Timers,
} from '../../../src/core/session';
import { LifecycleMachine, type ServerMode } from '../../../src/core/state/lifecycle';
import { TritonError, type LoadOptions, type ModelState, type RepositoryIndexEntry } from '../../../src/core/triton';
import { abortError } from '../../../src/core/util/abort';

export const MODEL = 'chatglm3-6b';

export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => { resolve = r; });
  return { promise, resolve };
}

/** Lets every promise chain that is already runnable finish (no clock involved). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

interface FakeTimer { ms: number; fn: () => void; repeat: boolean; disposed: boolean }

export class FakeTimers implements Timers {
  private readonly timers: FakeTimer[] = [];

  every(ms: number, fn: () => void): Disposable {
    return this.add({ ms, fn, repeat: true, disposed: false });
  }

  after(ms: number, fn: () => void): Disposable {
    return this.add({ ms, fn, repeat: false, disposed: false });
  }

  private add(timer: FakeTimer): Disposable {
    this.timers.push(timer);
    return { dispose: () => { timer.disposed = true; } };
  }

  /** Timers of this period that have not been disposed (or fired, for one-shot timers). */
  active(ms: number): number {
    return this.timers.filter((t) => !t.disposed && t.ms === ms).length;
  }

  /** The moment `ms` has passed for every live timer of that period. */
  fire(ms: number): void {
    for (const t of this.timers.filter((x) => !x.disposed && x.ms === ms)) {
      if (!t.repeat) t.disposed = true;
      t.fn();
    }
  }
}

export class FakeClient implements SessionClient {
  readonly calls: string[] = [];
  live = true;
  state: ModelState | undefined = 'READY';
  reason: string | undefined;
  /** The index answers 403 (a restricted external server). */
  restrictedIndex = false;
  /** loadModel waits until its signal aborts (a load the test cancels). */
  holdLoad = false;
  destroyed = false;

  async isLive(): Promise<boolean> {
    this.calls.push('isLive');
    return this.live;
  }

  async modelState(): Promise<RepositoryIndexEntry | undefined> {
    this.calls.push('modelState');
    if (this.restrictedIndex) throw new TritonError('unauthorized', 'restricted', { operation: 'repository-index' });
    if (!this.state) return { name: MODEL };
    return { name: MODEL, version: '1', state: this.state, ...(this.reason ? { reason: this.reason } : {}) };
  }

  async isModelReady(): Promise<boolean> {
    this.calls.push('isModelReady');
    return this.state === 'READY';
  }

  /** The names loads addressed. */
  readonly loadedNames: string[] = [];

  async loadModel(model: string, options: LoadOptions = {}): Promise<void> {
    this.calls.push('load');
    this.loadedNames.push(model);
    if (this.holdLoad) {
      await new Promise((_resolve, reject) => options.signal?.addEventListener('abort', () => reject(new TritonError('cancelled', 'cancelled', { operation: 'load' }, { cause: abortError() }))));
    }
    this.state = 'READY';
  }

  /** The names unloads addressed. */
  readonly unloadedNames: string[] = [];

  async unloadModel(model: string): Promise<void> {
    this.calls.push('unload');
    this.unloadedNames.push(model);
    this.state = 'UNAVAILABLE';
    this.reason = 'unloaded';
  }

  async waitForState(_model: string, states: ModelState | ModelState[]): Promise<RepositoryIndexEntry> {
    this.calls.push(`wait:${String(states)}`);
    return { name: MODEL, version: '1', state: this.state ?? 'UNAVAILABLE' };
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
  }
}

export const HANDLE: ServerHandle = {
  containerId: 'c0ffee'.repeat(10), containerName: 'triton-chatglm3', url: 'http://127.0.0.1:8000', metricsUrl: 'http://127.0.0.1:8002/metrics',
  httpPort: 8000, grpcPort: 8001, metricsPort: 8002, bindAddress: '127.0.0.1', adminHeader: 'x-triton-admin', adminKey: 'k'.repeat(48),
  image: 'triton-chatglm:24.10', attached: false,
};

/** A preflight report: every check `ok` except the ones given (an error, or another level with its cause). */
export function preflightReport(problems: Partial<Record<PreflightCheckId, ServerError | { level: PreflightCheck['level']; error?: ServerError; blockedBy?: PreflightCheckId }>> = {}): PreflightReport {
  const checks = PREFLIGHT_CHECKS.map((id): PreflightCheck => {
    const p = problems[id];
    if (!p) return { id, level: 'ok' };
    return p instanceof ServerError ? { id, level: 'error', error: p } : { id, ...p };
  });
  const firstError = checks.find((c) => c.level === 'error')?.error;
  return { ok: !checks.some((c) => c.level === 'error' || c.level === 'blocked'), checks, firstError };
}

export const setupError = (code: ServerError['code'], message: string = code): ServerError => new ServerError({ code, message, fix: `fix ${code}` });

export class FakeContainer implements ContainerControl {
  readonly calls: string[] = [];
  status_: ServerStatus = { state: 'running', handle: { ...HANDLE, attached: true } };
  /** The model the next start labels its container with (the real manager takes it from the settings). */
  model: string | undefined;
  startError: unknown;
  /** What the preflight finds (also the one a start runs first). */
  report: PreflightReport = preflightReport();
  /** Holds every preflight until resolved (a check the test lets finish later). */
  preflightGate: Promise<void> | undefined;

  async preflight(): Promise<PreflightReport> {
    this.calls.push('preflight');
    await this.preflightGate;
    return this.report;
  }
  /** One per `docker wait` started: resolving it is the container stopping (or docker giving up). */
  readonly exits: { resolve(code: number | undefined): void; disposed: boolean }[] = [];
  follows = 0;

  async status(): Promise<ServerStatus> {
    this.calls.push('status');
    return this.status_;
  }

  async start(options: StartOptions): Promise<ServerHandle> {
    this.calls.push('start');
    if (options.preflight !== false) {
      options.onPreflight?.(this.report);
      if (this.report.firstError) throw this.report.firstError;
    }
    options.onProgress?.('running');
    options.onLog?.('I1130 08:07:46.041 11203 server.cc:676] "Started HTTPService at 0.0.0.0:8000"');
    if (this.startError) throw this.startError;
    const handle: ServerHandle = this.model ? { ...HANDLE, model: this.model } : HANDLE;
    this.status_ = { state: 'running', handle };
    return handle;
  }

  async stop(): Promise<void> {
    this.calls.push('stop');
    this.status_ = { state: 'absent' };
    for (const exit of this.exits) exit.resolve(143);
  }

  followLogs(): Disposable {
    this.follows++;
    return { dispose: () => undefined };
  }

  watchExit(): LineStream {
    const done = deferred<number | undefined>();
    const exit = { resolve: done.resolve, disposed: false };
    this.exits.push(exit);
    return { done: done.promise, dispose: () => { exit.disposed = true; } };
  }

  async buildImage(): Promise<void> {
    this.calls.push('build');
  }

  dispose(): void {
    this.calls.push('dispose');
  }
}

export function sessionSettings(mode: ServerMode): SessionSettings {
  return {
    mode,
    server: {
      dockerPath: 'docker', image: 'triton-chatglm:24.10', containerName: 'triton-chatglm3', httpPort: 8000, grpcPort: 8001, metricsPort: 8002,
      bindAddress: '127.0.0.1', gpuIds: 'all', shmSize: '2g', raiseUlimits: true, weightsPath: '/weights', model: 'chatglm3-6b', repositoryPath: '/repo', extraEnv: {},
    },
    modelName: 'chatglm3-6b',
    model: { maxBatchSize: 8 },
    repository: { source: '/pkg/triton/model_repository', destination: '/repo' },
    external: { url: 'http://triton.example:8000', headers: {} },
    requestTimeoutMs: 30_000,
    autoStart: false,
  };
}

export function harness(options: { mode?: ServerMode; watch?: boolean; weightsPath?: string; autoStart?: boolean; recheckSetup?: boolean; model?: string; weightsCaches?: string[] } = {}) {
  const mode = options.mode ?? 'managed';
  const state = new LifecycleMachine(mode);
  const client = new FakeClient();
  const container = new FakeContainer();
  const timers = new FakeTimers();
  const steps: SessionStep[] = [];
  const shown: { context: string; error: unknown }[] = [];
  const logged: string[] = [];
  const installs: string[][] = [];
  /** The container settings and model settings each operation used (the resolved weights among them). */
  const created: ServerSettings[] = [];
  const installed: Partial<ModelSettings>[] = [];
  const repository = { changed: [] as string[] };
  let offers = 0;
  const offerSignals: AbortSignal[] = [];
  /** How the person answers "Load the model now?" (default: not at all; the question stays until it goes stale). */
  let offerAnswer: (stale: AbortSignal) => Promise<boolean> = (stale) => new Promise((resolve) => stale.addEventListener('abort', () => resolve(false)));
  let setupChanges = 0;
  let model = options.model;
  const session = new ServerSession<FakeClient>({
    state,
    settings: () => {
      const s = sessionSettings(mode);
      if (options.weightsPath !== undefined) s.server.weightsPath = options.weightsPath;
      if (options.autoStart !== undefined) s.autoStart = options.autoStart;
      if (model !== undefined) Object.assign(s, { modelName: model, server: { ...s.server, model }, model: { ...s.model, model } });
      return s;
    },
    ui: {
      progress: (_operation, task, signal) => task({ step: (s) => steps.push(s), detail: () => undefined, loadProgress: () => undefined }, signal),
      offerLoad: async (stale) => {
        offers++;
        offerSignals.push(stale);
        return offerAnswer(stale);
      },
      showError: (context, error) => shown.push({ context, error }),
    },
    log: {
      info: (m) => logged.push(m), warn: (m) => logged.push(`warn: ${m}`), error: (m) => logged.push(`error: ${m}`), debug: () => undefined,
      container: (line) => logged.push(`[container] ${line}`), addSecret: () => undefined,
    },
    createClient: () => client,
    createContainer: (server) => {
      created.push(server);
      if (model !== undefined) container.model = server.model;
      return container;
    },
    installRepository: async (o): Promise<InstallResult> => {
      installs.push([o.source, o.destination]);
      installed.push(o.settings ?? {});
      return { path: o.destination, modelPath: `${o.destination}/${MODEL}`, entries: [MODEL], changed: [...repository.changed] };
    },
    timers,
    ...(options.weightsCaches ? { weightsCaches: () => options.weightsCaches! } : {}),
    onSetupChanged: () => { setupChanges++; },
  }, { watch: options.watch ?? true, loadProgressIntervalMs: 1_000, unloadTimeoutMs: 60_000, recheckSetup: options.recheckSetup ?? false });
  return {
    session, state, client, container, timers, steps, shown, logged, installs, created, installed, repository,
    offers: () => offers, offerSignals, answerOffer: (fn: (stale: AbortSignal) => Promise<boolean>) => { offerAnswer = fn; },
    setupChanges: () => setupChanges,
    /** Another model chosen (tritonChatglm.model changed). */
    choose: (id: string) => { model = id; },
  };
}
