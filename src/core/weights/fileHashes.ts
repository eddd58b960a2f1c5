// The running hashes of one file: sha256 always, git's blob id (sha1 of "blob <size>\0" + content) when the
// listing gives one. Files of 8 MB and more are hashed on a worker thread (sha256Worker.ts, built next to the
// bundle as dist/sha256Worker.js; from the sources, the one a build left in dist/), the bytes handed over without a copy where they can be; smaller ones, or when
// the worker file is not there, on this thread.
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
  update(chunk: Uint8Array, owned: boolean): void;
  digest(): Promise<Digests>;
  close(): void;
}

function inThread(gitSize: number | undefined): Hasher {
  const sha = createHash('sha256');
  const git: Hash | undefined = gitSize === undefined ? undefined : createHash('sha1').update(`blob ${gitSize}\0`);
  return {
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

function onWorker(file: string, gitSize: number | undefined): Hasher {
  const worker = new Worker(file);
  let failure: Error | undefined;
  worker.once('error', (e) => { failure = e; });
  worker.postMessage({ init: gitSize ?? null });
  return {
    update(chunk, owned) {
      // A buffer of our own that is a whole ArrayBuffer moves to the worker; anything else is copied.
      const whole = owned && chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength && chunk.buffer instanceof ArrayBuffer;
      const buf = whole ? (chunk.buffer as ArrayBuffer) : chunk.slice().buffer;
      worker.postMessage(buf, [buf]);
    },
    digest: () => new Promise<Digests>((resolve, reject) => {
      if (failure) return reject(failure);
      worker.once('message', (m: Digests) => resolve(m));
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
