// The first run: VS Code's own welcome page takes the editor, and a yellow "setup needed" in the status bar is easy to
// miss. So the first activation of an install (a profile) that finds the setup needed reveals the ChatGLM view,
// where the setup checklist says what to do. Only once: the flag is kept whatever the first check found, so a later
// "setup needed" (Docker stopped one morning) never takes the side bar away from what the user had there.
import type { LifecycleState } from './lifecycle';

/** The global-state key that records that the first activation's check has been seen. */
export const FIRST_RUN_KEY = 'tritonChatglm.firstRunDone';

export type FirstRunStep = 'revealChat' | 'nothing';

/** What the end of an activation's first setup check does, given whether a first run was already recorded. */
export function firstRunStep(state: LifecycleState, alreadyDone: boolean): FirstRunStep {
  if (alreadyDone) return 'nothing';
  return state.mode === 'managed' && state.server === 'setup' ? 'revealChat' : 'nothing';
}
