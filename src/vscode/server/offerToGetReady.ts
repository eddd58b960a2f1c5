// What Explain Selection and Edit Selection say when the model cannot answer yet: the one step that gets it ready.
import * as vscode from 'vscode';
import { modelDisplayName } from '../../core/models/choice';
import type { LifecycleState } from '../../core/state/lifecycle';
import { COMMANDS } from '../commandIds';

/** `modelName`: Triton's name of the model that would answer (the server session's). */
export async function offerToGetReady(state: LifecycleState, modelName: string): Promise<void> {
  const start = vscode.l10n.t('Start Server');
  const load = vscode.l10n.t('Load Model');
  const buttons = state.server === 'running' ? [load] : state.mode === 'managed' ? [start] : [];
  const picked = await vscode.window.showWarningMessage(vscode.l10n.t('{0} is not ready: start the server and load the model first.', modelDisplayName(modelName)), ...buttons);
  if (picked === start) await vscode.commands.executeCommand(COMMANDS.startServer);
  if (picked === load) await vscode.commands.executeCommand(COMMANDS.loadModel);
}
