// The session's hold on one server: our container (or an external URL), its Triton client and what watches it —
// the exit watch (`docker wait`), the log follower, health polling while requests run, the periodic probe of an
// external server — and how a server that went away is noticed and reported.
import { containerExitedError, isLoopback, type ServerError, type ServerHandle, type ServerStatus } from '../server';
import { failure, readableLogLine, reportModel, toObservation, type ModelReport } from './observe';
import type { ContainerControl, Disposable, SessionClient, SessionDeps, SessionOptions } from './ports';
import { externalHeaders, readCaFile } from './externalAuth';
import type { SessionSettings } from './sessionSettings';

/** While a request is in flight the server's health is checked this often, so a crash is reported quickly. */
const IN_FLIGHT_HEALTH_MS = 2_000;
/** An external server is probed this often to keep the state truthful (we get no other signal). */
const EXTERNAL_PROBE_MS = 10_000;
/** `docker wait` ended while the container still runs (docker lost its daemon): watch again after this pause. */
const REWATCH_MS = 5_000;

/** What attach found: our container's status, or an external server. */
export type AttachResult = ServerStatus | { state: 'external' };

/** Whether the server answers and what it says about the model. */
export interface ServerReport {
  live: boolean;
  model?: ModelReport;
}

export class SessionConnection<C extends SessionClient> {
  private current: ContainerControl | undefined;
  private connected: C | undefined;
  private handle: ServerHandle | undefined;
  private exitWatch: Disposable | undefined;
  private rewatch: Disposable | undefined;
  private logFollow: Disposable | undefined;
  private externalPoll: Disposable | undefined;
  private healthPoll: Disposable | undefined;
  private inFlight = 0;
  private probing = false;
  private disposed = false;
  private attaching: Promise<unknown> = Promise.resolve();
  /** Set while a stop runs: the server going away is then what was asked for. */
  stopping = false;
  /** Where the container's log lines go while a start or load shows progress. */
  progressDetail: ((text: string) => void) | undefined;

  constructor(
    private readonly deps: SessionDeps<C>,
    private readonly options: SessionOptions,
    /** The server went away on its own (after the state and the person were told). */
    private readonly onLost: () => void,
    /** The Triton name of the model the server serves (the session's choice). */
    private readonly modelName: () => string,
  ) {}

  get client(): C | undefined {
    return this.connected;
  }

  get serverHandle(): ServerHandle | undefined {
    return this.handle;
  }

  /** The container we are attached to, if any. */
  get container(): ContainerControl | undefined {
    return this.current;
  }

  private get log() {
    return this.deps.log;
  }

  /**
   * Finds the server without starting one: our running container (managed) or the configured URL (external).
   * Calls run one after another, so activation and a late settings change cannot attach twice.
   */
  attach(): Promise<AttachResult> {
    const next = this.attaching.then(() => this.attachNow());
    this.attaching = next.catch(() => undefined);
    return next;
  }

  private async attachNow(): Promise<AttachResult> {
    if (this.disposed) return { state: 'absent' };
    const settings = this.deps.settings();
    if (settings.mode === 'external') {
      this.connectExternal(settings);
      await this.probe();
      return { state: 'external' };
    }
    if (this.handle) return { state: 'running', handle: this.handle };
    const container = this.deps.createContainer(settings.server);
    let status: ServerStatus;
    try {
      status = await container.status();
    } catch (e) {
      container.dispose();
      throw e;
    }
    if (status.state !== 'running') {
      container.dispose();
      this.log.info('No running ChatGLM3 container of ours was found; the server is stopped.');
      return status;
    }
    const { handle } = status;
    this.log.info(`Attached to the running container ${handle.containerName} (${handle.containerId.slice(0, 12)}) at ${handle.url}.`);
    this.warnIfExposed(handle.bindAddress, 'is');
    this.adopt(container, handle, true);
    await this.probe();
    return status;
  }

  warnIfExposed(bindAddress: string, verb: 'is' | 'will be'): void {
    if (!isLoopback(bindAddress)) this.log.warn(`The server ${verb} reachable from other machines on ${bindAddress} (bindAddress).`);
  }

  /** Takes over a running container: client with its admin key, log follower, exit watch. */
  adopt(container: ContainerControl, handle: ServerHandle, attached: boolean): void {
    this.disposeWatchers();
    if (this.current && this.current !== container) this.current.dispose();
    this.current = container;
    this.handle = handle;
    this.log.addSecret(handle.adminKey);
    void this.setClient(this.deps.createClient({
      baseUrl: handle.url,
      metricsUrl: handle.metricsUrl,
      adminKey: handle.adminKey,
      adminHeader: handle.adminHeader,
      requestTimeoutMs: this.deps.settings().requestTimeoutMs,
    }));
    if (!this.options.watch) return;
    if (attached) this.logFollow = container.followLogs((line) => this.onContainerLog(line), { tail: 50 });
    this.watchExit(container, handle.containerId);
  }

  private connectExternal(settings: SessionSettings): void {
    const { external } = settings;
    for (const value of Object.values(external.headers)) this.log.addSecret(value);
    this.log.addSecret(external.adminKey);
    this.log.addSecret(external.apiKey);
    void this.setClient(this.deps.createClient({
      baseUrl: external.url,
      headers: externalHeaders(external),
      ...(external.caFile ? { ca: readCaFile(external.caFile) } : {}),
      ...(external.metricsUrl ? { metricsUrl: external.metricsUrl } : {}),
      ...(external.adminKey ? { adminKey: external.adminKey } : {}),
      requestTimeoutMs: settings.requestTimeoutMs,
    }));
    this.externalPoll?.dispose();
    this.externalPoll = this.options.watch ? this.deps.timers.every(EXTERNAL_PROBE_MS, () => void this.probe()) : undefined;
  }

  /** A line the container wrote: to the log, and (glog prefix removed) to the progress shown now. */
  onContainerLog(line: string): void {
    this.log.container(line);
    const text = readableLogLine(line);
    if (text) this.progressDetail?.(text);
  }

  // ---- health -------------------------------------------------------------------------------------------------

  /**
   * Counts a request (chat answer, explanation) while it runs; meanwhile health is polled every 2 s so a crashed
   * server is reported at once instead of when the stream times out.
   */
  async track<T>(request: Promise<T>): Promise<T> {
    this.inFlight++;
    if (this.options.watch && !this.healthPoll) this.healthPoll = this.deps.timers.every(IN_FLIGHT_HEALTH_MS, () => void this.checkHealth());
    try {
      return await request;
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) {
        this.healthPoll?.dispose();
        this.healthPoll = undefined;
      }
    }
  }

  async report(): Promise<ServerReport | undefined> {
    const client = this.connected;
    if (!client) return undefined;
    if (!(await client.isLive({ timeoutMs: 3_000 }))) return { live: false };
    return { live: true, model: await reportModel(client, this.modelName()) };
  }

  /** Asks the server what it is doing and adopts it (after errors, on attach, periodically for external servers). */
  async probe(): Promise<void> {
    if (!this.connected || this.probing) return;
    this.probing = true;
    try {
      const report = await this.report();
      if (!report) return;
      if (report.live && report.model) {
        this.deps.state.dispatch({ type: 'observed', live: true, ...toObservation(report.model) });
      } else if (this.deps.settings().mode === 'managed') {
        await this.checkContainer();
      } else {
        this.deps.state.dispatch({ type: 'observed', live: false, model: 'unloaded' });
      }
    } catch (e) {
      this.log.debug(`probe failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      this.probing = false;
    }
  }

  private async checkHealth(): Promise<void> {
    const client = this.connected;
    if (!client || this.probing || this.stopping) return;
    const live = await client.isLive({ timeoutMs: 2_000 }).catch(() => false);
    if (!live) await this.probe();
  }

  /**
   * The managed server stopped answering (or its exit watch ended): find out whether the container died, and say
   * so with its last words. Returns true while the container still runs.
   */
  private async checkContainer(): Promise<boolean> {
    const container = this.current;
    if (!container || this.stopping || this.disposed) return false;
    const server = this.deps.state.current.server;
    if (server !== 'running' && server !== 'starting') return false;
    try {
      const status = await container.status();
      if (status.state === 'running') return true; // alive but briefly not answering: the next check decides
      this.serverLost(status.state === 'exited'
        ? containerExitedError(status.exitCode, status.logTail)
        : containerExitedError(undefined, ['The container was removed.']));
      return false;
    } catch (e) {
      this.log.error('Checking the container failed', e);
      return true;
    }
  }

  /**
   * Why the managed server stopped answering, when its container says so: exited (with its code and last lines)
   * or removed. Undefined while it runs, in external mode, or when docker cannot tell.
   */
  async containerExit(): Promise<ServerError | undefined> {
    const container = this.current;
    if (!container || this.stopping || this.disposed) return undefined;
    try {
      let status = await container.status();
      // The stream can break a moment before the daemon records the exit: look once more.
      if (status.state === 'running') status = await new Promise<void>((r) => setTimeout(r, 300)).then(() => container.status());
      if (status.state === 'exited') return containerExitedError(status.exitCode, status.logTail);
      if (status.state === 'absent') return containerExitedError(undefined, ['The container was removed.']);
      return undefined;
    } catch {
      return undefined;
    }
  }

  private serverLost(error: ServerError): void {
    if (this.stopping || this.disposed) return;
    if (!this.deps.state.dispatch({ type: 'serverLost', error: failure(error) })) return;
    this.onLost();
    void this.release();
    for (const line of error.logTail ?? []) this.log.container(line);
    this.deps.ui.showError('server', error);
  }

  /** `docker wait` on our container: it returns when the container stops. */
  private watchExit(container: ContainerControl, containerId: string): void {
    this.exitWatch?.dispose();
    const watch = container.watchExit(containerId);
    this.exitWatch = watch;
    void watch.done.then(async () => {
      if (this.exitWatch !== watch || this.stopping || this.disposed) return;
      this.exitWatch = undefined;
      const running = await this.checkContainer();
      if (running && this.current === container) {
        this.rewatch = this.deps.timers.after(REWATCH_MS, () => {
          this.rewatch = undefined;
          if (this.current === container && !this.disposed) this.watchExit(container, containerId);
        });
      }
    });
  }

  // ---- release ------------------------------------------------------------------------------------------------

  /** Swaps the client; resolves when the old one's connections are closed. */
  private setClient(client: C | undefined): Promise<void> {
    const old = this.connected;
    this.connected = client;
    this.deps.onClientChanged?.(client);
    return old && old !== client ? old.destroy().catch(() => undefined) : Promise.resolve();
  }

  private disposeWatchers(): void {
    for (const watcher of [this.exitWatch, this.rewatch, this.logFollow]) watcher?.dispose();
    this.exitWatch = this.rewatch = this.logFollow = undefined;
  }

  /** Drops the client and the watchers (the container itself is left as it is); resolves when connections closed. */
  release(): Promise<void> {
    this.disposeWatchers();
    this.externalPoll?.dispose();
    this.externalPoll = undefined;
    this.handle = undefined;
    return this.setClient(undefined);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.healthPoll?.dispose();
    const closing = this.release();
    this.current?.dispose();
    this.current = undefined;
    await closing;
  }
}
