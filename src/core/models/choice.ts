// Which catalog model is chosen, and everything that follows from it: the model repository entry Triton serves
// it under (the catalog id: one entry per model, only the chosen one loaded), the container folder its weights are
// mounted at. The front ends (settings, CLI) only pass the raw choice in; every name used against Triton comes
// from here.
import { catalogModel, DEFAULT_MODEL_ID, MODEL_CATALOG, type CatalogModel } from './catalog';

/** Every catalog id, in catalog order (the setting's enum and the CLI's `--model` choices). */
export const MODEL_IDS: readonly string[] = MODEL_CATALOG.models.map((m) => m.id);

/** A model name the catalog does not list. */
export class UnknownModelError extends Error {
  override readonly name = 'UnknownModelError';
  readonly code = 'model-unknown';
  constructor(readonly requested: string) {
    super(`Unknown model ${JSON.stringify(requested.slice(0, 80))}: choose one of ${MODEL_IDS.join(', ')}.`);
  }
}

export function isModelId(value: unknown): value is string {
  return typeof value === 'string' && MODEL_IDS.includes(value);
}

/** The chosen model's catalog entry; an empty or missing choice is the default, an unknown one throws. */
export function chosenModel(choice: string | undefined): CatalogModel {
  const id = choice === undefined || choice === '' ? DEFAULT_MODEL_ID : choice;
  const model = catalogModel(id);
  if (!model) throw new UnknownModelError(id);
  return model;
}

/** Triton's name for a model: its repository entry, config.pbtxt's `name`, and every load/infer/stats URL. */
export function modelEntryName(model: Pick<CatalogModel, 'id'>): string {
  return model.id;
}

/** Where a plain weights folder of this model is mounted inside the container. */
export function containerWeightsDir(model: Pick<CatalogModel, 'id'>): string {
  return `/weights/${model.id}`;
}

/**
 * The catalog entry of the model a running server has loaded (by its Triton name), or undefined when none of the
 * catalog's entries is loaded. Read by features that depend on the model (fill-in-the-middle completion).
 */
export function loadedModelEntry(loadedNames: Iterable<string>): CatalogModel | undefined {
  for (const name of loadedNames) {
    const model = MODEL_CATALOG.models.find((m) => modelEntryName(m) === name);
    if (model) return model;
  }
  return undefined;
}

/** A model's name in the texts that name it ("GLM-4-9B-Chat is ready."): a catalog model's display name, else the name. */
export function modelDisplayName(name: string): string {
  return loadedModelEntry([name])?.displayName ?? name;
}

/** How a model is named to people: "GLM-4-9B-Chat (glm-4-9b-chat)" for a catalog model's Triton name, else the name. */
export function modelTitle(name: string): string {
  const model = loadedModelEntry([name]);
  return model ? `${model.displayName} (${name})` : name;
}
