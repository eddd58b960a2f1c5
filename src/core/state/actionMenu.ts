// The status bar's action menu, built per state: only what makes sense now, in labelled groups. What the user most
// likely wants next comes first (the chat or the setup checklist, Start ChatGLM or Load, Server Status); the setup
// actions (Re-check, weights, image, walkthrough) only while no server runs, grouped; the logs and settings after
// them; the actions that throw work away (Reload and Unload the model, Restart and Stop the server) last, each
// under the label of what it ends, so that clicking the item and pressing Enter never stops the server.
import { availableActions, type ActionContext, type LifecycleAction } from './actions';
import type { LifecycleState } from './lifecycle';

/** The entries that are not lifecycle actions. */
export type MenuCommand = 'openChat' | 'showSetupChecklist' | 'showLogs' | 'chooseWeightsFolder' | 'openWalkthrough' | 'openSettings';

export type MenuEntry =
  | { kind: 'action'; action: LifecycleAction }
  | { kind: 'command'; command: MenuCommand };

/**
 * A group of the menu, drawn after a separator labelled with its name ('next' is the first group and has none):
 * 'setup' fixes or changes the setup, 'help' reads logs and settings, 'model' and 'server' end the loaded model or
 * the server.
 */
export type MenuGroupName = 'next' | 'setup' | 'help' | 'model' | 'server';

export interface MenuGroup {
  group: MenuGroupName;
  entries: MenuEntry[];
}

/** Actions that end the server or the loaded model. */
export const DESTRUCTIVE_ACTIONS: readonly LifecycleAction[] = ['unload', 'restart', 'stop'];

export function actionMenu(state: LifecycleState, ctx: ActionContext): MenuGroup[] {
  const available = new Set(availableActions(state, ctx));
  const action = (a: LifecycleAction): MenuEntry[] => (available.has(a) ? [{ kind: 'action', action: a }] : []);
  const command = (c: MenuCommand): MenuEntry => ({ kind: 'command', command: c });
  const managed = state.mode === 'managed';
  const setupNeeded = managed && state.server === 'setup';
  const serverDown = state.server === 'stopped' || state.server === 'setup' || state.server === 'error';
  const running = state.server === 'running';
  const modelReady = state.model === 'ready';

  const next: MenuEntry[] = [
    command(setupNeeded ? 'showSetupChecklist' : 'openChat'),
    // With the server up, Start ChatGLM would only load the model: Load Model says so.
    ...(running ? [] : action('startChatglm')),
    // Start Server (without the model) is a choice of a set-up machine; in "setup needed" Start ChatGLM is the one way.
    ...(setupNeeded ? [] : action('start')),
    // Load of a ready model is Reload: it takes the model away for minutes, so it goes with the model's group.
    ...(modelReady ? [] : action('load')),
    ...action('showStatus'),
  ];
  // What changes the setup, offered while no server runs (a running one would not see the change until restarted).
  const setup: MenuEntry[] = managed && serverDown ? [
    ...(setupNeeded ? action('recheckSetup') : []),
    command('chooseWeightsFolder'),
    ...action('buildImage'),
    ...(setupNeeded ? [command('openWalkthrough')] : []),
  ] : [];
  const help: MenuEntry[] = [command('showLogs'), command('openSettings')];
  const model: MenuEntry[] = [...(modelReady ? action('load') : []), ...action('unload')];
  const server: MenuEntry[] = [...action('restart'), ...action('stop')];
  const groups: MenuGroup[] = [
    { group: 'next', entries: next },
    { group: 'setup', entries: setup },
    { group: 'help', entries: help },
    { group: 'model', entries: model },
    { group: 'server', entries: server },
  ];
  return groups.filter((g) => g.entries.length > 0);
}
