// Installs the model repository the container mounts: one entry per catalog model (its directory and Triton name
// are the catalog id), each a copy of the one code tree (triton/model_repository/chatglm3-6b/1) with its own
// config.pbtxt rendered from the settings and fresh warmup files. The chosen model's entry gets the settings'
// weights path; the others name their own container folder (they are not loaded until chosen, which re-renders). Triton decides whether a load must reload a model by
// file modification times (a changed version directory means a full second copy of the model in GPU memory
// before the swap), so unchanged files are never rewritten. A first install is built in a temporary directory
// and renamed into place; later installs replace each changed file atomically (temp file + rename).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { MODEL_CATALOG } from '../models/catalog';
import { chosenModel, containerWeightsDir, modelEntryName } from '../models/choice';
import { CODE_ENTRY, renderConfig, resolveModelSettings, type ModelSettings } from './renderConfig';
import { readWarmupRequest, warmupFiles, type WarmupRequest } from './warmup';

export interface InstallOptions {
  /** The packaged triton/model_repository directory. */
  source: string;
  /** Repository root to create or update (e.g. <globalStorage>/model_repository); mounted as /models. */
  destination: string;
  settings?: Partial<ModelSettings>;
  /** Warmup request (object, or path to a JSON file). Default: warmup_requests.json next to `source`. */
  warmup?: WarmupRequest | string;
}

export interface InstallResult {
  /** Repository root (= destination). */
  path: string;
  /** Directory of the chosen model's entry inside it. */
  modelPath: string;
  /** Every entry's name (catalog order): what Triton's repository index lists. */
  entries: string[];
  /** Paths (relative to `path`, '/'-separated) written or removed by this call; empty when nothing changed. */
  changed: string[];
}

/** Files and directories never copied: Python byte-code caches would otherwise look like model changes. */
function skipped(name: string): boolean {
  return name === '__pycache__' || name.endsWith('.pyc') || name === '.DS_Store';
}

/** Relative path → content of the repository as it should be. */
async function desiredFiles(options: InstallOptions): Promise<Map<string, Buffer>> {
  const code = new Map<string, Buffer>();
  const codeRoot = join(options.source, CODE_ENTRY, '1');
  const walk = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (skipped(entry.name)) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) code.set(toKey(relative(codeRoot, full)), await readFile(full));
    }
  };
  if (!existsSync(join(codeRoot, 'model.py'))) {
    throw new Error(`${options.source} is not a model repository: it has no ${CODE_ENTRY}/1/model.py`);
  }
  await walk(codeRoot);
  const settings = options.settings ?? {};
  const chosen = chosenModel(resolveModelSettings(settings).model); // bad settings: ModelSettingsError, naming each
  const warmup = typeof options.warmup === 'object'
    ? options.warmup
    : await readWarmupRequest(options.warmup ?? join(dirname(options.source), 'warmup_requests.json'));
  const warmupData = warmupFiles(warmup);
  // Render the chosen entry first: bad settings throw before anything is read for the others.
  const models = [chosen, ...MODEL_CATALOG.models.filter((m) => m.id !== chosen.id)];
  const files = new Map<string, Buffer>();
  for (const model of models) {
    const entry = modelEntryName(model);
    const own = model.id === chosen.id ? settings : { ...settings, weightsPath: containerWeightsDir(model) };
    files.set(`${entry}/config.pbtxt`, Buffer.from(renderConfig({ ...own, model: model.id }), 'utf8'));
    for (const [rel, data] of code) files.set(`${entry}/1/${rel}`, data);
    for (const [name, data] of warmupData) files.set(`${entry}/warmup/${name}`, data);
  }
  return files;
}

const toKey = (rel: string): string => rel.split(sep).join('/');
const fromKey = (root: string, key: string): string => join(root, ...key.split('/'));
const tempName = (path: string): string => `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;

/**
 * Creates or updates the repository at `destination`; idempotent. Throws ModelSettingsError for bad settings
 * before touching the disk. Only the model directories that `source` contains are managed: other entries of
 * `destination` are left alone.
 */
export async function installRepository(options: InstallOptions): Promise<InstallResult> {
  const files = await desiredFiles(options);
  const dest = options.destination;
  const entries = MODEL_CATALOG.models.map(modelEntryName);
  const result: InstallResult = { path: dest, modelPath: join(dest, modelEntryName(chosenModel(options.settings?.model))), entries, changed: [] };

  if (!existsSync(dest)) {
    await mkdir(dirname(dest), { recursive: true });
    const tmp = tempName(dest);
    try {
      for (const [key, data] of files) {
        const target = fromKey(tmp, key);
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, data);
      }
      await rename(tmp, dest);
    } catch (e) {
      await rm(tmp, { recursive: true, force: true });
      // Another installer won the race: fall through to the update path against its result.
      if (!existsSync(dest)) throw e;
      return installRepository(options);
    }
    result.changed = [...files.keys()].sort();
    return result;
  }

  for (const [key, data] of [...files.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const target = fromKey(dest, key);
    const current = await readFile(target).catch(() => undefined);
    if (current && current.equals(data)) continue;
    await mkdir(dirname(target), { recursive: true });
    const tmp = tempName(target);
    try {
      await writeFile(tmp, data);
      await rename(tmp, target);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
    result.changed.push(key);
  }

  // Remove files that are no longer part of a managed model directory (e.g. a module deleted in an update).
  const managedRoots = new Set([...files.keys()].map((k) => k.split('/')[0]!));
  for (const root of managedRoots) {
    for (const key of await listFiles(dest, root)) {
      if (files.has(key)) continue;
      await rm(fromKey(dest, key), { force: true, recursive: true });
      result.changed.push(key);
    }
    await removeEmptyDirs(fromKey(dest, root), false);
  }
  return result;
}

async function listFiles(root: string, under: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        // Caches Triton's Python stub may write into a writable mount are not ours to judge; leave them.
        if (entry.name !== '__pycache__') await walk(full);
      } else {
        out.push(toKey(relative(root, full)));
      }
    }
  };
  await walk(fromKey(root, under));
  return out;
}

async function removeEmptyDirs(dir: string, removeSelf: boolean): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) if (e.isDirectory()) await removeEmptyDirs(join(dir, e.name), true);
  if (removeSelf && (await readdir(dir)).length === 0 && (await stat(dir)).isDirectory()) await rmdir(dir).catch(() => undefined);
}
