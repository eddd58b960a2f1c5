// Which user actions are valid in which lifecycle state. One table feeds the status bar quick pick, the chat
// panel's offers and (through context keys) the `enablement` clauses in package.json; a unit test evaluates
// those clauses against this table for every state so the two cannot drift apart.
import type { LifecycleState, ModelState, ServerState } from './lifecycle';

export type LifecycleAction =
  | 'startChatglm'
  | 'recheckSetup'
  | 'start'
  | 'stop'
  | 'restart'
  | 'load'
  | 'unload'
  | 'buildImage'
  | 'showStatus'
  | 'explain';

/** Extra facts that are not part of the lifecycle but gate actions. */
export interface ActionContext {
  /** A serving-image build is running. */
  building: boolean;
}

/** No server runs and none is on its way (setup needed, stopped, or failed). */
const serverDown = (s: ServerState) => s === 'stopped' || s === 'setup' || s === 'error';
const modelLoadable = (m: ModelState) => m === 'unloaded' || m === 'failed' || m === 'ready';

/** Whether `action` may run now. `load` while ready means reload (unload, wait, load). */
export function isActionAvailable(action: LifecycleAction, state: LifecycleState, ctx: ActionContext): boolean {
  const managed = state.mode === 'managed';
  const { server, model } = state;
  switch (action) {
    case 'startChatglm':
      // Start + load, or only the load when the server already runs. In "setup needed" it runs the checks again
      // and shows what is still missing.
      return (managed && serverDown(server)) || (server === 'running' && (model === 'unloaded' || model === 'failed'));
    case 'recheckSetup':
      return managed && serverDown(server);
    case 'start':
      return managed && serverDown(server);
    case 'stop':
      return managed && (server === 'starting' || server === 'running' || server === 'error');
    case 'restart':
      return managed && (server === 'running' || server === 'error');
    case 'load':
      return server === 'running' && modelLoadable(model);
    case 'unload':
      // Unloading a model that is still loading is how a load is cancelled.
      return server === 'running' && (model === 'ready' || model === 'loading' || model === 'failed');
    case 'buildImage':
      return managed && !ctx.building;
    case 'showStatus':
      return server === 'running';
    case 'explain':
      return server === 'running' && model === 'ready';
  }
}

export const LIFECYCLE_ACTIONS: readonly LifecycleAction[] = [
  'startChatglm', 'recheckSetup', 'start', 'stop', 'restart', 'load', 'unload', 'buildImage', 'showStatus', 'explain',
];

export function availableActions(state: LifecycleState, ctx: ActionContext): LifecycleAction[] {
  return LIFECYCLE_ACTIONS.filter((a) => isActionAvailable(a, state, ctx));
}

/** Context keys the extension sets (`setContext`) so menus and enablement follow the state. */
export const CONTEXT_KEYS = {
  serverState: 'tritonChatglm.serverState',
  modelState: 'tritonChatglm.modelState',
  serverMode: 'tritonChatglm.serverMode',
  building: 'tritonChatglm.building',
} as const;

export function contextKeyValues(state: LifecycleState, ctx: ActionContext): Record<string, string | boolean> {
  return {
    [CONTEXT_KEYS.serverState]: state.server,
    [CONTEXT_KEYS.modelState]: state.model,
    [CONTEXT_KEYS.serverMode]: state.mode,
    [CONTEXT_KEYS.building]: ctx.building,
  };
}

/**
 * `enablement` clauses for package.json, written with the context keys above. Only `==`, `!=`, `=~`, `&&`, `||`
 * and `!` are used (no parentheses) so a small evaluator in the tests can check them against the table.
 * `explain` has no enablement: the command explains why it cannot run and offers Start / Load instead.
 */
export const ENABLEMENT: Readonly<Partial<Record<LifecycleAction, string>>> = {
  startChatglm: "tritonChatglm.serverMode == managed && tritonChatglm.serverState =~ /^(stopped|setup|error)$/ || tritonChatglm.serverState == running && tritonChatglm.modelState =~ /^(unloaded|failed)$/",
  recheckSetup: "tritonChatglm.serverMode == managed && tritonChatglm.serverState =~ /^(stopped|setup|error)$/",
  start: "tritonChatglm.serverMode == managed && tritonChatglm.serverState =~ /^(stopped|setup|error)$/",
  stop: "tritonChatglm.serverMode == managed && tritonChatglm.serverState =~ /^(starting|running|error)$/",
  restart: "tritonChatglm.serverMode == managed && tritonChatglm.serverState =~ /^(running|error)$/",
  load: "tritonChatglm.serverState == running && tritonChatglm.modelState =~ /^(unloaded|failed|ready)$/",
  unload: "tritonChatglm.serverState == running && tritonChatglm.modelState =~ /^(ready|loading|failed)$/",
  buildImage: "tritonChatglm.serverMode == managed && !tritonChatglm.building",
  showStatus: "tritonChatglm.serverState == running",
};
