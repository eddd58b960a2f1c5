// What Explain Selection and Edit Selection say when the model cannot answer yet: the one step that gets it ready.
import * as vscode from 'vscode';
import type { LifecycleState } from '../../core/state/lifecycle';
import { COMMANDS } from '../commandIds';

export async function offerToGetReady(state: LifecycleState): Promise<void> {
  const start = vscode.l10n.t('Start Server');
  const load = vscode.l10n.t('Load Model');
  const buttons = state.server === 'running' ? [load] : state.mode === 'managed' ? [start] : [];
  const picked = await vscode.window.showWarningMessage(vscode.l10n.t('ChatGLM3 is not ready: start the server and load the model first.'), ...buttons);
  if (picked === start) await vscode.commands.executeCommand(COMMANDS.startServer);
  if (picked === load) await vscode.commands.executeCommand(COMMANDS.loadModel);
}
