// The one server/model policy, used by the extension and the CLI alike:
//   start  install the model repository → run the container → attach → watch for its exit
//   load   reinstall → unload first when the files changed (no second copy in GPU memory) → load → wait until ready
//   reload = load of a READY model; unload; stop (a restart is stop + start); attach, probe, report (the status)
// The connection (connection.ts) holds the container, the client and the exit watch and health polling. Every
// state the policy reaches goes through the lifecycle state machine; the front ends show it and word it.
import { MODEL_NAME } from '../repository';
import { resolveSettings, ServerError, type ServerHandle } from '../server';
import { SessionConnection, type AttachResult, type ServerReport } from './connection';
import { failure, isCancellation } from './observe';
import type { ContainerControl, ProgressReport, SessionClient, SessionDeps, SessionOptions } from './ports';
import type { SessionSettings } from './sessionSettings';

/** Poll interval of the repository index while waiting for an unload. */
const STATE_POLL_MS = 250;

export class ServerSession<C extends SessionClient> {
  private readonly connection: SessionConnection<C>;
  /** The start or load that a stop, an unload or a crash must cancel. */
  private operation: AbortController | undefined;

  constructor(private readonly deps: SessionDeps<C>, private readonly options: SessionOptions) {
    this.connection = new SessionConnection(deps, options, () => this.operation?.abort());
  }

  get client(): C | undefined {
    return this.connection.client;
  }

  /** The managed container we are connected to (undefined in external mode or when stopped). */
  get serverHandle(): ServerHandle | undefined {
    return this.connection.serverHandle;
  }

  private get log() {
    return this.deps.log;
  }

  private get state() {
    return this.deps.state;
  }

  /** Finds the server without starting one (see SessionConnection.attach). */
  attach(): Promise<AttachResult> {
    return this.connection.attach();
  }

  /** Server mode or URL changed: drop the old connection and look again. */
  async reconnect(): Promise<AttachResult> {
    this.operation?.abort();
    void this.connection.release();
    this.state.dispatch({ type: 'modeChanged', mode: this.deps.settings().mode });
    return this.connection.attach();
  }

  /** Counts a request while it runs; meanwhile the server's health is polled. */
  track<T>(request: Promise<T>): Promise<T> {
    return this.connection.track(request);
  }

  /** Asks the server what it is doing and adopts it. */
  probe(): Promise<void> {
    return this.connection.probe();
  }

  /** Whether the server answers and what it says about the model (undefined when not connected). */
  report(): Promise<ServerReport | undefined> {
    return this.connection.report();
  }

  // ---- start / stop -------------------------------------------------------------------------------------------

  /**
   * Starts the managed server (or joins ours when it already runs). Resolves with its handle; undefined when the
   * state refused a start or it was cancelled (the container is removed then). Throws what made it fail.
   */
  async start(options: { preflight?: boolean } = {}): Promise<ServerHandle | undefined> {
    const settings = this.deps.settings();
    if (settings.mode !== 'managed') return undefined;
    if (!settings.server.weightsPath) {
      throw new ServerError({ code: 'weights-missing', message: 'No weights path is set.', fix: 'Set the path of the ChatGLM3-6B checkpoint directory.' });
    }
    if (!this.state.dispatch({ type: 'startRequested' })) return undefined;
    let container: ContainerControl | undefined;
    const handle = await this.cancellable('start', async (report, signal) => {
      report.step('preparing-repository');
      await this.install(settings);
      this.connection.warnIfExposed(settings.server.bindAddress, 'will be');
      container = this.deps.createContainer(resolveSettings(settings.server));
      this.connection.progressDetail = (text) => report.detail(text);
      const started = await container.start({
        signal,
        ...(options.preflight === false ? { preflight: false } : {}),
        onLog: (line) => this.connection.onContainerLog(line),
        onProgress: (step) => report.step(step),
      });
      this.connection.adopt(container, started, false);
      return started;
    }, {
      cancelled: async () => {
        if (this.connection.stopping) return; // a stop cancelled the start and removes the container itself
        this.log.info('Start cancelled; removing the container.');
        this.state.dispatch({ type: 'stopRequested' });
        await container?.stop().catch((err: unknown) => this.log.error('Removing the container failed', err));
        void this.connection.release();
        this.state.dispatch({ type: 'serverStopped' });
      },
      failed: (e) => {
        void this.connection.release();
        this.state.dispatch({ type: 'startFailed', error: failure(e) });
      },
    });
    if (!handle) return undefined;
    this.state.dispatch({ type: 'serverUp' });
    this.log.info('The server is live.');
    void this.offerLoadAfterStart();
    return handle;
  }

  /** Stops and removes our container (also one left behind exited). Cancels a start in progress. */
  async stop(): Promise<void> {
    const settings = this.deps.settings();
    if (settings.mode !== 'managed') return;
    this.operation?.abort();
    if (!this.state.dispatch({ type: 'stopRequested' }) && this.state.current.server !== 'stopped') return;
    const container = this.connection.container ?? this.deps.createContainer(settings.server);
    this.connection.stopping = true;
    try {
      await this.deps.ui.progress('stop', async (report, signal) => {
        report.step('stopping-container');
        // Close our pooled keep-alive connections first: on SIGTERM Triton waits (up to --exit-timeout-secs, 30 s)
        // for every open HTTP connection, idle ones included, so a kept-alive pool would hold the stop for 30 s.
        await this.connection.release();
        await container.stop(signal);
      }, new AbortController().signal);
      this.log.info('The server was stopped and its container removed.');
    } finally {
      this.connection.stopping = false;
      void this.connection.release();
      this.state.dispatch({ type: 'serverStopped' });
      if (container !== this.connection.container) container.dispose();
    }
  }

  private async offerLoadAfterStart(): Promise<void> {
    if (!(await this.deps.ui.offerLoad())) return;
    await this.load().catch((e: unknown) => this.deps.ui.showError('load', e));
  }

  // ---- load / unload ------------------------------------------------------------------------------------------

  /**
   * Loads the model; on a READY model this is the reload. Resolves true when it is ready, false when the state
   * refused the load or it was cancelled (the model is unloaded then). Throws what made it fail.
   */
  async load(): Promise<boolean> {
    const client = this.connection.client;
    if (!client) return false;
    const wasReady = this.state.current.model === 'ready';
    if (!this.state.dispatch({ type: 'loadRequested' })) return false;
    const loaded = await this.cancellable('load', async (report, signal) => {
      const settings = this.deps.settings();
      if (settings.mode === 'managed') {
        report.step('writing-config');
        const changed = await this.install(settings);
        if (wasReady && changed.length > 0) {
          // A changed model would be loaded next to the old copy before the swap (twice the GPU memory):
          // unload first and wait until it is gone.
          report.step('unloading-old');
          await this.unloadAndWait(client, signal);
        }
      }
      report.step('loading-weights');
      this.connection.progressDetail = (text) => report.detail(text);
      await client.loadModel(MODEL_NAME, {
        signal,
        progressIntervalMs: this.options.loadProgressIntervalMs,
        onProgress: (progress) => report.loadProgress(progress),
        ...(this.options.loadTimeoutMs !== undefined ? { timeoutMs: this.options.loadTimeoutMs } : {}),
      });
      return true;
    }, {
      cancelled: async () => {
        // Cancelling a load = stop waiting and unload what the server may still be loading.
        this.log.info('Load cancelled; unloading.');
        await client.unloadModel(MODEL_NAME).catch((err: unknown) => this.log.error('Unload after cancel failed', err));
        this.state.dispatch({ type: 'modelUnloaded' });
      },
      failed: (e) => this.state.dispatch({ type: 'loadFailed', error: failure(e) }),
    });
    if (!loaded) return false;
    this.state.dispatch({ type: 'modelReady' });
    this.log.info('ChatGLM3 is ready.');
    return true;
  }

  /** Unloads the model and waits until its memory is free; while it loads, this cancels the load instead. */
  async unload(): Promise<void> {
    const client = this.connection.client;
    if (!client) return;
    if (this.state.current.model === 'loading') {
      this.operation?.abort(); // the load's own cancel path unloads
      return;
    }
    if (!this.state.dispatch({ type: 'unloadRequested' })) return;
    try {
      await this.deps.ui.progress('unload', async (report, signal) => {
        report.step('waiting-for-requests');
        await this.unloadAndWait(client, signal);
      }, new AbortController().signal);
      this.state.dispatch({ type: 'modelUnloaded' });
    } catch (e) {
      await this.connection.probe();
      throw e;
    }
  }

  private async unloadAndWait(client: C, signal: AbortSignal): Promise<void> {
    await client.unloadModel(MODEL_NAME, { signal });
    // Unload returns at once; GPU memory is free only when the model reaches UNAVAILABLE.
    await client.waitForState(MODEL_NAME, 'UNAVAILABLE', { signal, timeoutMs: this.options.unloadTimeoutMs, intervalMs: STATE_POLL_MS });
  }

  // ---- image --------------------------------------------------------------------------------------------------

  /** `docker build` of the serving image: needs only the docker binary and the image name. */
  async buildImage(contextDir: string, onLine: (line: string) => void, signal: AbortSignal): Promise<void> {
    const settings = this.deps.settings();
    const container = this.deps.createContainer(settings.server);
    try {
      await container.buildImage(contextDir, onLine, signal);
    } finally {
      container.dispose();
    }
    this.log.info(`Built the image ${settings.server.image}.`);
  }

  // ---- plumbing -----------------------------------------------------------------------------------------------

  private async install(settings: SessionSettings): Promise<string[]> {
    const result = await this.deps.installRepository({ source: settings.repository.source, destination: settings.repository.destination, settings: settings.model });
    if (result.changed.length > 0) this.log.info(`Model repository updated: ${result.changed.join(', ')}`);
    return result.changed;
  }

  /**
   * Runs a start or a load with its progress as the operation that a stop, an unload or a crash cancels (a newer
   * one cancels it too). Resolves undefined when it was cancelled; a failure is recorded, then thrown.
   */
  private async cancellable<T>(
    operation: 'start' | 'load',
    task: (report: ProgressReport, signal: AbortSignal) => Promise<T>,
    outcome: { cancelled(): Promise<void>; failed(error: unknown): void },
  ): Promise<T | undefined> {
    this.operation?.abort();
    const op = new AbortController();
    this.operation = op;
    try {
      return await this.deps.ui.progress(operation, task, op.signal);
    } catch (e) {
      if (op.signal.aborted || isCancellation(e)) {
        await outcome.cancelled();
        return undefined;
      }
      outcome.failed(e);
      throw e;
    } finally {
      if (this.operation === op) this.operation = undefined;
      this.connection.progressDetail = undefined;
    }
  }

  /** The running container keeps running: a window reload (or the next CLI command) attaches to it again. */
  async dispose(): Promise<void> {
    this.operation?.abort();
    await this.connection.dispose();
  }
}
