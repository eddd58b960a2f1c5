// Which folder holds the chosen model's weights. `weightsPath` is one setting for every model, so it counts only
// when it holds that model; otherwise the model's own Hub repository in the Hugging Face cache is used. So ChatGLM3
// in a folder and GLM-4 in the cache work side by side, and switching models never needs the path edited. Used by
// the session's start and setup checks (extension and CLI) and by the download's "already there" offer.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CatalogModel } from '../models/catalog';
import { checkpointServes, identifyCheckpoint } from '../models/checkpointModel';
import { findCachedSnapshots, type CachedSnapshot } from '../weights/hubCache';
import { validateWeights } from './weights';

export type ModelWeights =
  /** `weightsPath` is set and its config.json is a checkpoint of the model (its other problems the check reports). */
  | { source: 'setting'; path: string }
  /** The newest complete snapshot of the model's Hub repository in a cache. */
  | { source: 'cache'; path: string; snapshot: CachedSnapshot }
  /** Neither: the setup check says the model has no weights (or what the set folder holds instead). */
  | { source: 'none' };

/** The names the model's repository has in a cache (its repository, then the names it also answers to). */
export function modelRepos(model: Pick<CatalogModel, 'hub'>): string[] {
  return [...new Set([model.hub.repo, ...model.hub.aliases])];
}

/** Whether the folder's config.json describes a checkpoint of `model` (missing or unreadable: no). */
export async function holdsModel(dir: string, model: Pick<CatalogModel, 'id'>): Promise<boolean> {
  try {
    return checkpointServes(identifyCheckpoint(JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'))), model);
  } catch {
    return false;
  }
}

/** The complete snapshots of the model's repository in the caches, best first (whole checkpoints of that model). */
export function cachedModelSnapshots(model: CatalogModel, cacheDirs: readonly string[]): Promise<CachedSnapshot[]> {
  return findCachedSnapshots(cacheDirs, (d) => validateWeights(d, model).then(() => true, () => false), modelRepos(model));
}

export async function resolveModelWeights(model: CatalogModel, weightsPath: string, cacheDirs: readonly string[]): Promise<ModelWeights> {
  const path = weightsPath.trim();
  if (path && (await holdsModel(path, model))) return { source: 'setting', path };
  const [best] = await cachedModelSnapshots(model, cacheDirs).catch(() => []);
  if (best) return { source: 'cache', path: best.snapshotDir, snapshot: best };
  return { source: 'none' };
}

/** The folder to mount: the resolved one, else the setting as it is (so the check names what is wrong with it). */
export function effectiveWeightsPath(resolved: ModelWeights, weightsPath: string): string {
  return resolved.source === 'none' ? weightsPath : resolved.path;
}

/**
 * Whether a downloaded (or found) snapshot of `model` is written into `weightsPath`: yes when the setting is empty,
 * unusable or holds that model already; no when it holds another catalog model's checkpoint, which keeps serving
 * that model (the snapshot is found in the cache without the setting).
 */
export async function replacesWeightsSetting(weightsPath: string, model: Pick<CatalogModel, 'id'>): Promise<boolean> {
  const path = weightsPath.trim();
  if (!path) return true;
  let config: unknown;
  try {
    config = JSON.parse(await readFile(join(path, 'config.json'), 'utf8'));
  } catch {
    return true;
  }
  const identity = identifyCheckpoint(config);
  return identity.kind === 'unknown' || checkpointServes(identity, model);
}
