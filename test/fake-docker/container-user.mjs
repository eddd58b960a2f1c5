// What the fake's "container" can read as the user it runs as. A real container runs as the image's user (the
// NGC image's triton-server, uid 1000) unless `--user` says otherwise; the fake's processes run as the host user,
// so what that user could read is decided here from owners and mode bits, like the kernel would decide it.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The image's user when `docker run` has no `--user` (the NGC tritonserver image's triton-server). */
export const IMAGE_USER = '1000:1000';

/** `--user uid[:gid]` → ids (names are not resolved: the extension passes numbers). */
export function parseUser(spec) {
  const [uid, gid] = String(spec).split(':');
  return { uid: Number(uid), gid: Number(gid ?? uid) };
}

function permits(st, user, want) {
  if (user.uid === 0) return true;
  const bits = st.uid === user.uid ? (st.mode >> 6) & 7 : st.gid === user.gid ? (st.mode >> 3) & 7 : st.mode & 7;
  return (bits & want) === want;
}

/** The first path under a host folder that `user` cannot read (folders need r+x), links followed. */
function firstUnreadable(root, user) {
  const queue = [root];
  for (let seen = 0; queue.length && seen < 5000; seen++) {
    const path = queue.shift();
    let st;
    try { st = statSync(path); } catch { continue; }
    if (st.isDirectory()) {
      if (!permits(st, user, 5)) return path;
      let names = [];
      try { names = readdirSync(path); } catch { /* unreadable: reported above */ }
      queue.push(...names.sort().map((n) => join(path, n)));
    } else if (st.isFile() && !permits(st, user, 4)) {
      return path;
    }
  }
  return undefined;
}

/** The first file of a bind mount the container's user cannot read, as the container names it. */
export function unreadableMount(volumes, userSpec) {
  const user = parseUser(userSpec);
  for (const v of volumes) {
    const host = firstUnreadable(v.source, user);
    if (host) return `${v.target}${host.slice(v.source.replace(/\/$/, '').length)}`;
  }
  return undefined;
}

/** docker's `--shm-size` → bytes, as `inspect` shows HostConfig.ShmSize (docker's default: 64 MiB). */
export function shmBytes(spec) {
  if (spec === undefined || spec === null) return 64 * 2 ** 20;
  const m = /^(\d+(?:\.\d+)?)([bkmg]?)$/i.exec(String(spec));
  if (!m) return undefined;
  const unit = { '': 1, b: 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 }[m[2].toLowerCase()];
  return Math.round(Number(m[1]) * unit);
}
