// State of the fake docker daemon: containers (one JSON record + a directory each), images and name locks, all
// under $FAKE_DOCKER_STATE so that every `docker` invocation (separate processes) sees the same "daemon".
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, openSync, closeSync } from 'node:fs';
import { join } from 'node:path';

export function stateDir() {
  const dir = process.env.FAKE_DOCKER_STATE;
  if (!dir) {
    process.stderr.write('fake docker: set FAKE_DOCKER_STATE to a directory for its state\n');
    process.exit(2);
  }
  mkdirSync(join(dir, 'containers'), { recursive: true });
  mkdirSync(join(dir, 'names'), { recursive: true });
  return dir;
}

/** The configured failure mode: env FAKE_DOCKER_FAIL wins over the file $FAKE_DOCKER_STATE/fail. */
export function failMode(dir) {
  const fromEnv = process.env.FAKE_DOCKER_FAIL?.trim();
  if (fromEnv) return fromEnv;
  const file = join(dir, 'fail');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
}

export function writeJsonAtomic(path, value) {
  const tmp = `${path}.${process.pid}.${Math.random().toString(16).slice(2)}.tmp`;
  writeFileSync(tmp, JSON.stringify(value, null, 2));
  renameSync(tmp, path);
}

export function readJson(path, fallback) {
  try { return JSON.parse(readFileSync(path, 'utf8')); } catch { return fallback; }
}

export const containerFile = (dir, id) => join(dir, 'containers', `${id}.json`);
export const containerDir = (dir, id) => join(dir, 'containers', id);

export function loadContainer(dir, id) {
  return reconcile(dir, readJson(containerFile(dir, id), undefined));
}

export function saveContainer(dir, c) {
  writeJsonAtomic(containerFile(dir, c.Id), c);
}

/** Updates a record under a fresh read (the supervisor and CLI calls write the same file). */
export function updateContainer(dir, id, fn) {
  const c = readJson(containerFile(dir, id), undefined);
  if (!c) return undefined;
  fn(c);
  saveContainer(dir, c);
  return c;
}

export function allContainers(dir) {
  return readdirSync(join(dir, 'containers'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => loadContainer(dir, f.slice(0, -5)))
    .filter(Boolean)
    .sort((a, b) => (a.Created < b.Created ? 1 : -1));
}

/** By exact name (with or without "/"), full id or unique id prefix, like docker. */
export function findContainer(dir, ref) {
  const all = allContainers(dir);
  const name = ref.replace(/^\//, '');
  return all.find((c) => c.Name === `/${name}`) ?? all.find((c) => c.Id === ref) ?? uniquePrefix(all, ref);
}

function uniquePrefix(all, ref) {
  const hits = all.filter((c) => c.Id.startsWith(ref));
  return hits.length === 1 ? hits[0] : undefined;
}

export function pidAlive(pid) {
  if (!pid) return false;
  try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
}

/** Whether `pid` is gone (a zombie counts as gone: it runs nothing and only waits for its parent to reap it). */
export function processGone(pid) {
  if (!pidAlive(pid)) return true;
  try { return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return true; }
}

/**
 * A record that says "running" but whose process and supervisor are both gone (e.g. the machine's processes were
 * killed wholesale) is shown as exited, as docker would after its shim noticed.
 */
function reconcile(dir, c) {
  if (!c || !c.State.Running) return c;
  if (pidAlive(c.State.Pid) || pidAlive(c.SupervisorPid)) return c;
  return updateContainer(dir, c.Id, (x) => {
    Object.assign(x.State, { Status: 'exited', Running: false, Pid: 0, ExitCode: x.State.ExitCode || 137, FinishedAt: new Date().toISOString() });
  }) ?? c;
}

/** Reserves a container name; false when taken (real docker's Conflict). */
export function lockName(dir, name, id) {
  try {
    const fd = openSync(join(dir, 'names', name), 'wx');
    writeFileSync(fd, id);
    closeSync(fd);
    return true;
  } catch {
    return false;
  }
}

export function nameOwner(dir, name) {
  try { return readFileSync(join(dir, 'names', name), 'utf8'); } catch { return undefined; }
}

export function removeContainer(dir, c) {
  rmSync(containerFile(dir, c.Id), { force: true });
  rmSync(containerDir(dir, c.Id), { recursive: true, force: true });
  if (nameOwner(dir, c.Name.slice(1)) === c.Id) rmSync(join(dir, 'names', c.Name.slice(1)), { force: true });
}

const imagesFile = (dir) => join(dir, 'images.json');

/** Images built with `docker build` (always present), plus FAKE_DOCKER_IMAGES when given. */
export function imagePresent(dir, image, mode) {
  const ref = normalizeImage(image);
  const built = readJson(imagesFile(dir), {});
  if (built[ref]) return true;
  if (mode === 'image-missing') return false;
  const listed = process.env.FAKE_DOCKER_IMAGES;
  if (listed === undefined) return true;
  return listed.split(',').map((s) => s.trim()).filter(Boolean).map(normalizeImage).includes(ref);
}

export function imageId(image) {
  let h = 0;
  for (const ch of normalizeImage(image)) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return `sha256:${h.toString(16).padStart(8, '0').repeat(8)}`;
}

export function markImageBuilt(dir, image) {
  const built = readJson(imagesFile(dir), {});
  built[normalizeImage(image)] = { Id: imageId(image), Created: new Date().toISOString() };
  writeJsonAtomic(imagesFile(dir), built);
}

export function normalizeImage(image) {
  const lastSlash = image.lastIndexOf('/');
  return image.slice(lastSlash + 1).includes(':') ? image : `${image}:latest`;
}
