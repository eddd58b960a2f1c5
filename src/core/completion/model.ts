// Which model answers completions and whether it can fill in the middle: the ONE place that reads it, so the
// model choice (tritonChatglm.model, a catalog id) plugs in here when it lands.
import { catalogModel, DEFAULT_MODEL_ID, MODEL_CATALOG, type CatalogModel } from '../models/catalog';
import { MODEL_NAME } from '../repository';

export interface CompletionModel {
  entry: CatalogModel;
  /** The repository entry requests go to. */
  tritonName: string;
}

/** The configured model's catalog entry (an unknown id falls back to the catalog's default). */
export function completionModel(configuredId: string | undefined): CompletionModel {
  const entry = (configuredId !== undefined ? catalogModel(configuredId) : undefined) ?? catalogModel(DEFAULT_MODEL_ID)!;
  return { entry, tritonName: MODEL_NAME };
}

/** The catalog's models with infilling: what the toggle offers to switch to. */
export function infillingModels(): CatalogModel[] {
  return MODEL_CATALOG.models.filter((m) => m.fillInMiddle);
}
