// The Hugging Face cache, shared with huggingface-cli and transformers: <cache>/models--THUDM--chatglm3-6b/
// {blobs/<sha256 or git oid>, snapshots/<commit>/<file> → ../../blobs/<id>, refs/<branch>}. The folder naming
// comes from @huggingface/hub. Finding a snapshot that is already complete reads the disk only, never the network.
import { getRepoFolderName } from '@huggingface/hub';
import { readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { CHATGLM_REPO, CHATGLM_REPO_ALIASES } from './chatglmRepository';
import { checkCompleteness, type DownloadManifest } from './downloadManifest';

/** Where a repository lives inside a cache root. */
export function repoFolder(cacheDir: string, repo = CHATGLM_REPO): string {
  return join(cacheDir, getRepoFolderName({ type: 'model', name: repo }));
}

export interface SnapshotPaths {
  repoDir: string;
  blobsDir: string;
  snapshotDir: string;
}

export function snapshotPaths(cacheDir: string, repo: string, commit: string): SnapshotPaths {
  const repoDir = repoFolder(cacheDir, repo);
  return { repoDir, blobsDir: join(repoDir, 'blobs'), snapshotDir: join(repoDir, 'snapshots', commit) };
}

/**
 * The cache the Hub's own tools use: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub (the
 * library's getHFHubCachePath reads process.env itself; this takes the environment it is given).
 */
export function defaultHubCache(env: NodeJS.ProcessEnv, home = homedir()): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HUGGINGFACE_HUB_CACHE) return env.HUGGINGFACE_HUB_CACHE;
  if (env.HF_HOME) return join(env.HF_HOME, 'hub');
  return join(env.XDG_CACHE_HOME || join(home, '.cache'), 'huggingface', 'hub');
}

/** Every cache root worth looking in, in order, without duplicates. */
export function hubCacheCandidates(env: NodeJS.ProcessEnv, home = homedir(), extra: readonly string[] = []): string[] {
  const dirs = [
    ...extra,
    env.HF_HUB_CACHE,
    env.HUGGINGFACE_HUB_CACHE,
    env.HF_HOME ? join(env.HF_HOME, 'hub') : undefined,
    join(home, '.cache', 'huggingface', 'hub'),
  ].filter((d): d is string => !!d).map((d) => resolve(d));
  return [...new Set(dirs)];
}

export interface CachedSnapshot {
  /** The folder to point the server at (a snapshot holding links into ../../blobs). */
  snapshotDir: string;
  repoDir: string;
  repo: string;
  commit: string;
  /** Branches or tags of the cache that name this commit (refs/main …). */
  refs: string[];
  /** Our manifest, when we downloaded it. */
  manifest?: DownloadManifest;
}

async function refsByCommit(repoDir: string): Promise<Map<string, string[]>> {
  const refs = new Map<string, string[]>();
  const names = await readdir(join(repoDir, 'refs')).catch(() => [] as string[]);
  for (const name of names) {
    const commit = (await readFile(join(repoDir, 'refs', name), 'utf8').catch(() => '')).trim();
    if (commit) refs.set(commit, [...(refs.get(commit) ?? []), name]);
  }
  return refs;
}

/**
 * Complete snapshots of a repository (`repos`: its name and aliases; ChatGLM3-6B's by default) in the given caches,
 * best first (one that refs/main names, then the newest). `isCheckpoint` is the weights check the checklist runs
 * (config of the chosen model, tokenizer, weight files) — passed in so this module stays below the server layer.
 */
export async function findCachedSnapshots(cacheDirs: readonly string[], isCheckpoint: (dir: string) => Promise<boolean>, repos: readonly string[] = CHATGLM_REPO_ALIASES): Promise<CachedSnapshot[]> {
  const found: (CachedSnapshot & { mtimeMs: number })[] = [];
  for (const cacheDir of cacheDirs) {
    for (const repo of repos) {
      const repoDir = repoFolder(cacheDir, repo);
      const commits = await readdir(join(repoDir, 'snapshots')).catch(() => [] as string[]);
      if (!commits.length) continue;
      const refs = await refsByCommit(repoDir);
      for (const commit of commits) {
        const snapshotDir = join(repoDir, 'snapshots', commit);
        const st = await stat(snapshotDir).catch(() => undefined);
        if (!st?.isDirectory()) continue;
        const completeness = await checkCompleteness(snapshotDir);
        if (!completeness.complete || !(await isCheckpoint(snapshotDir))) continue;
        found.push({ snapshotDir, repoDir, repo, commit, refs: refs.get(commit) ?? [], ...(completeness.manifest ? { manifest: completeness.manifest } : {}), mtimeMs: st.mtimeMs });
      }
    }
  }
  found.sort((a, b) => Number(b.refs.includes('main')) - Number(a.refs.includes('main')) || b.mtimeMs - a.mtimeMs);
  return found.map(({ mtimeMs: _m, ...s }) => s);
}

/**
 * When `weightsPath` is a snapshot inside a Hub cache (…/models--X--Y/snapshots/<commit>): the repository folder,
 * which must be mounted whole, since the snapshot's files are links into its blobs folder.
 */
export function cacheRepoOf(weightsPath: string): { repoDir: string; snapshotRel: string } | undefined {
  const snapshotsDir = dirname(weightsPath);
  const repoDir = dirname(snapshotsDir);
  if (!snapshotsDir.endsWith(`${sep}snapshots`) || !/^models--[^/\\]+--[^/\\]+$/.test(repoDir.slice(repoDir.lastIndexOf(sep) + 1))) return undefined;
  return { repoDir, snapshotRel: `snapshots/${weightsPath.slice(snapshotsDir.length + 1)}` };
}
