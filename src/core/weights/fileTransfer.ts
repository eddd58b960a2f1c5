// One file from the Hub into a partial file, resumable: what is on disk is kept and the request asks for the rest
// (HTTP Range); the sha256 (and the git object id for files kept in git) is computed while the bytes stream, each
// chunk hashed only once it is written, so the running hash always matches the partial file. Network errors and
// 5xx/429 answers are retried under hubRetry.ts's policy (the metadata requests' too: Retry-After honoured, a
// quiet connection dropped after the policy's timeout); a cancelled transfer keeps its bytes. An empty file is a
// file is not asked for, but its partial file is created and its hashes checked, so it lands as every other does.
import { createReadStream } from 'node:fs';
import { open, stat, truncate } from 'node:fs/promises';
import { request } from 'undici';
import { escapeForMessage } from '../text/escapeForMessage';
import { sleep } from '../util/abort';
import type { HubFile } from './chatglmRepository';
import { DownloadError, isAbort } from './downloadErrors';
import { FileHashes } from './fileHashes';
import { followRedirect, mayCarryToken, serverReason, unauthorizedMessage } from './hubAccess';
import { failureReason, isNetworkError, isRetryableStatus, parseRetryAfter, RetryableError, retryDelayMs, timeoutOf, type RetryPolicy } from './hubRetry';

export { DEFAULT_RETRY, type RetryPolicy } from './hubRetry';

export interface TransferContext {
  endpoint: URL;
  token?: string;
  /** The commit the listing is of: a file the server says comes from another one (X-Repo-Commit) is noted. */
  commit?: string;
  signal?: AbortSignal;
  retry: RetryPolicy;
  /** Bytes received (positive) or given back (negative: a partial file thrown away). */
  onBytes(n: number): void;
  onRetry(info: { file: string; attempt: number; delayMs: number; reason: string }): void;
}

export interface TransferResult {
  sha256: string;
  gitOid: string | undefined;
  /** Bytes fetched over the network for this file (what was on disk before is not counted). */
  fetched: number;
  /** The commit the server said the file came from (X-Repo-Commit), when it named one other than ctx.commit. */
  servedCommit?: string;
}

const MAX_REDIRECTS = 8;

async function fileSize(path: string): Promise<number> {
  return stat(path).then((s) => s.size, () => 0);
}

/** Hashes what is already in the partial file (after a restart, or when a failed write left it out of step). */
async function hashExisting(path: string, hashes: FileHashes, signal?: AbortSignal): Promise<void> {
  hashes.reset();
  const stream = createReadStream(path, { highWaterMark: 1 << 20, ...(signal ? { signal } : {}) });
  for await (const chunk of stream) hashes.update(chunk as Buffer);
}

/** Fetches `file` into `partialPath` (created or continued), resolving once every byte is there and hashed. */
export async function transferFile(url: URL, file: HubFile, partialPath: string, ctx: TransferContext): Promise<TransferResult> {
  const hashes = new FileHashes(file.size, file.gitOid ? file.size : undefined);
  try {
    return await transferInto(url, file, partialPath, hashes, ctx);
  } finally {
    hashes.close();
  }
}

async function transferInto(url: URL, file: HubFile, partialPath: string, hashes: FileHashes, ctx: TransferContext): Promise<TransferResult> {
  let onDisk = await fileSize(partialPath);
  if (onDisk > file.size) {
    await truncate(partialPath, 0);
    onDisk = 0;
  }
  if (onDisk > 0) await hashExisting(partialPath, hashes, ctx.signal);
  let fetched = 0;
  let failures = 0;
  const seen: { servedCommit?: string } = {};
  while (hashes.bytes < file.size) {
    const before = hashes.bytes;
    try {
      fetched += await fetchRange(url, file, partialPath, hashes, ctx, seen);
    } catch (e) {
      if (isAbort(e) || ctx.signal?.aborted) throw e;
      if (!(e instanceof RetryableError) && !isNetworkError(e)) throw e;
      failures = hashes.bytes > before ? 1 : failures + 1;
      const reason = escapeForMessage(failureReason(e, timeoutOf(ctx.retry)));
      if (failures >= ctx.retry.attempts) {
        throw new DownloadError('network', `${escapeForMessage(file.path)}: the download failed ${failures} times in a row (${reason}); run it again to resume.`, { file: escapeForMessage(file.path) });
      }
      const delayMs = retryDelayMs(ctx.retry, failures, e instanceof RetryableError ? e.retryAfterMs : undefined);
      ctx.onRetry({ file: file.path, attempt: failures, delayMs, reason });
      await sleep(delayMs, ctx.signal);
      // A failed write may have left bytes on disk that were never hashed (or fewer than were): start from the truth.
      if ((await fileSize(partialPath)) !== hashes.bytes) {
        const size = await fileSize(partialPath);
        ctx.onBytes(-hashes.bytes);
        await hashExisting(partialPath, hashes, ctx.signal);
        ctx.onBytes(hashes.bytes);
        if (size > file.size) {
          await truncate(partialPath, 0);
          ctx.onBytes(-hashes.bytes);
          hashes.reset();
        }
      }
    }
  }
  // An empty file needs no request, but its partial file must exist to become the blob (its hashes are checked
  // as any other's: those of no bytes).
  if (file.size === 0) await (await open(partialPath, 'a')).close();
  return { ...(await hashes.digest()), fetched, ...seen };
}

/** A short text body (a refusal's reason), at most 4 KB read. */
async function shortBody(body: AsyncIterable<Uint8Array> & { dump(): Promise<void> }): Promise<unknown> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    chunks.push(Buffer.from(chunk));
    total += chunk.byteLength;
    if (total >= 4096) break;
  }
  await body.dump().catch(() => undefined);
  const text = Buffer.concat(chunks).subarray(0, 4096).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { message: text };
  }
}

/** One request for the rest of the file; resolves with the bytes it received. */
async function fetchRange(start: URL, file: HubFile, partialPath: string, hashes: FileHashes, ctx: TransferContext, seen: { servedCommit?: string }): Promise<number> {
  let url = start;
  const offset = hashes.bytes;
  const timeoutMs = timeoutOf(ctx.retry);
  const name = escapeForMessage(file.path);
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const headers: Record<string, string> = { 'accept-encoding': 'identity' };
    if (offset > 0) headers.range = `bytes=${offset}-`;
    if (ctx.token && mayCarryToken(url, ctx.endpoint)) headers.authorization = `Bearer ${ctx.token}`;
    const res = await request(url, { method: 'GET', headers, bodyTimeout: timeoutMs, headersTimeout: timeoutMs, ...(ctx.signal ? { signal: ctx.signal } : {}) });
    const status = res.statusCode;
    const repoCommit = res.headers['x-repo-commit'];
    if (ctx.commit && typeof repoCommit === 'string' && repoCommit.trim() !== ctx.commit) seen.servedCommit = escapeForMessage(repoCommit.trim().slice(0, 80));
    if (status >= 300 && status < 400) {
      await res.body.dump();
      const location = res.headers.location;
      url = followRedirect(url, Array.isArray(location) ? location[0] : location, ctx.endpoint);
      continue;
    }
    if (status === 416 && offset === file.size) {
      await res.body.dump();
      return 0;
    }
    if (status === 401 || status === 403) {
      const reason = serverReason(await shortBody(res.body));
      const tokenSent = headers.authorization !== undefined;
      throw new DownloadError('hub-unauthorized', unauthorizedMessage(`${name} from ${url.origin}`, status, tokenSent, reason),
        { file: name, status, tokenSent, endpoint: url.origin, ...(reason ? { serverReason: reason } : {}) });
    }
    if (status === 404) {
      await res.body.dump();
      throw new DownloadError('hub-not-found', `${name}: not found at ${ctx.endpoint.origin} (HTTP 404).`, { file: name, status });
    }
    if (isRetryableStatus(status)) {
      await res.body.dump();
      const retryAfter = res.headers['retry-after'];
      throw new RetryableError(`HTTP ${status}`, parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter), status);
    }
    if (status !== 200 && status !== 206) {
      await res.body.dump();
      throw new DownloadError('hub-error', `${name}: unexpected answer HTTP ${status}.`, { file: name, status });
    }
    if (status === 206) {
      const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(res.headers['content-range'] ?? ''));
      if (!range || Number(range[1]) !== offset) {
        await res.body.dump();
        throw new DownloadError('hub-error', `${name}: the server answered another range than the one asked for.`, { file: name });
      }
      if (range[3] !== '*' && Number(range[3]) !== file.size) {
        await res.body.dump();
        throw sizeMismatch(file, Number(range[3]));
      }
    } else {
      // 200: the whole file (a server that ignores Range): start the partial file again.
      const length = res.headers['content-length'];
      if (length !== undefined && Number(length) !== file.size) {
        await res.body.dump();
        throw sizeMismatch(file, Number(length));
      }
      if (offset > 0) {
        await truncate(partialPath, 0);
        ctx.onBytes(-hashes.bytes);
        hashes.reset();
      }
    }
    return await writeBody(res.body, file, partialPath, hashes, ctx);
  }
  throw new DownloadError('hub-error', `${name}: more than ${MAX_REDIRECTS} redirects.`, { file: name });
}

function sizeMismatch(file: HubFile, got: number): DownloadError {
  const name = escapeForMessage(file.path);
  return new DownloadError('size-mismatch', `${name}: the server sends ${got} bytes, the file list says ${file.size}.`, { file: name });
}

/** Bytes gathered before a write: fewer, larger writes (and, with the worker, fewer messages to it). */
const BLOCK_BYTES = 4 * 1024 * 1024;
/** On a slow connection a block is written at least this often, so the partial file keeps up with what arrived. */
const BLOCK_MAX_AGE_MS = 500;
/** Blocks handed over and not yet written and hashed, at most: past this, reading waits for the disk. */
const MAX_WRITES = 4;

async function writeBody(body: AsyncIterable<Uint8Array>, file: HubFile, partialPath: string, hashes: FileHashes, ctx: TransferContext): Promise<number> {
  const fh = await open(partialPath, 'a');
  // Each block is written and then hashed (on the worker thread for a large file) while the next ones arrive; the
  // running hash never counts a byte the file does not hold (a failure leaves file ≥ hash: truncated to match).
  const append = hashes.appender(fh);
  let received = 0;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const writes: Promise<void>[] = [];
  let writeError: unknown;
  const settled = async () => {
    await Promise.all(writes.splice(0));
    if (writeError !== undefined) throw writeError;
  };
  let lastFlush = Date.now();
  const flush = async () => {
    lastFlush = Date.now();
    if (pendingBytes) {
      writes.push(append(pending).catch((e: unknown) => { writeError ??= e; }));
      pending = [];
      pendingBytes = 0;
    }
    while (writes.length > MAX_WRITES) await writes.shift();
    if (writeError !== undefined) throw writeError;
  };
  try {
    for await (const chunk of body) {
      const held = hashes.bytes + hashes.writing + pendingBytes + chunk.byteLength;
      if (held > file.size) throw sizeMismatch(file, held);
      pending.push(chunk);
      pendingBytes += chunk.byteLength;
      received += chunk.byteLength;
      // Progress counts bytes as they arrive; a failure writes and hashes what arrived before it goes on.
      ctx.onBytes(chunk.byteLength);
      if (pendingBytes >= BLOCK_BYTES || Date.now() - lastFlush >= BLOCK_MAX_AGE_MS) await flush();
    }
    await flush();
    await settled();
  } catch (e) {
    // A cut, a cancel: what was received is kept (written and hashed) before the error goes on.
    if (!(e instanceof DownloadError)) await flush().then(settled).catch(() => undefined);
    throw e;
  } finally {
    // No write is left in flight on the handle (an append that failed stops the ones after it).
    await settled().catch(() => undefined);
    await fh.close();
    // A write that completed but was not hashed (or a short one that failed): cut the file back to what is hashed.
    if ((await fileSize(partialPath)) > hashes.bytes) await truncate(partialPath, hashes.bytes);
  }
  if (hashes.bytes < file.size) throw new RetryableError(`the connection closed after ${hashes.bytes} of ${file.size} bytes`);
  return received;
}
