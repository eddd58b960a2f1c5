// Whether Unload Model, Stop Server or Restart Server asks first: each throws away a loaded model (~13 GB on the GPU)
// that takes minutes to load again, so while the model is loaded the user confirms, told how long the last load
// took, unless they chose "Don't ask again" (the setting tritonChatglm.askBeforeUnload). Nothing is asked when no
// model would be lost (not loaded, still loading: Unload then cancels the load, which is what the user wants).
import type { LifecycleState } from './lifecycle';

export type DestructiveAction = 'unload' | 'stop' | 'restart';

export type ConfirmationDecision =
  | { ask: false }
  /** `lastLoadMs`: how long the last load took (undefined when none was measured yet). */
  | { ask: true; action: DestructiveAction; lastLoadMs: number | undefined };

export function confirmationFor(
  action: DestructiveAction,
  state: Pick<LifecycleState, 'server' | 'model'>,
  options: { askSetting: boolean; lastLoadMs: number | undefined },
): ConfirmationDecision {
  if (!options.askSetting) return { ask: false };
  if (state.server !== 'running' || state.model !== 'ready') return { ask: false };
  const lastLoadMs = options.lastLoadMs !== undefined && Number.isFinite(options.lastLoadMs) && options.lastLoadMs > 0 ? options.lastLoadMs : undefined;
  return { ask: true, action, lastLoadMs };
}

/** A duration as people say it: whole seconds, split into hours, minutes and seconds ("2 min 10 s"). */
export function durationParts(ms: number): { hours: number; minutes: number; seconds: number } {
  const total = Math.max(0, Math.round(ms / 1000));
  return { hours: Math.floor(total / 3600), minutes: Math.floor((total % 3600) / 60), seconds: total % 60 };
}

/**
 * Measures loads from the lifecycle's transitions: from the moment the model is seen loading to the moment it is
 * ready. A load that fails, is cancelled or is interrupted (server gone) measures nothing.
 */
export class LoadClock {
  private since: number | undefined;

  /** Feeds one state; returns the load's duration in ms when this state ends a load. */
  observe(state: Pick<LifecycleState, 'server' | 'model'>, nowMs: number): number | undefined {
    if (state.server === 'running' && state.model === 'loading') {
      this.since ??= nowMs;
      return undefined;
    }
    const since = this.since;
    this.since = undefined;
    if (since === undefined || state.server !== 'running' || state.model !== 'ready') return undefined;
    return nowMs - since;
  }
}
