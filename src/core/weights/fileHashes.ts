// The running hashes of one file, and the writes that feed them: sha256 always, git's blob id (sha1 of
// "blob <size>\0" + content) when the listing gives one. The bytes of a response are appended to the partial file
// and hashed only once written (`append`), so the running hash never counts a byte the file does not hold. Files of
// 8 MB and more are written and hashed on a worker thread (sha256Worker.ts, built next to the bundle as
// dist/sha256Worker.js; from the sources, the one a build left in dist/): the network's buffers move there without
// a copy where they are whole ArrayBuffers (undici's body chunks usually are), so the main thread only receives.
// Smaller files, or when the worker file is not there, are written and hashed on this thread.
import { createHash, type Hash } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { unwritten } from './shortWrites';

const WORKER_FROM_BYTES = 8 * 1024 * 1024;

interface Digests {
  sha256: string;
  gitOid: string | undefined;
}

/** Appends the chunks of one response, in order; see FileHashes.appender. */
export type Append = (chunks: Uint8Array[]) => Promise<void>;

interface Hasher {
  /** Bytes already in the file (a resumed partial file): hashed only. */
  update(chunk: Uint8Array): void;
  appender(fh: FileHandle): Append;
  digest(): Promise<Digests>;
  close(): void;
}

/** All of `chunks` appended through `fh` (a short write goes on from where it stopped). */
async function writeAll(fh: FileHandle, chunks: Uint8Array[]): Promise<void> {
  let rest = chunks.filter((c) => c.byteLength > 0);
  while (rest.length) rest = unwritten(rest, (await fh.writev(rest)).bytesWritten);
}

/** The error a write failed with, whatever it was, for the appends queued behind it. */
function notWritten(cause: unknown): Error {
  return new Error('not written: an earlier write of this response failed', { cause });
}

function inThread(gitSize: number | undefined): Hasher {
  const sha = createHash('sha256');
  const git: Hash | undefined = gitSize === undefined ? undefined : createHash('sha1').update(`blob ${gitSize}\0`);
  const update = (chunk: Uint8Array) => {
    sha.update(chunk);
    git?.update(chunk);
  };
  return {
    update,
    appender(fh) {
      // One write at a time, each hashed once it completed; after a failure nothing more is written.
      let last: Promise<void> = Promise.resolve();
      let failure: unknown;
      return (chunks) => {
        last = last.then(async () => {
          if (failure !== undefined) throw notWritten(failure);
          try {
            await writeAll(fh, chunks);
          } catch (e) {
            failure = e;
            throw e;
          }
          for (const c of chunks) update(c);
        });
        return last;
      };
    },
    digest: async () => ({ sha256: sha.digest('hex'), gitOid: git?.digest('hex') }),
    close() { /* nothing held */ },
  };
}

/**
 * The worker script: next to the bundle (dist/); from the sources (tests, benches through tsx) the one a build left
 * in dist/ — a worker thread cannot load TypeScript itself.
 */
function workerFile(): string | undefined {
  for (const p of [join(__dirname, 'sha256Worker.js'), join(__dirname, '..', '..', '..', 'dist', 'sha256Worker.js')]) {
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** A buffer the worker can take: the chunk's own ArrayBuffer when the chunk is all of it, else a copy of exactly its bytes. */
function movable(chunk: Uint8Array): ArrayBuffer {
  const whole = chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength && chunk.buffer instanceof ArrayBuffer;
  // `new Uint8Array(view)` copies exactly the view's bytes (Buffer#slice would not copy at all).
  return whole ? (chunk.buffer as ArrayBuffer) : new Uint8Array(chunk).buffer;
}

interface Waiting {
  resolve(value: unknown): void;
  reject(e: Error): void;
}

function onWorker(file: string, gitSize: number | undefined): Hasher {
  // Plain JavaScript: none of this process's flags or loaders (under tsx, `--import tsx` would load the TypeScript
  // loader and its hooks thread into every worker, ~0.2 s of CPU per file, while the download runs).
  const worker = new Worker(file, { execArgv: [] });
  // Every answer comes in the order of the messages that asked for one.
  const waiting: Waiting[] = [];
  let failure: Error | undefined;
  const fail = (e: Error) => {
    failure ??= e;
    for (const w of waiting.splice(0)) w.reject(failure);
  };
  worker.on('error', fail);
  worker.on('exit', () => fail(new Error('the hashing thread stopped')));
  worker.on('message', (m: { written: true } | { skipped: true } | { error: { message: string; code?: string; errno?: number; syscall?: string } } | Digests) => {
    const w = waiting.shift();
    if (!w) return;
    if ('error' in m) w.reject(Object.assign(new Error(m.error.message), m.error));
    else if ('skipped' in m) w.reject(notWritten(undefined));
    else w.resolve(m);
  });
  worker.postMessage({ init: gitSize ?? null });
  const ask = (message: unknown, transfer: ArrayBuffer[] = []) => new Promise<unknown>((resolve, reject) => {
    if (failure) return reject(failure);
    waiting.push({ resolve, reject });
    worker.postMessage(message, transfer);
  });
  let writers = 0;
  return {
    update(chunk) {
      const buf = new Uint8Array(chunk).buffer;
      worker.postMessage(buf, [buf]);
    },
    appender(fh) {
      const writer = ++writers;
      return async (chunks) => {
        // The chunks move to the worker (emptied here where they were whole); it writes them, then hashes them.
        const parts = chunks.filter((c) => c.byteLength > 0).map(movable);
        await ask({ write: writer, fd: fh.fd, parts }, [...new Set(parts)]);
      };
    },
    digest: async () => (await ask('digest')) as Digests,
    close() {
      worker.removeAllListeners('exit');
      void worker.terminate();
    },
  };
}

export class FileHashes {
  private hasher: Hasher;
  /** Bytes written to the file and hashed. */
  bytes = 0;
  /** Bytes handed to an append and not yet written and hashed. */
  writing = 0;
  constructor(private readonly size: number, private readonly gitSize: number | undefined) {
    this.hasher = this.create();
  }

  private create(): Hasher {
    const file = this.size >= WORKER_FROM_BYTES ? workerFile() : undefined;
    return file ? onWorker(file, this.gitSize) : inThread(this.gitSize);
  }

  reset(): void {
    this.hasher.close();
    this.hasher = this.create();
    this.bytes = 0;
    this.writing = 0;
  }

  /** Bytes that are already in the file (a resumed partial file): hashed, and counted. */
  update(chunk: Uint8Array): void {
    this.bytes += chunk.byteLength;
    this.hasher.update(chunk);
  }

  /**
   * The appends of one response to the file open as `fh` (opened for appending): each call writes its chunks after
   * those of the calls before, then hashes them, and resolves once both are done, counted in `bytes` only then.
   * The chunks are given up: with a worker, those that are whole ArrayBuffers move there (emptied here). Once a
   * write failed, no later append of this appender writes anything (each rejects); `fh` must stay open until every
   * append settled.
   */
  appender(fh: FileHandle): Append {
    const append = this.hasher.appender(fh);
    return async (chunks) => {
      const n = chunks.reduce((sum, c) => sum + c.byteLength, 0);
      this.writing += n;
      try {
        await append(chunks);
        this.bytes += n;
      } finally {
        this.writing -= n;
      }
    };
  }

  async digest(): Promise<Digests> {
    try {
      return await this.hasher.digest();
    } finally {
      this.hasher.close();
    }
  }

  close(): void {
    this.hasher.close();
  }
}
