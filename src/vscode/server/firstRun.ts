// The first activation of an install: once its setup check has run, src/core/state/firstRun.ts decides whether the
// ChatGLM view (with the setup checklist) is revealed; the flag is kept in the global state either way.
import type * as vscode from 'vscode';
import { FIRST_RUN_KEY, firstRunStep } from '../../core/state/firstRun';
import type { Log } from '../log';
import type { LifecycleStore } from '../state/lifecycleStore';

export async function afterFirstCheck(
  globalState: vscode.Memento,
  store: LifecycleStore,
  revealChat: () => unknown,
  log: Log,
): Promise<void> {
  const done = globalState.get<boolean>(FIRST_RUN_KEY) === true;
  const step = firstRunStep(store.current, done);
  if (!done) await globalState.update(FIRST_RUN_KEY, true);
  // Logged either way: the end-to-end suite waits for this line before it looks at the side bar.
  log.info(`first run: ${done ? 'recorded before' : 'this is the first activation'}; ${step === 'revealChat' ? 'the setup is needed, revealing the ChatGLM view' : 'nothing to reveal'}`);
  if (step === 'revealChat') await revealChat();
}
