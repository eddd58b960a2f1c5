// The ONE place the editor side reads which model completions go to: `tritonChatglm.model` (a catalog id, from the
// model-choice work) until that setting has its own accessor; then this file switches to it.
import * as vscode from 'vscode';
import { completionModel, infillingModels, type CompletionModel } from '../../core/completion/model';
import type { CatalogModel } from '../../core/models/catalog';
import { SECTION } from '../../core/settings/settingsSchema';

const MODEL_KEY = 'model';

export function chosenCompletionModel(): CompletionModel {
  return completionModel(vscode.workspace.getConfiguration(SECTION).get<string>(MODEL_KEY));
}

/** The model the toggle offers when the chosen one cannot fill in the middle (CodeGeeX4). */
export function infillingAlternative(): CatalogModel | undefined {
  return infillingModels()[0];
}

/** Sets the model setting (the server side reloads the model when it changes). */
export async function chooseModel(id: string): Promise<void> {
  await vscode.workspace.getConfiguration(SECTION).update(MODEL_KEY, id, vscode.ConfigurationTarget.Global);
}

/** Whether a settings change may have changed the chosen model. */
export function affectsModel(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(`${SECTION}.${MODEL_KEY}`);
}
