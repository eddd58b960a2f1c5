// Drives the server and the model through the core: C's ContainerManager (managed mode) or a configured URL
// (external mode), B's TritonClient for load/unload/health and B's installRepository for the mounted model
// repository. It owns the client, the container log follower and the crash watcher; the state it reaches is
// published only through the LifecycleStore.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { installRepository, MODEL_NAME } from '../../core/repository';
import {
  containerExitedError, ContainerManager, DEFAULT_SETTINGS, isServerError, logsArgs, resolveSettings, ServerError,
  type LineStream, type ServerHandle, type ServerSettings,
} from '../../core/server';
import type { LifecycleFailure, ModelObservation } from '../../core/state/lifecycle';
import { isTritonError, TritonClient, TritonError, type RepositoryIndexEntry } from '../../core/triton';
import { blocksStart } from '../../core/settings/settingsParser';
import type { ExtensionSettings } from '../../core/settings/settingsSchema';
import type { SettingsService } from '../config/settingsService';
import { showError } from '../errors/presentError';
import type { Log } from '../log';
import type { LifecycleStore } from '../state/lifecycleStore';
import { withElapsedProgress } from '../util/progress';
import { toModelSettings, toServerSettings } from '../../core/settings/settingsMapping';

export interface ServerPaths {
  /** The packaged triton/ directory (model repository source, Dockerfile). */
  tritonDir: string;
  /** Where the rendered repository lives (global storage): mounted read-only as /models. */
  repositoryDir: string;
}

/** While a request is in flight the server's health is checked this often, so a crash is reported quickly. */
const IN_FLIGHT_HEALTH_MS = 2_000;
/** An external server is probed this often to keep the status bar truthful (we get no other signal). */
const EXTERNAL_PROBE_MS = 10_000;
/** Last-resort crash watch when neither `docker wait` nor a log stream can tell us the container stopped. */
const CONTAINER_POLL_MS = 5_000;

export class ServerController implements vscode.Disposable {
  private manager: ContainerManager | undefined;
  private client: TritonClient | undefined;
  private handle: ServerHandle | undefined;
  private crashWatch: LineStream | undefined;
  private logFollow: { dispose(): void } | undefined;
  /** The start or load that a Stop / Unload must cancel. */
  private operation: AbortController | undefined;
  private inFlight = 0;
  private healthTimer: ReturnType<typeof setInterval> | undefined;
  private externalTimer: ReturnType<typeof setInterval> | undefined;
  private probing = false;
  private stopping = false;
  private disposed = false;
  private lastLogLine: ((line: string) => void) | undefined;
  private readonly clientEmitter = new vscode.EventEmitter<TritonClient | undefined>();
  /** Fired when the client changes (connected, reconnected, gone): the status panel re-binds to it. */
  readonly onDidChangeClient = this.clientEmitter.event;

  constructor(
    private readonly settings: SettingsService,
    private readonly store: LifecycleStore,
    private readonly log: Log,
    private readonly paths: ServerPaths,
  ) {}

  get tritonClient(): TritonClient | undefined {
    return this.client;
  }

  /** The managed container we are connected to (undefined in external mode or when stopped). */
  get serverHandle(): ServerHandle | undefined {
    return this.handle;
  }

  private get s(): ExtensionSettings {
    return this.settings.current;
  }

  // ---- activation -----------------------------------------------------------------------------------------

  /**
   * Re-attaches to our running container (managed) or probes the configured server (external). Never starts one.
   * Calls run one after another, so activation and a late settings change cannot attach twice.
   */
  attach(): Promise<void> {
    const next = this.attaching.then(() => this.attachNow());
    this.attaching = next.catch(() => undefined);
    return next;
  }

  private attaching: Promise<void> = Promise.resolve();

  private async attachNow(): Promise<void> {
    if (this.disposed) return;
    if (this.s.serverMode === 'managed' && this.handle) return; // already attached
    if (this.s.serverMode === 'external') {
      this.connectExternal();
      await this.probe();
      return;
    }
    try {
      const manager = this.managerFor(this.s, true);
      const handle = await manager.attach();
      if (!handle) {
        this.log.info('No running ChatGLM3 container of ours was found; the server is stopped.');
        return;
      }
      this.log.info(`Attached to the running container ${handle.containerName} (${handle.containerId.slice(0, 12)}) at ${handle.url}.`);
      this.adopt(manager, handle, true);
      await this.probe();
    } catch (e) {
      // Docker missing or the daemon down at startup is not worth a popup: the status bar shows "stopped" and
      // Start reports the real error with its fix.
      this.log.warn(`Could not look for a running container: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Server mode or URL changed: drop the old connection and look again. */
  async reconnect(): Promise<void> {
    this.operation?.abort();
    this.releaseConnection();
    this.store.dispatch({ type: 'modeChanged', mode: this.s.serverMode });
    await this.attach();
  }

  // ---- start / stop -----------------------------------------------------------------------------------------

  async start(): Promise<void> {
    const s = this.s;
    if (s.serverMode !== 'managed') return;
    const conflict = blocksStart(this.settings.problems);
    if (conflict) {
      this.log.warn(`Start refused: ${conflict.key} equals another port.`);
      const open = vscode.l10n.t('Open Settings');
      const picked = await vscode.window.showErrorMessage(vscode.l10n.t('The HTTP, gRPC and metrics ports must be different. Change {0} in the settings.', `tritonChatglm.${conflict.key}`), open);
      if (picked === open) await vscode.commands.executeCommand('workbench.action.openSettings', `tritonChatglm.${conflict.key}`);
      return;
    }
    if (!s.weightsPath) {
      await showError(this.log, 'Start', new ServerError({ code: 'weights-missing', message: 'No weights path is set.', fix: '' }));
      return;
    }
    if (!this.store.dispatch({ type: 'startRequested' })) return;
    const op = this.beginOperation();
    let manager: ContainerManager | undefined;
    try {
      await withElapsedProgress(vscode.l10n.t('Starting the ChatGLM3 server'), true, async (report, signal) => {
        report.step(vscode.l10n.t('Preparing the model repository'));
        await this.installRepository(s);
        manager = this.managerFor(s, false);
        this.lastLogLine = (line) => report.detail(line);
        const handle = await manager.start({
          signal,
          onLog: (line) => this.onContainerLog(line),
          onProgress: (step) => report.step(startStepText(step)),
        });
        this.adopt(manager, handle, false);
      }, op.signal);
      this.store.dispatch({ type: 'serverUp' });
      this.log.info('The server is live.');
      void this.offerLoadAfterStart();
    } catch (e) {
      const cancelled = op.signal.aborted || isCancellation(e);
      if (cancelled && this.stopping) return; // Stop Server cancelled the start and removes the container itself.
      if (cancelled) {
        this.log.info('Start cancelled; removing the container.');
        this.store.dispatch({ type: 'stopRequested' });
        await manager?.stop().catch((err: unknown) => this.log.error('Removing the container failed', err));
        this.releaseConnection();
        this.store.dispatch({ type: 'serverStopped' });
        return;
      }
      this.releaseConnection();
      this.store.dispatch({ type: 'startFailed', error: failure(e) });
      await showError(this.log, 'Start', e);
    } finally {
      this.endOperation(op);
      this.lastLogLine = undefined;
    }
  }

  async stop(): Promise<void> {
    if (this.s.serverMode !== 'managed') return;
    const manager = this.manager ?? this.managerFor(this.s, true);
    this.operation?.abort();
    if (!this.store.dispatch({ type: 'stopRequested' })) return;
    this.stopping = true;
    try {
      await withElapsedProgress(vscode.l10n.t('Stopping the ChatGLM3 server'), false, async (report) => {
        report.step(vscode.l10n.t('Stopping the container'));
        // Close our pooled keep-alive connections first: on SIGTERM Triton waits (up to --exit-timeout-secs, 30 s)
        // for every open HTTP connection, idle ones included, so a kept-alive pool would hold the stop for 30 s.
        this.releaseConnection();
        await manager.stop();
      });
      this.log.info('The server was stopped and its container removed.');
    } catch (e) {
      await showError(this.log, 'Stop', e);
    } finally {
      this.stopping = false;
      this.releaseConnection();
      this.store.dispatch({ type: 'serverStopped' });
    }
  }

  async restart(): Promise<void> {
    if (this.store.current.server !== 'stopped') await this.stop();
    await this.start();
  }

  // ---- load / unload ----------------------------------------------------------------------------------------

  async load(): Promise<void> {
    const client = this.client;
    if (!client) return;
    const wasReady = this.store.current.model === 'ready';
    if (!this.store.dispatch({ type: 'loadRequested' })) return;
    const op = this.beginOperation();
    try {
      await withElapsedProgress(vscode.l10n.t('Loading ChatGLM3'), true, async (report, signal) => {
        if (this.s.serverMode === 'managed') {
          report.step(vscode.l10n.t('Writing the model configuration'));
          const changed = await this.installRepository(this.s);
          if (wasReady && changed.length > 0) {
            // A changed model would be loaded next to the old copy before the swap (twice the GPU memory):
            // unload first and wait until it is gone.
            report.step(vscode.l10n.t('Unloading the old model'));
            await client.unloadModel(MODEL_NAME, { signal });
            await client.waitForState(MODEL_NAME, 'UNAVAILABLE', { signal, timeoutMs: 300_000 });
          }
        }
        report.step(vscode.l10n.t('Loading the weights onto the GPU'));
        this.lastLogLine = (line) => report.detail(line);
        await client.loadModel(MODEL_NAME, {
          signal,
          progressIntervalMs: 1_000,
          onProgress: (p) => { if (p.state) report.detail(indexStateText(p.state)); },
        });
      }, op.signal);
      this.store.dispatch({ type: 'modelReady' });
      this.log.info('ChatGLM3 is ready.');
    } catch (e) {
      if (op.signal.aborted || isCancellation(e)) {
        // Cancelling a load = stop waiting and unload what the server may still be loading.
        this.log.info('Load cancelled; unloading.');
        await client.unloadModel(MODEL_NAME).catch((err: unknown) => this.log.error('Unload after cancel failed', err));
        this.store.dispatch({ type: 'modelUnloaded' });
        return;
      }
      this.store.dispatch({ type: 'loadFailed', error: failure(e) });
      await showError(this.log, 'Load', e);
    } finally {
      this.endOperation(op);
      this.lastLogLine = undefined;
    }
  }

  async unload(): Promise<void> {
    const client = this.client;
    if (!client) return;
    if (this.store.current.model === 'loading') {
      // The load's own cancel path unloads and reports.
      this.operation?.abort();
      return;
    }
    if (!this.store.dispatch({ type: 'unloadRequested' })) return;
    try {
      await withElapsedProgress(vscode.l10n.t('Unloading ChatGLM3'), false, async (report) => {
        report.step(vscode.l10n.t('Waiting for running requests to finish'));
        await client.unloadModel(MODEL_NAME);
        await client.waitForState(MODEL_NAME, 'UNAVAILABLE', { timeoutMs: 300_000 });
      });
      this.store.dispatch({ type: 'modelUnloaded' });
    } catch (e) {
      await showError(this.log, 'Unload', e);
      await this.probe();
    }
  }

  // ---- image ------------------------------------------------------------------------------------------------

  async buildImage(): Promise<void> {
    if (this.store.actionContext.building) return;
    const s = this.s;
    // The build needs only the docker binary and the image name: paths may still be unset.
    const manager = new ContainerManager(this.buildSettings(s), { onCommand: (line) => this.log.info(`$ ${line}`) });
    this.store.setBuilding(true);
    const op = new AbortController();
    this.buildAbort = op;
    try {
      await withElapsedProgress(vscode.l10n.t('Building the serving image {0}', s.image), true, async (report, signal) => {
        report.step(vscode.l10n.t('Running docker build (the first build downloads several GB)'));
        await manager.buildImage(this.paths.tritonDir, (line) => {
          this.log.info(`[build] ${line}`);
          report.detail(line);
        }, signal);
      }, op.signal);
      this.log.info(`Built the image ${s.image}.`);
      const start = vscode.l10n.t('Start Server');
      const picked = await vscode.window.showInformationMessage(vscode.l10n.t('The serving image {0} is ready.', s.image), start);
      if (picked === start) await vscode.commands.executeCommand('tritonChatglm.startServer');
    } catch (e) {
      if (op.signal.aborted || isCancellation(e)) this.log.info('Image build cancelled.');
      else await showError(this.log, 'Build image', e);
    } finally {
      manager.dispose();
      this.buildAbort = undefined;
      this.store.setBuilding(false);
    }
  }

  private buildAbort: AbortController | undefined;

  cancelBuild(): void {
    this.buildAbort?.abort();
  }

  // ---- health -------------------------------------------------------------------------------------------------

  /**
   * Counts a request (chat answer, explanation) while it runs; during that time health is polled every 2 s so a
   * crashed server is reported at once instead of when the stream times out.
   */
  async track<T>(request: Promise<T>): Promise<T> {
    this.inFlight++;
    if (!this.healthTimer) this.healthTimer = setInterval(() => void this.checkHealth(), IN_FLIGHT_HEALTH_MS);
    try {
      return await request;
    } finally {
      this.inFlight--;
      if (this.inFlight === 0 && this.healthTimer) {
        clearInterval(this.healthTimer);
        this.healthTimer = undefined;
      }
    }
  }

  /** Asks the server what it is doing and adopts it (after errors, on attach, periodically for external servers). */
  async probe(): Promise<void> {
    const client = this.client;
    if (!client || this.probing) return;
    this.probing = true;
    try {
      const live = await client.isLive({ timeoutMs: 3_000 });
      if (!live) {
        if (this.s.serverMode === 'managed') await this.checkContainer();
        else this.store.dispatch({ type: 'observed', live: false, model: 'unloaded' });
        return;
      }
      const observation = await this.observeModel(client);
      this.store.dispatch({ type: 'observed', live: true, ...observation });
    } catch (e) {
      this.log.debug(`probe failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.probing = false;
    }
  }

  private async observeModel(client: TritonClient): Promise<{ model: ModelObservation; modelError?: LifecycleFailure }> {
    let row: RepositoryIndexEntry | undefined;
    try {
      row = await client.modelState(MODEL_NAME, { timeoutMs: 5_000 });
    } catch (e) {
      // An external server may restrict the repository API; readiness is public.
      if (isTritonError(e, 'unauthorized')) return { model: (await client.isModelReady(MODEL_NAME, { timeoutMs: 5_000 })) ? 'ready' : 'unloaded' };
      throw e;
    }
    switch (row?.state) {
      case 'READY': return { model: 'ready' };
      case 'LOADING': return { model: 'loading' };
      case 'UNLOADING': return { model: 'unloading' };
      case 'UNAVAILABLE':
        if (row.reason && row.reason !== 'unloaded') {
          return { model: 'failed', modelError: { code: 'model-load-failed', message: row.reason } };
        }
        return { model: 'unloaded' };
      default: return { model: 'unloaded' };
    }
  }

  private async checkHealth(): Promise<void> {
    const client = this.client;
    if (!client || this.probing || this.stopping) return;
    const live = await client.isLive({ timeoutMs: 2_000 }).catch(() => false);
    if (!live) await this.probe();
  }

  /**
   * The managed server stopped answering (or its watcher ended): find out whether the container died, and say so
   * with its last words. Returns true when the container is still running.
   */
  private async checkContainer(): Promise<boolean> {
    const manager = this.manager;
    if (!manager || this.stopping || this.disposed) return false;
    const current = this.store.current.server;
    if (current !== 'running' && current !== 'starting') return false;
    try {
      const status = await manager.status();
      if (status.state === 'running') return true; // alive but briefly not answering: the next check decides
      const error = status.state === 'exited'
        ? containerExitedError(status.exitCode, status.logTail)
        : containerExitedError(undefined, ['The container was removed.']);
      this.onServerLost(error);
      return false;
    } catch (e) {
      this.log.error('Checking the container failed', e);
      return true;
    }
  }

  private onServerLost(error: ServerError): void {
    if (this.stopping || this.disposed) return;
    if (!this.store.dispatch({ type: 'serverLost', error: failure(error) })) return;
    this.operation?.abort();
    this.releaseConnection();
    for (const line of error.logTail ?? []) this.log.container(line);
    void showError(this.log, 'Server', error);
  }

  // ---- plumbing -----------------------------------------------------------------------------------------------

  private managerFor(s: ExtensionSettings, lenient: boolean): ContainerManager {
    const input = toServerSettings(s, this.paths.repositoryDir);
    // Attaching and stopping need only the name and the docker binary; a start validates everything.
    const settings: ServerSettings = lenient ? this.buildSettings(s) : resolveSettings(input);
    return new ContainerManager(settings, { onCommand: (line) => this.log.info(`$ ${line}`) });
  }

  private buildSettings(s: ExtensionSettings): ServerSettings {
    return {
      ...DEFAULT_SETTINGS,
      ...toServerSettings(s, this.paths.repositoryDir),
      gpuIds: s.gpuIds.length === 0 ? 'all' : [...s.gpuIds],
      extraEnv: {},
    };
  }

  private async installRepository(s: ExtensionSettings): Promise<string[]> {
    const result = await installRepository({
      source: path.join(this.paths.tritonDir, 'model_repository'),
      destination: this.paths.repositoryDir,
      settings: toModelSettings(s),
    });
    if (result.changed.length > 0) this.log.info(`Model repository updated: ${result.changed.join(', ')}`);
    return result.changed;
  }

  /** Takes over a running container: client with its admin key, log follower, crash watcher. */
  private adopt(manager: ContainerManager, handle: ServerHandle, attached: boolean): void {
    this.disposeWatchers();
    if (this.manager && this.manager !== manager) this.manager.dispose();
    this.manager = manager;
    this.handle = handle;
    this.log.addSecret(handle.adminKey);
    this.setClient(new TritonClient({
      baseUrl: handle.url,
      metricsUrl: handle.metricsUrl,
      adminKey: handle.adminKey,
      adminHeader: handle.adminHeader,
      requestTimeoutMs: this.s.requestTimeoutSeconds * 1000,
    }));
    if (attached) this.logFollow = manager.followLogs((line) => this.onContainerLog(line), { tail: 50 });
    this.watchContainer(manager, handle.containerId);
  }

  /**
   * Crash watch. `docker wait` returns when the container stops: the quickest signal there is, with one idle
   * process. A docker (or stand-in) without `wait` returns at once while the container still runs; then the end
   * of a `docker logs -f` stream is the signal, and as a last resort the container is inspected every 5 s.
   */
  private watchContainer(manager: ContainerManager, containerId: string, how: 'wait' | 'logs' | 'poll' = 'wait'): void {
    this.crashWatch?.dispose();
    this.crashWatch = undefined;
    if (how === 'poll') {
      const timer = setInterval(() => void this.checkContainer(), CONTAINER_POLL_MS);
      this.crashWatch = { done: new Promise<undefined>(() => undefined), dispose: () => clearInterval(timer) };
      return;
    }
    const args = how === 'wait' ? ['wait', containerId] : logsArgs(containerId, { follow: true, tail: 0 });
    const watch = manager.docker.stream(args, () => undefined);
    this.crashWatch = watch;
    void watch.done.then(async () => {
      if (this.crashWatch !== watch || this.stopping || this.disposed) return;
      this.crashWatch = undefined;
      const running = await this.checkContainer();
      if (running && this.manager === manager) this.watchContainer(manager, containerId, how === 'wait' ? 'logs' : 'poll');
    });
  }

  private connectExternal(): void {
    const s = this.s;
    for (const value of Object.values(s.externalHeaders)) this.log.addSecret(value);
    this.setClient(new TritonClient({
      baseUrl: s.externalUrl,
      headers: s.externalHeaders,
      ...(s.externalMetricsUrl ? { metricsUrl: s.externalMetricsUrl } : {}),
      requestTimeoutMs: s.requestTimeoutSeconds * 1000,
    }));
    if (this.externalTimer) clearInterval(this.externalTimer);
    this.externalTimer = setInterval(() => void this.probe(), EXTERNAL_PROBE_MS);
  }

  private setClient(client: TritonClient | undefined): void {
    const old = this.client;
    this.client = client;
    if (old && old !== client) void old.destroy().catch(() => undefined);
    this.clientEmitter.fire(client);
  }

  private onContainerLog(line: string): void {
    this.log.container(line);
    // The progress notification shows what Triton says, without glog's "I1130 08:07:46.04 11203 file.cc:12]" prefix.
    const text = line.replace(/^[IWEF]\d{4} [\d:.]+\s+\d+ [\w.-]+:\d+\]\s*/, '').replace(/^"(.*)"$/, '$1').trim();
    if (text && !/^[+|-]/.test(text)) this.lastLogLine?.(text);
  }

  private async offerLoadAfterStart(): Promise<void> {
    const load = vscode.l10n.t('Load Model');
    const picked = await vscode.window.showInformationMessage(vscode.l10n.t('The ChatGLM3 server is running. Load the model now?'), load);
    if (picked === load) await this.load();
  }

  private beginOperation(): AbortController {
    this.operation?.abort();
    const op = new AbortController();
    this.operation = op;
    return op;
  }

  private endOperation(op: AbortController): void {
    if (this.operation === op) this.operation = undefined;
  }

  private disposeWatchers(): void {
    this.crashWatch?.dispose();
    this.crashWatch = undefined;
    this.logFollow?.dispose();
    this.logFollow = undefined;
  }

  private releaseConnection(): void {
    this.disposeWatchers();
    if (this.externalTimer) clearInterval(this.externalTimer);
    this.externalTimer = undefined;
    this.handle = undefined;
    this.setClient(undefined);
  }

  /** The running container keeps running: a window reload attaches to it again. */
  dispose(): void {
    this.disposed = true;
    this.operation?.abort();
    this.buildAbort?.abort();
    if (this.healthTimer) clearInterval(this.healthTimer);
    this.releaseConnection();
    this.manager?.dispose();
    this.manager = undefined;
    this.clientEmitter.dispose();
  }
}

function failure(e: unknown): LifecycleFailure {
  if (isServerError(e) || e instanceof TritonError) {
    const reason = e instanceof TritonError ? e.details.serverMessage ?? e.message : e.message;
    return { code: e.code, message: reason };
  }
  return { code: 'unknown', message: e instanceof Error ? e.message : String(e) };
}

function isCancellation(e: unknown): boolean {
  return (isServerError(e) && e.code === 'cancelled') || isTritonError(e, 'cancelled') || (e instanceof Error && e.name === 'AbortError');
}

function startStepText(step: 'preflight' | 'removing-old' | 'running' | 'waiting-live' | 'live'): string {
  switch (step) {
    case 'preflight': return vscode.l10n.t('Checking Docker, the GPU runtime, the image, the weights and the ports');
    case 'removing-old': return vscode.l10n.t('Removing the old stopped container');
    case 'running': return vscode.l10n.t('Starting the container');
    case 'waiting-live': return vscode.l10n.t('Waiting for Triton to answer');
    case 'live': return vscode.l10n.t('Triton is live');
  }
}

function indexStateText(state: string): string {
  switch (state) {
    case 'LOADING': return vscode.l10n.t('Triton reports: loading');
    case 'READY': return vscode.l10n.t('Triton reports: ready');
    case 'UNLOADING': return vscode.l10n.t('Triton reports: unloading the old version');
    case 'UNAVAILABLE': return vscode.l10n.t('Triton reports: not loaded yet');
    default: return state;
  }
}
