// The server + model lifecycle as a pure state machine. The VS Code layer (status bar, context keys, quick pick,
// chat panel) only renders this state; every change goes through `transition`, so impossible combinations
// (a model "ready" on a stopped server, a load while the server is down) cannot be represented.
// `setup` is "setup needed": a prerequisite of a managed start is missing (no Docker, no weights, no image...).
// Nothing failed, so it is never shown as an error; the setup checklist says what to do.

export type ServerState = 'stopped' | 'setup' | 'starting' | 'running' | 'stopping' | 'error';
export type ModelState = 'unloaded' | 'loading' | 'ready' | 'unloading' | 'failed';
export type ServerMode = 'managed' | 'external';

export const SERVER_STATES: readonly ServerState[] = ['stopped', 'setup', 'starting', 'running', 'stopping', 'error'];
export const MODEL_STATES: readonly ModelState[] = ['unloaded', 'loading', 'ready', 'unloading', 'failed'];

/** A failure kept with the state so the UI can show it again (status bar tooltip, chat panel banner). */
export interface LifecycleFailure {
  /** Stable code of a core error (ServerErrorCode / TritonErrorCode). */
  code: string;
  /** English message of the core error (the VS Code layer localizes by code). */
  message: string;
}

/** TritonErrorCode of "the model failed: ... reload it" (a device fault stopped the model on the server). */
export const MODEL_FAILED_CODE = 'model-failed';

export interface LifecycleState {
  readonly mode: ServerMode;
  readonly server: ServerState;
  readonly model: ModelState;
  readonly serverError?: LifecycleFailure;
  readonly modelError?: LifecycleFailure;
}

/** What the server reported when it was probed (attach after a reload, health polling). */
export type ModelObservation = 'ready' | 'loading' | 'unloading' | 'unloaded' | 'failed';

export type LifecycleEvent =
  | { type: 'startRequested' }
  | { type: 'serverUp' }
  | { type: 'startFailed'; error: LifecycleFailure }
  /** The setup checks (or a start) found a missing prerequisite; `error` is the first of them. */
  | { type: 'setupNeeded'; error: LifecycleFailure }
  /** The setup checks passed: nothing is missing any more. */
  | { type: 'setupComplete' }
  | { type: 'stopRequested' }
  | { type: 'serverStopped' }
  /** The server went away on its own (container exited, connection refused while it should be up). */
  | { type: 'serverLost'; error: LifecycleFailure }
  | { type: 'loadRequested' }
  | { type: 'modelReady' }
  | { type: 'loadFailed'; error: LifecycleFailure }
  | { type: 'unloadRequested' }
  | { type: 'modelUnloaded' }
  /** A probe of the real server: the truth wins over what we believed (except while we are mid-operation). */
  | { type: 'observed'; live: boolean; model: ModelObservation; modelError?: LifecycleFailure }
  | { type: 'modeChanged'; mode: ServerMode };

export interface TransitionResult {
  state: LifecycleState;
  /** False when the event is not valid in the current state; `state` is then unchanged. */
  accepted: boolean;
}

export function initialState(mode: ServerMode): LifecycleState {
  return { mode, server: 'stopped', model: 'unloaded' };
}

const reject = (state: LifecycleState): TransitionResult => ({ state, accepted: false });
/** No server of ours runs and none is on its way: a start may begin. */
const isDown = (server: ServerState): boolean => server === 'stopped' || server === 'setup' || server === 'error';
const accept = (state: LifecycleState): TransitionResult => ({ state, accepted: true });

/** Drops the error fields that no longer apply (an error belongs to the state it explains). */
function make(
  base: LifecycleState,
  server: ServerState,
  model: ModelState,
  errors: { serverError?: LifecycleFailure; modelError?: LifecycleFailure } = {},
): LifecycleState {
  const next: { -readonly [K in keyof LifecycleState]: LifecycleState[K] } = { mode: base.mode, server, model };
  if ((server === 'error' || server === 'setup') && errors.serverError) next.serverError = errors.serverError;
  if (model === 'failed' && errors.modelError) next.modelError = errors.modelError;
  return next;
}

export function transition(state: LifecycleState, event: LifecycleEvent): TransitionResult {
  const { server, model } = state;
  switch (event.type) {
    case 'modeChanged':
      // Another mode means another server: forget everything we knew about the old one.
      return accept(initialState(event.mode));
    case 'startRequested':
      if (state.mode !== 'managed' || !isDown(server)) return reject(state);
      return accept(make(state, 'starting', 'unloaded'));
    case 'serverUp':
      if (server !== 'starting') return reject(state);
      return accept(make(state, 'running', 'unloaded'));
    case 'startFailed':
      if (server !== 'starting') return reject(state);
      return accept(make(state, 'error', 'unloaded', { serverError: event.error }));
    case 'setupNeeded':
      if (state.mode !== 'managed' || (server !== 'starting' && !isDown(server))) return reject(state);
      if (server === 'setup' && state.serverError?.code === event.error.code && state.serverError.message === event.error.message) return reject(state);
      return accept(make(state, 'setup', 'unloaded', { serverError: event.error }));
    case 'setupComplete':
      if (server !== 'setup') return reject(state);
      return accept(make(state, 'stopped', 'unloaded'));
    case 'stopRequested':
      if (state.mode !== 'managed' || server === 'stopped' || server === 'setup' || server === 'stopping') return reject(state);
      return accept(make(state, 'stopping', model === 'ready' || model === 'loading' ? 'unloading' : 'unloaded'));
    case 'serverStopped':
      if (server === 'stopped') return reject(state);
      return accept(make(state, 'stopped', 'unloaded'));
    case 'serverLost':
      if (server === 'stopped' || server === 'setup' || server === 'stopping') return reject(state);
      return accept(make(state, 'error', 'unloaded', { serverError: event.error }));
    case 'loadRequested':
      if (server !== 'running' || model === 'loading' || model === 'unloading') return reject(state);
      return accept(make(state, 'running', 'loading'));
    case 'modelReady':
      if (server !== 'running' || model !== 'loading') return reject(state);
      return accept(make(state, 'running', 'ready'));
    case 'loadFailed':
      if (server !== 'running' || model !== 'loading') return reject(state);
      return accept(make(state, 'running', 'failed', { modelError: event.error }));
    case 'unloadRequested':
      if (server !== 'running' || model === 'unloaded' || model === 'unloading') return reject(state);
      return accept(make(state, 'running', 'unloading'));
    case 'modelUnloaded':
      if (server !== 'running' || (model !== 'unloading' && model !== 'loading')) return reject(state);
      return accept(make(state, 'running', 'unloaded'));
    case 'observed':
      return observe(state, event);
  }
}

function observe(state: LifecycleState, event: Extract<LifecycleEvent, { type: 'observed' }>): TransitionResult {
  const { server } = state;
  if (!event.live) {
    // Not answering while starting is normal (the container is still booting); while stopping it is the goal.
    if (server === 'starting' || server === 'stopping') return reject(state);
    if (isDown(server)) return reject(state);
    // In external mode an unreachable server is simply "stopped" (we do not own it); in managed mode the
    // caller reports a crash with `serverLost` and its evidence, so a failed probe alone means stopped too.
    return accept(make(state, 'stopped', 'unloaded'));
  }
  // A live server: keep our own in-flight operations (we will get their outcome), otherwise adopt the truth.
  if (server === 'starting' || server === 'stopping') return reject(state);
  // A probe racing our own load/unload may still see the old state; only the operation's outcome may move it.
  if (state.model === 'loading' && event.model !== 'ready' && event.model !== 'failed') return reject(state);
  if (state.model === 'unloading' && event.model !== 'unloaded') return reject(state);
  // A model stopped by a device fault still reports READY on Triton 2.51 (it cannot say otherwise there): only a
  // load (loadRequested) or an unload heals it, never a READY probe.
  if (state.model === 'failed' && state.modelError?.code === MODEL_FAILED_CODE && event.model === 'ready') return reject(state);
  const model: ModelState = event.model;
  const next = make(state, 'running', model, { modelError: event.modelError ?? state.modelError });
  if (next.server === state.server && next.model === state.model) return reject(state);
  return accept(next);
}

/** Where the session reads and changes the lifecycle state (the VS Code store, or a plain machine in the CLI). */
export interface LifecycleStatePort {
  readonly current: LifecycleState;
  /** Applies an event; returns false (and changes nothing) when it is not valid now. */
  dispatch(event: LifecycleEvent): boolean;
  /** Calls `listener` after every accepted event, until the returned handle is disposed. */
  onDidChange(listener: (state: LifecycleState) => void): { dispose(): void };
}

/** The state and `transition`, nothing else: what the CLI and the tests hold. */
export class LifecycleMachine implements LifecycleStatePort {
  private state: LifecycleState;
  private readonly listeners = new Set<(state: LifecycleState) => void>();

  constructor(mode: ServerMode) {
    this.state = initialState(mode);
  }

  get current(): LifecycleState {
    return this.state;
  }

  dispatch(event: LifecycleEvent): boolean {
    const { state, accepted } = transition(this.state, event);
    if (!accepted) return false;
    this.state = state;
    for (const listener of [...this.listeners]) listener(state);
    return true;
  }

  onDidChange(listener: (state: LifecycleState) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => { this.listeners.delete(listener); } };
  }
}

/** True when chat and explain requests can be sent. */
export function canInfer(state: LifecycleState): boolean {
  return state.server === 'running' && state.model === 'ready';
}
