// Which model answers completions and whether it can fill in the middle: the served model (the server session's
// name: the running container's model, else the chosen `tritonChatglm.model`), looked up in the catalog.
import { MODEL_CATALOG, type CatalogModel } from '../models/catalog';
import { loadedModelEntry, modelTitle } from '../models/choice';

export interface CompletionModel {
  /** The repository entry requests go to. */
  tritonName: string;
  /** How the model is named to people. */
  title: string;
  /** Whether the catalog says it can fill in the middle (a model outside the catalog cannot). */
  fillInMiddle: boolean;
}

/** The completion model for Triton's name of the served model. */
export function completionModel(servedName: string): CompletionModel {
  const entry = loadedModelEntry([servedName]);
  return { tritonName: servedName, title: entry?.displayName ?? modelTitle(servedName), fillInMiddle: entry?.fillInMiddle ?? false };
}

/** The catalog's models with infilling: what the toggle offers to switch to. */
export function infillingModels(): CatalogModel[] {
  return MODEL_CATALOG.models.filter((m) => m.fillInMiddle);
}
