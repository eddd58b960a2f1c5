// The manifest that marks a folder we downloaded: written when the download starts (complete: false) and replaced
// (write to a temporary file, then rename) only once every file verified. The checklist's weights check requires a
// complete one for folders that carry it; folders without it are the user's own and are checked as before, plus
// the shards their weight index names must all be there (a half huggingface-cli download is not a checkpoint).
// Its name starts with `~`, which no file we take from a listing can (the listing rules refuse it, and selectFiles
// never takes a reserved name), and only a regular file counts: a file the server sent is a link into the blobs,
// so it can neither overwrite the manifest nor stand in for it. (Before #31 the name was `.triton-chatglm-download.json`,
// which a listing could name; such a file is not read any more: those folders are checked like the user's own.)
import { lstat, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { indexShards, RESERVED_NAMES, TESTED_SNAPSHOT } from './chatglmRepository';

export const MANIFEST_NAME = '~triton-chatglm-download.json';

export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

export interface DownloadManifest {
  version: 1;
  complete: boolean;
  repo: string;
  /** The revision asked for (a branch, tag or commit) and the commit it resolved to. */
  revision: string;
  commit: string;
  /** The endpoint's origin and path (never a token). */
  endpoint: string;
  format: 'safetensors' | 'bin';
  files: ManifestFile[];
  startedAt: string;
  completedAt?: string;
}

export async function writeManifest(dir: string, manifest: DownloadManifest): Promise<void> {
  const tmp = join(dir, `${MANIFEST_NAME}.tmp`);
  await writeFile(tmp, `${JSON.stringify(manifest, null, 1)}\n`);
  await rename(tmp, join(dir, MANIFEST_NAME));
}

/** The folder's manifest; undefined when it has none; 'invalid' when it cannot be read as one. */
export async function readManifest(dir: string): Promise<DownloadManifest | 'invalid' | undefined> {
  let text: string;
  try {
    // A link (what a downloaded file is in a snapshot) is never our manifest.
    if (!(await lstat(join(dir, MANIFEST_NAME))).isFile()) return 'invalid';
    text = await readFile(join(dir, MANIFEST_NAME), 'utf8');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : 'invalid';
  }
  try {
    const m = JSON.parse(text) as Partial<DownloadManifest>;
    if (m.version !== 1 || typeof m.complete !== 'boolean' || typeof m.commit !== 'string' || !Array.isArray(m.files)) return 'invalid';
    if (m.files.some((f: Partial<ManifestFile> | null) => typeof f?.path !== 'string' || RESERVED_NAMES.includes(f.path))) return 'invalid';
    return m as DownloadManifest;
  } catch {
    return 'invalid';
  }
}

export type Completeness =
  | { complete: true; manifest?: DownloadManifest }
  /** Our download of this folder has not finished (or its manifest is damaged): run Download again to resume. */
  | { complete: false; problem: 'download-incomplete'; manifest?: DownloadManifest }
  /** Files the manifest or the weight index names are missing or have another size. */
  | { complete: false; problem: 'files-missing'; missing: string[] };

async function sizeOf(path: string): Promise<number | undefined> {
  return stat(path).then((s) => (s.isFile() ? s.size : undefined), () => undefined);
}

/** Whether a checkpoint folder is whole, without reading its weights (sizes and names only). */
export async function checkCompleteness(dir: string): Promise<Completeness> {
  const manifest = await readManifest(dir);
  if (manifest === 'invalid') return { complete: false, problem: 'download-incomplete' };
  if (manifest) {
    if (!manifest.complete) return { complete: false, problem: 'download-incomplete', manifest };
    const missing: string[] = [];
    for (const f of manifest.files) if ((await sizeOf(join(dir, f.path))) !== f.size) missing.push(f.path);
    return missing.length ? { complete: false, problem: 'files-missing', missing } : { complete: true, manifest };
  }
  const entries = await readdir(dir).catch(() => [] as string[]);
  const missing: string[] = [];
  for (const index of entries.filter((e) => e.endsWith('.index.json'))) {
    let shards: string[] | undefined;
    try {
      shards = indexShards(JSON.parse(await readFile(join(dir, index), 'utf8')));
    } catch {
      shards = undefined;
    }
    for (const shard of shards ?? []) {
      // Only plain names: an index is no reason to look outside the folder.
      if (shard.includes('/') || shard.includes('\\') || shard === '..') continue;
      if ((await sizeOf(join(dir, shard))) === undefined) missing.push(shard);
    }
  }
  return missing.length ? { complete: false, problem: 'files-missing', missing } : { complete: true };
}

/**
 * The commit a checkpoint folder holds, when it can be known from the disk: our manifest's, or the name of a Hub
 * cache snapshot folder (snapshots/<commit>). Undefined for a folder the user assembled.
 */
export async function snapshotCommit(dir: string): Promise<string | undefined> {
  const manifest = await readManifest(dir);
  if (manifest && manifest !== 'invalid') return manifest.commit;
  const name = basename(dir);
  return basename(dirname(dir)) === 'snapshots' && /^[0-9a-f]{40}$/.test(name) ? name : undefined;
}

/** 'tested' / 'newer' than the snapshot our checks used; undefined when the folder does not say. */
export async function snapshotStatus(dir: string, testedCommit: string | null = TESTED_SNAPSHOT.commit): Promise<'tested' | 'newer' | undefined> {
  const commit = await snapshotCommit(dir);
  // A model without a tested commit (the catalog's null) gets no remark either way.
  if (commit === undefined || testedCommit === null) return undefined;
  return commit === testedCommit ? 'tested' : 'newer';
}
