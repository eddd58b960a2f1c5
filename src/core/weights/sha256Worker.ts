// The hashing half of a large file's transfer, on its own thread: the main thread receives and writes the bytes,
// this one hashes them (sha256, and git's blob id when asked), so verifying costs the download no main-thread time.
// Messages in: { init: gitSize | null, slots: SharedArrayBuffer } once, then { slot, length } (a written block in
// one of the shared slots; answered { free: slot } once hashed, so the slot can take the next block) or an
// ArrayBuffer (transferred), then 'digest'.
import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

let sha: Hash | undefined;
let git: Hash | undefined;
let slots: SharedArrayBuffer | undefined;
let slotBytes = 0;
parentPort?.on('message', (m: unknown) => {
  if (m instanceof ArrayBuffer) {
    const view = new Uint8Array(m);
    sha?.update(view);
    git?.update(view);
  } else if (typeof m === 'object' && m !== null && 'slot' in m) {
    const { slot, length } = m as { slot: number; length: number };
    const view = new Uint8Array(slots!, slot * slotBytes, length);
    sha?.update(view);
    git?.update(view);
    parentPort?.postMessage({ free: slot });
  } else if (m === 'digest') {
    parentPort?.postMessage({ sha256: sha?.digest('hex'), gitOid: git?.digest('hex') });
  } else if (typeof m === 'object' && m !== null && 'init' in m) {
    const init = m as { init: number | null; slots: SharedArrayBuffer; slotBytes: number };
    sha = createHash('sha256');
    git = init.init === null ? undefined : createHash('sha1').update(`blob ${init.init}\0`);
    slots = init.slots;
    slotBytes = init.slotBytes;
  }
});
