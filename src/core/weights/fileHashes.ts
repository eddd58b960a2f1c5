// The running hashes of one file: sha256 always, git's blob id (sha1 of "blob <size>\0" + content) when the
// listing gives one. Files of 8 MB and more are hashed on a worker thread (sha256Worker.ts, built next to the
// bundle as dist/sha256Worker.js; from the sources, the one a build left in dist/), the bytes handed over without a copy where they can be; smaller ones, or when
// the worker file is not there, on this thread. With a worker, blocks are filled in a few slots of memory shared
// with it (`block()`), each used again once hashed: no allocation, page faults or transfer per block.
import { createHash, type Hash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

const WORKER_FROM_BYTES = 8 * 1024 * 1024;

interface Digests {
  sha256: string;
  gitOid: string | undefined;
}

interface Hasher {
  /** A buffer of `bytes` to fill and pass to `update(…, true)`, undefined when none is free (the caller makes one). */
  block(bytes: number): Buffer | undefined;
  update(chunk: Uint8Array, owned: boolean): void;
  digest(): Promise<Digests>;
  close(): void;
}

function inThread(gitSize: number | undefined): Hasher {
  const sha = createHash('sha256');
  const git: Hash | undefined = gitSize === undefined ? undefined : createHash('sha1').update(`blob ${gitSize}\0`);
  return {
    block: () => undefined,
    update(chunk) {
      sha.update(chunk);
      git?.update(chunk);
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

/** Shared slots per file: one being filled, one being written, one being hashed, one to spare. */
const SLOTS = 4;
/** A 4 MB block plus the chunk that took it past 4 MB (socket reads are at most 64 KB, usually). */
const SLOT_BYTES = 5 * 1024 * 1024;

function onWorker(file: string, gitSize: number | undefined): Hasher {
  // Plain JavaScript: none of this process's flags or loaders (under tsx, `--import tsx` would load the TypeScript
  // loader and its hooks thread into every worker, ~0.2 s of CPU per file, while the download runs).
  const worker = new Worker(file, { execArgv: [] });
  const slots = new SharedArrayBuffer(SLOTS * SLOT_BYTES);
  const free = Array.from({ length: SLOTS }, (_, i) => i);
  let failure: Error | undefined;
  let digested: ((d: Digests) => void) | undefined;
  worker.once('error', (e) => { failure = e; });
  worker.on('message', (m: { free: number } | Digests) => {
    if ('free' in m) free.push(m.free);
    else digested?.(m);
  });
  worker.postMessage({ init: gitSize ?? null, slots, slotBytes: SLOT_BYTES });
  return {
    block(bytes) {
      const slot = bytes <= SLOT_BYTES ? free.shift() : undefined;
      return slot === undefined ? undefined : Buffer.from(slots, slot * SLOT_BYTES, bytes);
    },
    update(chunk, owned) {
      // A block in a shared slot is hashed there (the slot is not filled again until the worker frees it); a buffer
      // of our own that is a whole ArrayBuffer moves to the worker; anything else is copied (`new Uint8Array(view)`
      // copies exactly the view's bytes, where Buffer#slice would not copy at all).
      if (chunk.buffer === slots) {
        worker.postMessage({ slot: Math.floor(chunk.byteOffset / SLOT_BYTES), length: chunk.byteLength });
        return;
      }
      const whole = owned && chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength && chunk.buffer instanceof ArrayBuffer;
      const buf = whole ? (chunk.buffer as ArrayBuffer) : new Uint8Array(chunk).buffer;
      worker.postMessage(buf, [buf]);
    },
    digest: () => new Promise<Digests>((resolve, reject) => {
      if (failure) return reject(failure);
      digested = resolve;
      worker.once('error', reject);
      worker.postMessage('digest');
    }),
    close() {
      void worker.terminate();
    },
  };
}

export class FileHashes {
  private hasher: Hasher;
  bytes = 0;
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
  }

  /**
   * A buffer of `bytes` to fill with the next block and then pass to `update(…, true)`: a free shared slot when the
   * worker hashes this file, else a new buffer of our own.
   */
  block(bytes: number): Buffer {
    return this.hasher.block(bytes) ?? Buffer.allocUnsafeSlow(bytes);
  }

  /** `owned`: the caller made this buffer and gives it up (with a worker it moves there and is emptied here). */
  update(chunk: Uint8Array, owned = false): void {
    this.bytes += chunk.byteLength;
    this.hasher.update(chunk, owned);
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
