// Bind-mount emulation for the fake docker. Real docker bind-mounts `-v HOST:/models`, so a config.pbtxt the
// extension re-renders on the host is what the container's Triton reads on the next load. The fake cannot mount:
// tritonserver reads a patched copy (KIND_CPU, tiny engine). This mirror keeps that copy following the host
// directory: changed files are re-copied (config.pbtxt re-patched), deleted ones removed. Runs inside the
// container's supervisor process, so it lives exactly as long as the container's tritonserver.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, watch, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Files the copy never takes (the host's byte-code caches are not the container's business). */
const skipped = (name) => name === '__pycache__' || name.endsWith('.pyc');

/** Relative path → 'dir' or a file signature that changes whenever the file is rewritten or replaced. */
function scan(root) {
  const found = new Map();
  const walk = (rel) => {
    let entries;
    try { entries = readdirSync(join(root, rel), { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      if (skipped(e.name)) continue;
      const key = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) { found.set(key, 'dir'); walk(key); continue; }
      if (!e.isFile()) continue;
      try {
        const st = statSync(join(root, key), { bigint: true });
        found.set(key, `${st.ino}:${st.size}:${st.mtimeNs}`);
      } catch { /* vanished between readdir and stat: the next sync sees the truth */ }
    }
  };
  walk('');
  return found;
}

/**
 * Mirrors `source` into `dest` (which the caller created). `transform(key, buffer)` may rewrite a file's content
 * (e.g. patch config.pbtxt); copies keep the host file's mtime, like a bind mount, and are written to `tmpFile`
 * (same file system as `dest`) then renamed, so tritonserver never reads a half-written file.
 * Returns { sync(), start(intervalMs), close() }: sync() is synchronous and idempotent.
 */
export function createMirror({ source, dest, tmpFile, transform = (_key, data) => data }) {
  /** What the copy currently reflects: key → signature from the last successful sync. */
  let mirrored = new Map();
  const watchers = new Map();
  let timer; let pending; let closed = false;

  function copy(key, signature) {
    const from = join(source, key);
    const st = statSync(from);
    const data = transform(key, readFileSync(from));
    mkdirSync(dirname(join(dest, key)), { recursive: true });
    writeFileSync(tmpFile, data);
    utimesSync(tmpFile, st.atimeMs / 1000, st.mtimeMs / 1000);
    renameSync(tmpFile, join(dest, key));
    return signature;
  }

  function sync() {
    if (closed) return;
    // The container was removed under us: never recreate its directory.
    try { statSync(dest); } catch { return; }
    const now = scan(source);
    const next = new Map();
    for (const [key, sig] of now) {
      if (sig === 'dir') { mkdirSync(join(dest, key), { recursive: true }); next.set(key, sig); continue; }
      if (mirrored.get(key) === sig) { next.set(key, sig); continue; }
      try { next.set(key, copy(key, sig)); } catch {
        // Vanished or unreadable right now: keep the old state so the next sync retries (or deletes it).
        rmSync(tmpFile, { force: true });
        if (mirrored.has(key)) next.set(key, mirrored.get(key));
      }
    }
    // Deleted on the host: delete in the copy (deepest first, so directories go after their files).
    const gone = [...mirrored.keys()].filter((k) => !now.has(k)).sort((a, b) => b.length - a.length);
    for (const key of gone) rmSync(join(dest, key), { recursive: true, force: true });
    mirrored = next;
    watchDirectories(['', ...[...now].filter(([, s]) => s === 'dir').map(([k]) => k)]);
  }

  /** inotify on every mirrored directory wakes the sync within milliseconds; the poll is the safety net. */
  function watchDirectories(keys) {
    const wanted = new Set(keys);
    for (const [key, w] of watchers) if (!wanted.has(key)) { w.close(); watchers.delete(key); }
    for (const key of wanted) {
      if (watchers.has(key)) continue;
      try {
        const w = watch(join(source, key), { persistent: false }, schedule);
        w.on('error', () => { w.close(); watchers.delete(key); });
        watchers.set(key, w);
      } catch { /* e.g. the directory vanished: polling still covers it */ }
    }
  }

  function schedule() {
    if (closed || pending) return;
    // A short pause lets a burst (temp file written, then renamed over the target) settle into one sync.
    pending = setTimeout(() => { pending = undefined; safeSync(); }, 15);
  }

  function safeSync() {
    try { sync(); } catch { /* one failed pass must not end the container; the next poll retries */ }
  }

  return {
    sync,
    start(intervalMs = 300) {
      timer = setInterval(safeSync, intervalMs);
      safeSync();
    },
    close() {
      closed = true;
      clearInterval(timer);
      clearTimeout(pending);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
