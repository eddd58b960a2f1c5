// One file from the Hub into a partial file, resumable: what is on disk is kept and the request asks for the rest
// (HTTP Range); the sha256 (and the git object id for files kept in git) is computed while the bytes stream, each
// chunk hashed only once it is written, so the running hash always matches the partial file. Network errors and
// 5xx/429 answers are retried with backoff; a cancelled transfer keeps its bytes.
import { createReadStream } from 'node:fs';
import { open, stat, truncate } from 'node:fs/promises';
import { request } from 'undici';
import { sleep } from '../util/abort';
import type { HubFile } from './chatglmRepository';
import { DownloadError, isAbort } from './downloadErrors';
import { FileHashes } from './fileHashes';
import { followRedirect, mayCarryToken } from './hubAccess';

export interface RetryPolicy {
  /** Failures in a row (without a byte of progress between them) before giving up. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 1000, maxDelayMs: 30_000 };

export interface TransferContext {
  endpoint: URL;
  token?: string;
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
}

const MAX_REDIRECTS = 8;
/** A connection quiet this long is treated as dropped (a laptop that slept) and retried. */
const BODY_TIMEOUT_MS = 60_000;

async function fileSize(path: string): Promise<number> {
  return stat(path).then((s) => s.size, () => 0);
}

/** Hashes what is already in the partial file (after a restart, or when a failed write left it out of step). */
async function hashExisting(path: string, hashes: FileHashes, signal?: AbortSignal): Promise<void> {
  hashes.reset();
  const stream = createReadStream(path, { highWaterMark: 1 << 20, ...(signal ? { signal } : {}) });
  for await (const chunk of stream) hashes.update(chunk as Buffer);
}

class RetryableError extends Error {}

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
  while (hashes.bytes < file.size) {
    const before = hashes.bytes;
    try {
      fetched += await fetchRange(url, file, partialPath, hashes, ctx);
    } catch (e) {
      if (isAbort(e) || ctx.signal?.aborted) throw e;
      if (!(e instanceof RetryableError) && !isNetworkError(e)) throw e;
      failures = hashes.bytes > before ? 1 : failures + 1;
      if (failures >= ctx.retry.attempts) {
        throw new DownloadError('network', `${file.path}: the download failed ${failures} times in a row (${(e as Error).message}); run it again to resume.`, { file: file.path });
      }
      const delayMs = Math.min(ctx.retry.maxDelayMs, ctx.retry.baseDelayMs * 2 ** (failures - 1));
      ctx.onRetry({ file: file.path, attempt: failures, delayMs, reason: (e as Error).message });
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
  return { ...(await hashes.digest()), fetched };
}

function isNetworkError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('UND_ERR') || ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND', 'ENETUNREACH', 'EHOSTUNREACH'].includes(code))
    || e.message === 'terminated' || e.message.includes('other side closed');
}

/** One request for the rest of the file; resolves with the bytes it received. */
async function fetchRange(start: URL, file: HubFile, partialPath: string, hashes: FileHashes, ctx: TransferContext): Promise<number> {
  let url = start;
  const offset = hashes.bytes;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const headers: Record<string, string> = { 'accept-encoding': 'identity' };
    if (offset > 0) headers.range = `bytes=${offset}-`;
    if (ctx.token && mayCarryToken(url, ctx.endpoint)) headers.authorization = `Bearer ${ctx.token}`;
    const res = await request(url, { method: 'GET', headers, bodyTimeout: BODY_TIMEOUT_MS, headersTimeout: BODY_TIMEOUT_MS, ...(ctx.signal ? { signal: ctx.signal } : {}) });
    const status = res.statusCode;
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
      await res.body.dump();
      throw new DownloadError('hub-unauthorized', `${file.path}: access refused (HTTP ${status}); the repository is gated or private, or the token is not accepted.`, { file: file.path, status });
    }
    if (status === 404) {
      await res.body.dump();
      throw new DownloadError('hub-not-found', `${file.path}: not found at ${ctx.endpoint.origin} (HTTP 404).`, { file: file.path, status });
    }
    if (status === 429 || status >= 500) {
      await res.body.dump();
      throw new RetryableError(`HTTP ${status}`);
    }
    if (status !== 200 && status !== 206) {
      await res.body.dump();
      throw new DownloadError('hub-error', `${file.path}: unexpected answer HTTP ${status}.`, { file: file.path, status });
    }
    if (status === 206) {
      const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(res.headers['content-range'] ?? ''));
      if (!range || Number(range[1]) !== offset) {
        await res.body.dump();
        throw new DownloadError('hub-error', `${file.path}: the server answered another range than the one asked for.`, { file: file.path });
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
  throw new DownloadError('hub-error', `${file.path}: more than ${MAX_REDIRECTS} redirects.`, { file: file.path });
}

function sizeMismatch(file: HubFile, got: number): DownloadError {
  return new DownloadError('size-mismatch', `${file.path}: the server sends ${got} bytes, the file list says ${file.size}.`, { file: file.path });
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
