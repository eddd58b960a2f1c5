// The hashing half of a large file's transfer, on its own thread: the main thread receives and writes the bytes,
// this one hashes them (sha256, and git's blob id when asked), so verifying costs the download no main-thread time.
// Messages: { init: gitSize | null } once, then ArrayBuffers (transferred), then 'digest'.
import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

let sha: Hash | undefined;
let git: Hash | undefined;
parentPort?.on('message', (m: unknown) => {
  if (m instanceof ArrayBuffer) {
    const view = new Uint8Array(m);
    sha?.update(view);
    git?.update(view);
  } else if (m === 'digest') {
    parentPort?.postMessage({ sha256: sha?.digest('hex'), gitOid: git?.digest('hex') });
  } else if (typeof m === 'object' && m !== null && 'init' in m) {
    const gitSize = (m as { init: number | null }).init;
    sha = createHash('sha256');
    git = gitSize === null ? undefined : createHash('sha1').update(`blob ${gitSize}\0`);
  }
});
