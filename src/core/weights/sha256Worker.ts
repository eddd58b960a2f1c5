// The write-and-hash half of a large file's transfer, on its own thread: the main thread receives the bytes and
// hands them over (the network's buffers moved here, not copied); this one appends them to the partial file and,
// once written, hashes them (sha256, and git's blob id when asked), so neither the disk nor the verifying costs the
// main thread time. Messages in, handled in order:
//   { init: gitSize | null } once;
//   { write: writer, fd, parts: ArrayBuffer[] }: append the parts to `fd`, then hash them; answered
//     { written: true }, or { error } when the write failed, or { skipped: true } for the later writes of a writer
//     whose write failed (nothing after a failed write is written, so the file never has a gap);
//   an ArrayBuffer: bytes already on disk (a resumed file), hashed, not answered;
//   'digest': answered { sha256, gitOid }.
// Every answer comes in the order of the messages it answers.
import { createHash, type Hash } from 'node:crypto';
import { writevSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { unwritten } from './shortWrites';

let sha: Hash | undefined;
let git: Hash | undefined;
let failedWriter: number | undefined;

function hash(view: Uint8Array): void {
  sha?.update(view);
  git?.update(view);
}

/** All of `views` appended to `fd` (a short write goes on from where it stopped; an error is thrown). */
function writeAll(fd: number, views: Uint8Array[]): void {
  let rest = views.filter((v) => v.byteLength > 0);
  while (rest.length) rest = unwritten(rest, writevSync(fd, rest));
}

parentPort?.on('message', (m: unknown) => {
  if (m instanceof ArrayBuffer) {
    hash(new Uint8Array(m));
  } else if (typeof m === 'object' && m !== null && 'write' in m) {
    const { write, fd, parts } = m as { write: number; fd: number; parts: ArrayBuffer[] };
    if (write === failedWriter) return parentPort?.postMessage({ skipped: true });
    const views = parts.map((p) => new Uint8Array(p));
    try {
      writeAll(fd, views);
    } catch (e) {
      failedWriter = write;
      const { message, code, errno, syscall } = e as NodeJS.ErrnoException;
      return parentPort?.postMessage({ error: { message, code, errno, syscall } });
    }
    for (const v of views) hash(v);
    parentPort?.postMessage({ written: true });
  } else if (m === 'digest') {
    parentPort?.postMessage({ sha256: sha?.digest('hex'), gitOid: git?.digest('hex') });
  } else if (typeof m === 'object' && m !== null && 'init' in m) {
    const init = (m as { init: number | null }).init;
    sha = createHash('sha256');
    git = init === null ? undefined : createHash('sha1').update(`blob ${init}\0`);
  }
});
