// The one server/model policy, used by the extension and the CLI alike:
//   setup  every preflight check at once; a missing prerequisite is "setup needed", never a server error
//   start  install the model repository → check the setup → run the container → attach → watch for its exit
//   load   reinstall → unload first when the files changed (no second copy in GPU memory) → load → wait until ready
//   Start ChatGLM = start (when no server runs) + load; activate = attach, check the setup, auto-start if asked
//   reload = load of a READY model; unload; stop (a restart is stop + start); attach, probe, report (the status)
// The connection (connection.ts) holds the container, the client and the exit watch and health polling; the setup
// checks and their last report are in setupChecks.ts; the start or load in progress in currentOperation.ts. Every
// state the policy reaches goes through the lifecycle state machine; the front ends show it and word it.
import { modelEntryName } from '../models/choice';
import { abortError } from '../util/abort';
import type { PreflightReport, ServerHandle } from '../server';
import { canInfer, MODEL_FAILED_CODE } from '../state/lifecycle';
import { SessionConnection, type AttachResult, type ServerReport } from './connection';
import { pendingModelSwitch, type ModelSwitch } from './modelSwitch';
import { CurrentOperation } from './currentOperation';
import { failure } from './observe';
import type { ContainerControl, SessionClient, SessionDeps, SessionOptions } from './ports';
import type { SessionSettings } from './sessionSettings';
import { withModelWeights } from './sessionWeights';
import { isSetupProblem, withStartFailure } from './setup';
import { gpuPreflight, serverDown, SetupChecks, type SetupSnapshot } from './setupChecks';

/** Poll interval of the repository index while waiting for an unload. */
const STATE_POLL_MS = 250;

export class ServerSession<C extends SessionClient> {
  private readonly connection: SessionConnection<C>;
  /** The start or load that a stop, an unload or a crash must cancel. */
  private readonly operation: CurrentOperation;
  private readonly checks: SetupChecks<C>;

  constructor(private readonly deps: SessionDeps<C>, private readonly options: SessionOptions) {
    this.checks = new SetupChecks(deps);
    this.operation = new CurrentOperation(deps.ui, () => { this.connection.progressDetail = undefined; });
    this.connection = new SessionConnection(deps, options, () => {
      this.operation.abort();
      if (options.recheckSetup) void this.checkSetup();
    }, () => this.modelName);
  }

  /**
   * Triton's name of the model this session serves and addresses (load, unload, state, stats, infer): the one
   * the running container was started for (its label: its weights are the ones mounted, so a switch needs a
   * restart), else the chosen one (the settings').
   */
  get modelName(): string {
    const started = this.connection.serverHandle?.model;
    return started ? modelEntryName({ id: started }) : this.deps.settings().modelName;
  }

  /** The switch the running container needs: another model chosen since it started (modelSwitch.ts). */
  get pendingSwitch(): ModelSwitch | undefined {
    return pendingModelSwitch(this.connection.serverHandle?.model, this.deps.settings().server.model);
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

  /**
   * The extension's start-up: find our running server; when there is none, check the setup, and start ChatGLM
   * when the setup is complete and `autoStart` asks for it. Resolves when that is done (the start included).
   */
  async activate(): Promise<void> {
    await this.attach().catch((e: unknown) => this.log.warn(`Could not look for a running container: ${e instanceof Error ? e.message : String(e)}`));
    const report = await this.checkSetup();
    if (!report?.ok || !this.deps.settings().autoStart || !serverDown(this.state.current.server)) return;
    this.log.info('autoStart: the setup is complete; starting ChatGLM.');
    await this.startChatglm();
  }

  /** Server mode or URL changed: drop the old connection and look again. */
  async reconnect(): Promise<AttachResult> {
    this.operation.abort();
    void this.connection.release();
    this.state.dispatch({ type: 'modeChanged', mode: this.deps.settings().mode });
    return this.connection.attach();
  }

  /** Counts a request while it runs; meanwhile the server's health is polled. */
  track<T>(request: Promise<T>): Promise<T> {
    return this.connection.track(request);
  }

  /**
   * An answer was refused with "the model failed: ... reload it": the model is failed until it is loaded again
   * (a READY probe does not change that; the next load unloads it first).
   */
  reportModelFailure(error: { code: string; message: string }): void {
    this.state.dispatch({ type: 'observed', live: true, model: 'failed', modelError: { code: error.code, message: error.message } });
  }

  /** Asks the server what it is doing and adopts it. */
  probe(): Promise<void> {
    return this.connection.probe();
  }

  /**
   * What a request that found no server really met: our container exited (reported as that exit, with its code
   * and last lines) — or the request's own error when the container runs, is not ours, or docker cannot tell.
   */
  async explainFailure(error: unknown): Promise<unknown> {
    return (await this.connection.containerExit()) ?? error;
  }

  /** Whether the server answers and what it says about the model (undefined when not connected). */
  report(): Promise<ServerReport | undefined> {
    return this.connection.report();
  }

  // ---- setup --------------------------------------------------------------------------------------------------

  /** The last setup report and whether a check runs now. */
  get setup(): SetupSnapshot {
    return this.checks.snapshot;
  }

  /** Runs every setup check at once (see SetupChecks.check). */
  checkSetup(): Promise<PreflightReport | undefined> {
    return this.checks.check();
  }

  // ---- start / stop -------------------------------------------------------------------------------------------

  /**
   * Start ChatGLM, the one action: starts the managed server when none runs (without asking to load), then loads
   * the model. Resolves true when the model is ready; false when it was refused or cancelled. Throws what failed;
   * a missing prerequisite leaves the lifecycle at "setup needed".
   */
  async startChatglm(): Promise<boolean> {
    if (canInfer(this.state.current)) return true;
    if (this.deps.settings().mode === 'managed' && serverDown(this.state.current.server)) {
      if (!(await this.start({ offerLoad: false }))) return false;
    }
    const { server, model } = this.state.current;
    if (server !== 'running' || (model !== 'unloaded' && model !== 'failed')) return canInfer(this.state.current);
    return this.load();
  }

  /**
   * Starts the managed server (or joins ours when it already runs). Resolves with its handle; undefined when the
   * state refused a start or it was cancelled (the container is removed then). Throws what made it fail; a
   * missing prerequisite (every check reported in `setup`) is "setup needed", anything else a server error.
   */
  async start(options: { preflight?: boolean; offerLoad?: boolean } = {}): Promise<ServerHandle | undefined> {
    const configured = this.deps.settings();
    if (configured.mode !== 'managed') return undefined;
    if (!this.state.dispatch({ type: 'startRequested' })) return undefined;
    let container: ContainerControl | undefined;
    const turn = this.checks.nextTurn();
    const handle = await this.operation.run('start', async (report, signal) => {
      report.step('preparing-repository');
      const settings = await this.withWeights(configured);
      if (signal.aborted) throw abortError(); // stopped while the weights were looked for
      await this.install(settings);
      this.connection.warnIfExposed(settings.server.bindAddress, 'will be');
      // Configured settings: the preflight names what is missing (a weights folder not chosen yet); the
      // container layer validates them before `docker run`.
      container = this.deps.createContainer(settings.server);
      this.connection.progressDetail = (text) => report.detail(text);
      const started = await container.start({
        signal,
        preflight: options.preflight === false ? false : gpuPreflight(settings),
        onPreflight: (checked) => this.checks.show(checked, turn, false),
        onLog: (line) => this.connection.onContainerLog(line),
        onProgress: (step) => report.step(step),
        onUlimitsDropped: (why) => this.log.warn(why === 'rootless'
          ? 'Rootless Docker: the container starts without --ulimit memlock/stack (the daemon cannot raise them).'
          : 'Docker refused --ulimit memlock/stack (error setting rlimit): the container was started again without them. Turn off tritonChatglm.raiseUlimits to skip the first try.'),
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
        if (isSetupProblem(e)) {
          this.checks.report = withStartFailure(this.checks.report, e);
          this.state.dispatch({ type: 'setupNeeded', error: failure(e) });
          this.deps.onSetupChanged?.();
        } else {
          this.state.dispatch({ type: 'startFailed', error: failure(e) });
        }
      },
    });
    if (!handle) return undefined;
    this.state.dispatch({ type: 'serverUp' });
    this.log.info('The server is live.');
    if (options.offerLoad !== false) void this.offerLoadAfterStart();
    return handle;
  }

  /** Stops and removes our container (also one left behind exited). Cancels a start in progress. */
  async stop(): Promise<void> {
    const settings = this.deps.settings();
    if (settings.mode !== 'managed') return;
    this.operation.abort();
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
    // The ports are free again and the checklist is shown again: make it current.
    if (this.options.recheckSetup) void this.checkSetup();
  }

  /** Asks once; the question closes itself as soon as it no longer applies (loading, ready, server gone). */
  private async offerLoadAfterStart(): Promise<void> {
    const stale = new AbortController();
    const watch = this.state.onDidChange((s) => { if (s.server !== 'running' || s.model !== 'unloaded') stale.abort(); });
    let accepted: boolean;
    try {
      accepted = await this.deps.ui.offerLoad(stale.signal);
    } finally {
      watch.dispose();
    }
    if (!accepted || stale.signal.aborted) return;
    await this.load().catch((e: unknown) => this.deps.ui.showError('load', e));
  }

  // ---- load / unload ------------------------------------------------------------------------------------------

  /**
   * Loads the model; on a READY model this is the reload. Resolves true when it is ready, false when the state
   * refused the load or it was cancelled (the model is unloaded then). Throws what made it fail. `fresh`: unload
   * first even when nothing changed. Triton 2.51 reloads a READY model in the background and swaps when the new
   * copy is ready, so without this the copy a device fault stopped (still READY there, still holding its GPU
   * memory) would sit next to the new one: twice the memory, which a 16-24 GB card does not have.
   */
  async load(options: { fresh?: boolean } = {}): Promise<boolean> {
    const client = this.connection.client;
    if (!client) return false;
    const wasReady = this.state.current.model === 'ready';
    // A model a device fault stopped is still loaded (and READY) on the server: only unloading it first replaces it.
    const faulted = this.state.current.model === 'failed' && this.state.current.modelError?.code === MODEL_FAILED_CODE;
    if (!this.state.dispatch({ type: 'loadRequested' })) return false;
    const loaded = await this.operation.run('load', async (report, signal) => {
      const settings = await this.withWeights(this.deps.settings());
      if (signal.aborted) throw abortError(); // unloaded while the weights were looked for
      let unloadFirst = faulted || (wasReady && options.fresh === true);
      if (settings.mode === 'managed') {
        report.step('writing-config');
        // Another model chosen since the start: its weights are not mounted in this container.
        const served = this.connection.serverHandle?.model;
        if (served && served !== settings.server.model) {
          throw new Error(`The server was started for ${served} and ${settings.server.model} is chosen now: restart the server to switch models.`);
        }
        const changed = await this.install(settings);
        // A changed model would be loaded next to the old copy before the swap (twice the GPU memory).
        unloadFirst ||= wasReady && changed.length > 0;
      }
      if (unloadFirst) {
        // Unload first and wait until it is gone.
        report.step('unloading-old');
        await this.unloadAndWait(client, signal);
      }
      report.step('loading-weights');
      this.connection.progressDetail = (text) => report.detail(text);
      await client.loadModel(this.modelName, {
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
        await client.unloadModel(this.modelName).catch((err: unknown) => this.log.error('Unload after cancel failed', err));
        this.state.dispatch({ type: 'modelUnloaded' });
      },
      failed: (e) => this.state.dispatch({ type: 'loadFailed', error: failure(e) }),
    });
    if (!loaded) return false;
    this.state.dispatch({ type: 'modelReady' });
    this.log.info(`${this.modelName} is ready.`);
    return true;
  }

  /** Unloads the model and waits until its memory is free; while it loads, this cancels the load instead. */
  async unload(): Promise<void> {
    const client = this.connection.client;
    if (!client) return;
    if (this.state.current.model === 'loading') {
      this.operation.abort(); // the load's own cancel path unloads
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
    const name = this.modelName;
    await client.unloadModel(name, { signal });
    // Unload returns at once; GPU memory is free only when the model reaches UNAVAILABLE.
    await client.waitForState(name, 'UNAVAILABLE', { signal, timeoutMs: this.options.unloadTimeoutMs, intervalMs: STATE_POLL_MS });
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

  /** The settings with the chosen model's weights resolved (the setting, else its Hub cache snapshot). */
  private async withWeights(settings: SessionSettings): Promise<SessionSettings> {
    const resolved = await withModelWeights(settings, this.deps.weightsCaches?.() ?? []);
    if (resolved.server.weightsPath !== settings.server.weightsPath) this.log.info(`Weights of ${resolved.server.model}: ${resolved.server.weightsPath} (the Hugging Face cache; weightsPath holds another model or none).`);
    return resolved;
  }

  private async install(settings: SessionSettings): Promise<string[]> {
    const result = await this.deps.installRepository({ source: settings.repository.source, destination: settings.repository.destination, settings: settings.model });
    if (result.changed.length > 0) this.log.info(`Model repository updated: ${result.changed.join(', ')}`);
    return result.changed;
  }

  /** The running container keeps running: a window reload (or the next CLI command) attaches to it again. */
  async dispose(): Promise<void> {
    this.operation.abort();
    await this.connection.dispose();
  }
}
