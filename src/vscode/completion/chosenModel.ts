// The editor side's view of the model choice for completions: which catalog model to offer when the served one
// cannot fill in the middle, and writing `tritonChatglm.model` when the user takes the offer.
import { infillingModels } from '../../core/completion/model';
import type { CatalogModel } from '../../core/models/catalog';
import type { SettingsService } from '../config/settingsService';

/** The model the toggle offers when the served one cannot fill in the middle (CodeGeeX4). */
export function infillingAlternative(): CatalogModel | undefined {
  return infillingModels()[0];
}

/** Sets the model setting (the server side restarts the server for it when one runs). */
export async function chooseModel(settings: SettingsService, id: string): Promise<void> {
  await settings.update('model', id);
}

/** Whether a settings change may have changed the chosen model. */
export function affectsModel(keys: readonly string[]): boolean {
  return keys.includes('model');
}
