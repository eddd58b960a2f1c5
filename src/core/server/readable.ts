// Whether the server in the container can read the files mounted into it, decided by the files' owner and mode
// bits for the user it runs as (runEnvironment.ts: the host user on Linux) rather than by `access()`, which
// answers for this process (root reads everything) and not for the container's user.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface FileUser {
  uid: number;
  gid: number;
}

interface Owned {
  uid: number;
  gid: number;
  mode: number;
}

/** POSIX permission bits for `want` (4 read, 1 search); uid 0 passes (CAP_DAC_OVERRIDE of a rootful container). */
export function permits(st: Owned, user: FileUser, want: number): boolean {
  if (user.uid === 0) return true;
  const bits = st.uid === user.uid ? (st.mode >> 6) & 7 : st.gid === user.gid ? (st.mode >> 3) & 7 : st.mode & 7;
  return (bits & want) === want;
}

/**
 * The first path under `root` (itself included) the user cannot read: a folder needs read and search, a file
 * read. Links are followed, as the server follows them (a Hugging Face snapshot links into its blobs). Stops
 * after `limit` entries: a checkpoint has a few dozen files.
 */
export async function firstUnreadable(root: string, user: FileUser, limit = 2000): Promise<string | undefined> {
  const queue = [root];
  let seen = 0;
  while (queue.length > 0 && seen < limit) {
    const path = queue.shift()!;
    seen++;
    let st;
    try {
      st = await stat(path);
    } catch {
      continue; // a dangling link or a vanished file is the checkpoint checks' business
    }
    if (st.isDirectory()) {
      if (!permits(st, user, 5)) return path;
      const names = await readdir(path).catch(() => [] as string[]);
      // The server never reads these; a hidden cache folder of the download tools may be private.
      queue.push(...names.filter((n) => !n.startsWith('.')).sort().map((n) => join(path, n)));
    } else if (st.isFile() && !permits(st, user, 4)) {
      return path;
    }
  }
  return undefined;
}
