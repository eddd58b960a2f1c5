// The small interfaces the server/model policy runs behind: the editor (or the terminal) shows progress, asks and
// reports through SessionUi, writes through SessionLog; the container layer, the Triton client and the timers come
// in as interfaces so the policy is tested with fakes.
import type { InstallOptions, InstallResult } from '../repository';
import type { Disposable, LineStream, PreflightOptions, PreflightReport, ServerHandle, ServerSettings, ServerStatus, StartOptions, StartStep } from '../server';
import type { LifecycleStatePort } from '../state/lifecycle';
import type { LoadProgress, TritonClient, TritonClientOptions } from '../triton';
import type { SessionSettings } from './sessionSettings';

export type { Disposable } from '../server';

/** The operations that show progress. */
export type SessionOperation = 'start' | 'stop' | 'load' | 'unload';

/** Steps of those operations, named once; each front end words them its own way. */
export type SessionStep =
  | StartStep
  | 'preparing-repository'
  | 'writing-config'
  | 'unloading-old'
  | 'loading-weights'
  | 'stopping-container'
  | 'waiting-for-requests';

export interface ProgressReport {
  step(step: SessionStep): void;
  /** The latest evidence, e.g. what the container just logged (glog prefix removed). */
  detail(text: string): void;
  /** The model's row in the repository index, polled while the weights load. */
  loadProgress(progress: LoadProgress): void;
}

export interface SessionUi {
  /**
   * Runs `task` while showing progress for `operation`. The task's signal aborts when `signal` does (Stop cancels a
   * start) or when the person cancels (a cancellable notification, Ctrl+C).
   */
  progress<T>(operation: SessionOperation, task: (report: ProgressReport, signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T>;
  /**
   * The server just started: load the model now? Resolves true when the person accepts. `stale` aborts when the
   * question no longer applies (the model loads or is ready, the server stops): the offer then closes itself.
   */
  offerLoad(stale: AbortSignal): Promise<boolean>;
  /** A failure no caller waits for: the server died on its own, or the load accepted from offerLoad failed. */
  showError(context: 'load' | 'server', error: unknown): void;
}

export interface SessionLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string, error?: unknown): void;
  debug(message: string): void;
  /** One line the container wrote. */
  container(line: string): void;
  /** Never write this value (an admin key, a header value). */
  addSecret(secret: string | undefined): void;
}

export interface Timers {
  every(ms: number, fn: () => void): Disposable;
  after(ms: number, fn: () => void): Disposable;
}

export const realTimers: Timers = {
  every(ms, fn) {
    const timer = setInterval(fn, ms);
    return { dispose: () => clearInterval(timer) };
  },
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    return { dispose: () => clearTimeout(timer) };
  },
};

/** What the policy asks of the container layer (a ContainerManager). */
export interface ContainerControl {
  /** Every setup check at once (see runPreflight). */
  preflight(options?: PreflightOptions): Promise<PreflightReport>;
  status(signal?: AbortSignal): Promise<ServerStatus>;
  start(options: StartOptions): Promise<ServerHandle>;
  stop(signal?: AbortSignal): Promise<void>;
  followLogs(sink: (line: string) => void, options?: { tail?: number }): Disposable;
  watchExit(containerId: string): LineStream;
  buildImage(contextDir: string, onLine: (line: string) => void, signal?: AbortSignal): Promise<void>;
  dispose(): void;
}

/** What the policy asks of the Triton client. */
export type SessionClient = Pick<TritonClient, 'isLive' | 'modelState' | 'isModelReady' | 'loadModel' | 'unloadModel' | 'waitForState' | 'destroy'>;

export interface SessionDeps<C extends SessionClient> {
  state: LifecycleStatePort;
  /** Read at every operation: settings may change while the session lives. */
  settings(): SessionSettings;
  ui: SessionUi;
  log: SessionLog;
  createClient(options: TritonClientOptions): C;
  /** Settings as configured; attach, stop and build use them unvalidated, start validates them first. */
  createContainer(settings: ServerSettings): ContainerControl;
  installRepository(options: InstallOptions): Promise<InstallResult>;
  /**
   * The Hugging Face caches searched for the chosen model's weights when `weightsPath` does not hold that model
   * (sessionWeights.ts); none given: only the setting counts.
   */
  weightsCaches?(): readonly string[];
  timers: Timers;
  /** Told when the client changes (connected, reconnected, gone). */
  onClientChanged?(client: C | undefined): void;
  /** Told when the setup report or its "checking" flag changes (see ServerSession.setup). */
  onSetupChanged?(): void;
}

export interface SessionOptions {
  /**
   * While attached to our container: follow its log, watch for its exit, poll health during requests. The
   * extension does; a one-shot CLI command has nobody to tell later.
   */
  watch: boolean;
  /** How often the load reports the model's state. */
  loadProgressIntervalMs: number;
  /** Limit of the load call; none by default (loading a 6B model takes minutes). */
  loadTimeoutMs?: number;
  /** How long an unload may take to reach UNAVAILABLE. */
  unloadTimeoutMs: number;
  /**
   * Keep the setup checks current without being asked: after the server stops or is lost (the extension does,
   * for its checklist; a one-shot CLI command checks only when it starts).
   */
  recheckSetup?: boolean;
}
