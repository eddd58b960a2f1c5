// Downloading a catalog model (ChatGLM3-6B by default) into the Hugging Face cache: resolve the revision, take the listing's files we need (one
// weight format), check the free space against what is still to fetch, then fetch each file into
// blobs/<id>.incomplete (resumed where it stopped), verify it, rename it to its blob and link it into the snapshot.
// The manifest is written at the start (complete: false) and last (complete: true). One policy for VS Code and
// the CLI: they show the events and ask for nothing else.
import { copyFile, lstat, mkdir, readFile, rename, rm, statfs, symlink, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { createHash } from 'node:crypto';
import { ListingError, selectFiles, type HubFile, type WeightFormat } from './chatglmRepository';
import { chosenModel } from '../models/choice';
import type { CatalogModel } from '../models/catalog';
import { writeManifest, type DownloadManifest, type ManifestFile } from './downloadManifest';
import { DownloadError, formatBytes, isAbort } from './downloadErrors';
import { transferFile, DEFAULT_RETRY, type RetryPolicy } from './fileTransfer';
import { checkTokenTransport, hubUrl, parseEndpoint, resolveRevision, type HubAccess } from './hubAccess';
import { snapshotPaths } from './hubCache';
import { ProgressMeter } from './progressMeter';
import { escapeForMessage } from '../text/escapeForMessage';

export interface DownloadOptions {
  /** The cache root the snapshot goes into (the Hub cache by default, see defaultHubCache). */
  cacheDir: string;
  /** The catalog model to fetch: its repository, revision, files and tested commit (ChatGLM3-6B by default). */
  model?: CatalogModel;
  repo?: string;
  /** A branch, tag or commit; empty: the model's catalog revision (a pinned commit where the catalog pins one). */
  revision?: string;
  /** The endpoint setting (tritonChatglm.hubEndpoint / HF_ENDPOINT); https://huggingface.co when empty. */
  endpoint?: string;
  token?: string;
  signal?: AbortSignal;
  onEvent?: (event: DownloadEvent) => void;
  /** Free bytes on the file system that holds `dir` (statfs by default; tests inject a figure). */
  freeBytes?: (dir: string) => Promise<number>;
  retry?: RetryPolicy;
  now?: () => number;
}

export interface DownloadPlan {
  /** The catalog model's id. */
  model: string;
  repo: string;
  revision: string;
  commit: string;
  format: WeightFormat;
  files: HubFile[];
  /** Entries of the listing that are not fetched (other folders, other files): only counted (a debug line). */
  ignored: number;
  totalBytes: number;
  /** Bytes already on disk (finished blobs and partial files), which are not fetched again. */
  presentBytes: number;
  snapshotDir: string;
  /** The commit is not the one our checks were run with (still accepted); false for a model with no tested commit. */
  newerThanTested: boolean;
}

export type DownloadEvent =
  | { type: 'resolved'; plan: DownloadPlan }
  | { type: 'file'; file: string; index: number; count: number; size: number; present: number }
  | { type: 'progress'; doneBytes: number; totalBytes: number; bytesPerSecond: number | undefined; secondsLeft: number | undefined }
  | { type: 'retry'; file: string; attempt: number; delayMs: number; reason: string }
  | { type: 'verify-failed'; file: string }
  | { type: 'file-done'; file: string; sha256: string; fetched: number }
  | { type: 'done'; snapshotDir: string; commit: string; fetchedBytes: number; newerThanTested: boolean };

export interface DownloadResult {
  snapshotDir: string;
  repoDir: string;
  commit: string;
  revision: string;
  /** Bytes received over the network in this run. */
  fetchedBytes: number;
  newerThanTested: boolean;
}

/** Room kept free beyond what is fetched: the file system must not end up full. */
export function spaceMargin(bytes: number): number {
  return 512 * 1024 * 1024 + Math.ceil(bytes * 0.01);
}

async function statfsFree(dir: string): Promise<number> {
  // The folder may not exist yet: ask about the nearest one that does.
  let probe = dir;
  for (;;) {
    try {
      const s = await statfs(probe);
      return Number(s.bavail) * Number(s.bsize);
    } catch (e) {
      const parent = dirname(probe);
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || parent === probe) throw e;
      probe = parent;
    }
  }
}

async function sizeIfFile(path: string): Promise<number | undefined> {
  return lstat(path).then((s) => (s.isFile() ? s.size : undefined), () => undefined);
}

/** The blob a file is stored under: its LFS sha256, else its git object id (the names the Python library uses). */
function blobId(f: HubFile): string {
  return f.sha256 ?? f.gitOid!;
}

async function sha256OfFile(path: string): Promise<string> {
  return createHash('sha256').update(await readFile(path)).digest('hex');
}

/** snapshot/<path> → ../../blobs/<id> (a copy where the file system has no symbolic links). */
async function linkIntoSnapshot(blobPath: string, linkPath: string): Promise<void> {
  await mkdir(dirname(linkPath), { recursive: true });
  await rm(linkPath, { force: true });
  try {
    await symlink(relative(dirname(linkPath), blobPath), linkPath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') throw e;
    await copyFile(blobPath, linkPath);
  }
}

function diskFull(e: unknown, dir: string): unknown {
  if ((e as NodeJS.ErrnoException | undefined)?.code !== 'ENOSPC') return e;
  return new DownloadError('space-low', `The disk that holds ${dir} filled up during the download; what was received is kept. Free some space and download again to resume.`, { dir });
}

/** Resolves the revision and works out what is left to fetch; reads the disk, writes nothing. */
export async function planDownload(o: DownloadOptions, access: HubAccess): Promise<DownloadPlan> {
  const model = o.model ?? chosenModel(undefined);
  const repo = o.repo ?? model.hub.repo;
  const revision = o.revision?.trim() || model.hub.revision;
  checkTokenTransport(access.endpoint, access.token);
  const { commit, files: listing } = await resolveRevision(access, repo, revision);
  let selection: ReturnType<typeof selectFiles>;
  try {
    selection = selectFiles(listing, { repo, required: model.files.required, weights: model.files.weights });
  } catch (e) {
    if (e instanceof ListingError) throw new DownloadError('listing-refused', e.message, { file: e.entry, repo, revision });
    throw e;
  }
  const { format, files, ignored } = selection;
  const { blobsDir, snapshotDir } = snapshotPaths(o.cacheDir, repo, commit);
  let presentBytes = 0;
  for (const f of files) {
    const blob = join(blobsDir, blobId(f));
    if ((await sizeIfFile(blob)) === f.size) presentBytes += f.size;
    else presentBytes += Math.min(f.size, (await sizeIfFile(`${blob}.incomplete`)) ?? 0);
  }
  const totalBytes = files.reduce((n, f) => n + f.size, 0);
  const newerThanTested = model.hub.testedCommit !== null && commit !== model.hub.testedCommit;
  return { model: model.id, repo, revision, commit, format, files, ignored, totalBytes, presentBytes, snapshotDir, newerThanTested };
}

/** Throws `space-low` (with both figures and the folder) when what is left does not fit with the margin. */
export async function checkSpace(plan: DownloadPlan, cacheDir: string, freeBytes: (dir: string) => Promise<number>): Promise<void> {
  const needed = plan.totalBytes - plan.presentBytes;
  if (needed <= 0) return;
  const free = await freeBytes(cacheDir);
  if (free < needed + spaceMargin(needed)) {
    throw new DownloadError('space-low',
      `Not enough free space in ${cacheDir}: the download needs ${formatBytes(needed)} more (plus ${formatBytes(spaceMargin(needed))} to spare), ${formatBytes(free)} is free.`,
      { dir: cacheDir, neededBytes: needed, freeBytes: free });
  }
}

export async function downloadWeights(o: DownloadOptions): Promise<DownloadResult> {
  const endpoint = parseEndpoint(o.endpoint);
  const emit = o.onEvent ?? (() => undefined);
  const access: HubAccess = {
    endpoint, ...(o.token ? { token: o.token } : {}), ...(o.signal ? { signal: o.signal } : {}),
    retry: o.retry ?? DEFAULT_RETRY, onRetry: (info) => emit({ type: 'retry', ...info }),
  };
  const plan = await planDownload(o, access);
  await checkSpace(plan, o.cacheDir, o.freeBytes ?? statfsFree);
  emit({ type: 'resolved', plan });

  const { repoDir, blobsDir, snapshotDir } = snapshotPaths(o.cacheDir, plan.repo, plan.commit);
  const manifest: DownloadManifest = {
    version: 1, complete: false, repo: plan.repo, revision: plan.revision, commit: plan.commit, endpoint: hubUrl(endpoint),
    format: plan.format, files: [], startedAt: new Date().toISOString(),
  };
  try {
    await mkdir(blobsDir, { recursive: true });
    await mkdir(snapshotDir, { recursive: true });
    await writeManifest(snapshotDir, manifest);
  } catch (e) {
    throw diskFull(e, o.cacheDir);
  }

  const meter = new ProgressMeter(plan.totalBytes, plan.presentBytes, o.now ?? Date.now);
  const report = (force = false) => {
    const p = meter.sample(force);
    if (p) emit({ type: 'progress', ...p });
  };
  let fetchedBytes = 0;
  const verified: ManifestFile[] = [];
  for (const [index, f] of plan.files.entries()) {
    const blob = join(blobsDir, blobId(f));
    const link = join(snapshotDir, f.path);
    const partial = `${blob}.incomplete`;
    const done = (await sizeIfFile(blob)) === f.size;
    emit({ type: 'file', file: f.path, index, count: plan.files.length, size: f.size, present: done ? f.size : Math.min(f.size, (await sizeIfFile(partial)) ?? 0) });
    try {
      if (done) {
        // A finished blob is named by its hash (as the Hub's tools trust it); git-kept files are hashed for the manifest.
        verified.push({ path: f.path, size: f.size, sha256: f.sha256 ?? (await sha256OfFile(blob)) });
      } else {
        const url = new URL(`${hubUrl(endpoint)}/${plan.repo}/resolve/${plan.commit}/${f.path.split('/').map(encodeURIComponent).join('/')}`);
        const sha256 = await fetchVerified(url, f, plan.commit, partial, access, o, meter, emit, report, (n) => { fetchedBytes += n; });
        await rename(partial, blob);
        verified.push({ path: f.path, size: f.size, sha256 });
      }
      await linkIntoSnapshot(blob, link);
    } catch (e) {
      report(true);
      throw diskFull(e, o.cacheDir);
    }
    emit({ type: 'file-done', file: f.path, sha256: verified[verified.length - 1]!.sha256, fetched: fetchedBytes });
    report(true);
  }
  try {
    if (plan.revision !== plan.commit) {
      await mkdir(join(repoDir, 'refs'), { recursive: true });
      await writeFile(join(repoDir, 'refs', plan.revision.replace(/[/\\]/g, '_')), plan.commit);
    }
    // Last: only a folder whose every file verified is marked complete.
    await writeManifest(snapshotDir, { ...manifest, complete: true, files: verified, completedAt: new Date().toISOString() });
  } catch (e) {
    throw diskFull(e, o.cacheDir);
  }
  emit({ type: 'done', snapshotDir, commit: plan.commit, fetchedBytes, newerThanTested: plan.newerThanTested });
  return { snapshotDir, repoDir, commit: plan.commit, revision: plan.revision, fetchedBytes, newerThanTested: plan.newerThanTested };
}

/** One file fetched and checked; a mismatch throws the partial file away and fetches it once more. */
async function fetchVerified(
  url: URL, f: HubFile, commit: string, partial: string, access: HubAccess, o: DownloadOptions, meter: ProgressMeter,
  emit: (e: DownloadEvent) => void, report: () => void, counted: (n: number) => void,
): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const result = await transferFile(url, f, partial, {
      endpoint: access.endpoint,
      commit,
      ...(access.token ? { token: access.token } : {}),
      ...(access.signal ? { signal: access.signal } : {}),
      retry: o.retry ?? DEFAULT_RETRY,
      onBytes: (n) => {
        meter.add(n);
        if (n > 0) counted(n);
        report();
      },
      onRetry: (info) => emit({ type: 'retry', ...info }),
    }).catch((e: unknown) => {
      if (isAbort(e)) throw e;
      if (e instanceof DownloadError && e.code === 'size-mismatch') return unlink(partial).catch(() => undefined).then(() => { throw e; });
      throw e;
    });
    const ok = f.sha256 ? result.sha256 === f.sha256 : result.gitOid === f.gitOid;
    if (ok) return result.sha256;
    await unlink(partial);
    meter.add(-f.size);
    if (attempt >= 2) {
      // A server that serves another commit's file than the one listed says so in X-Repo-Commit: the likely cause.
      const other = result.servedCommit
        ? ` The server said the file comes from commit ${result.servedCommit}, not ${commit} (the listing's): the revision may have moved, or the endpoint mixes commits.`
        : '';
      throw new DownloadError('checksum-mismatch', `${escapeForMessage(f.path)} did not match its checksum from the Hub twice; it was discarded.${other} Try again later or use another endpoint.`,
        { file: escapeForMessage(f.path), ...(result.servedCommit ? { servedCommit: result.servedCommit } : {}) });
    }
    emit({ type: 'verify-failed', file: f.path });
  }
}


