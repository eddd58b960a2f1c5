// The order of the status bar's action menu: what the user most likely wants next first (the chat, Server Status,
// the logs), then what moves the lifecycle forward (Start ChatGLM, Load), then settings and guides, and the actions
// that throw work away (Unload, Restart, Stop) last, after a separator, so that clicking the item and pressing
// Enter never stops the server.
import { availableActions, type ActionContext, type LifecycleAction } from './actions';
import type { LifecycleState } from './lifecycle';

/** The entries that are not lifecycle actions. */
export type MenuCommand = 'openChat' | 'showSetupChecklist' | 'showLogs' | 'chooseWeightsFolder' | 'openWalkthrough' | 'openSettings';

export type MenuEntry =
  | { kind: 'action'; action: LifecycleAction }
  | { kind: 'command'; command: MenuCommand }
  | { kind: 'separator' };

/** Actions that end the server or the loaded model. */
export const DESTRUCTIVE_ACTIONS: readonly LifecycleAction[] = ['unload', 'restart', 'stop'];
/** Actions that move the lifecycle forward, in the order offered. */
const FORWARD: readonly LifecycleAction[] = ['startChatglm', 'start', 'load', 'recheckSetup', 'buildImage'];

export function actionMenu(state: LifecycleState, ctx: ActionContext): MenuEntry[] {
  const available = new Set(availableActions(state, ctx));
  const action = (a: LifecycleAction): MenuEntry[] => (available.has(a) ? [{ kind: 'action', action: a }] : []);
  const command = (c: MenuCommand): MenuEntry => ({ kind: 'command', command: c });
  const managed = state.mode === 'managed';
  const entries: MenuEntry[] = [
    ...(managed && state.server === 'setup' ? [command('showSetupChecklist')] : [command('openChat')]),
    ...action('showStatus'),
    command('showLogs'),
    // Load of a ready model is Reload: it takes the model away for minutes, so it goes with the actions at the end.
    ...FORWARD.filter((a) => a !== 'load' || state.model !== 'ready').flatMap(action),
    ...(managed ? [command('chooseWeightsFolder'), command('openWalkthrough')] : []),
    command('openSettings'),
  ];
  // In "setup needed" the chat shows the checklist; Open Chat is still offered, after what fixes the setup.
  if (managed && state.server === 'setup') entries.push(command('openChat'));
  const destructive = [...(state.model === 'ready' ? action('load') : []), ...DESTRUCTIVE_ACTIONS.flatMap(action)];
  return destructive.length > 0 ? [...entries, { kind: 'separator' }, ...destructive] : entries;
}
