// The CPU serving image of the docker stage, built on the private daemon (test/docker/README.md):
//   1. a base from Debian packages: mmdebstrap → `docker import` (no registry pull), tagged by its recipe's hash;
//   2. `docker build --network host` of test/docker/image/Dockerfile over it, with the tritonserver of .venv's
//      nvidia-pytriton wheel and the tiny test engine, tagged by the hash of everything in its context.
// A rerun on the same data root finds both tags and builds nothing.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { projectRoot, tritonHome } from '../support/triton-process.mjs';

const imageDir = join(projectRoot, 'test/docker/image');

/** What the base holds. Debian's torch 1.13 and Python 3.11: the interpreter the wheel's Python 3.11 stub embeds. */
export const BASE_RECIPE = {
  suite: 'bookworm',
  mirror: 'http://deb.debian.org/debian',
  packages: ['python3', 'python3-torch', 'python3-numpy', 'libpython3.11', 'libopenblas0-pthread'],
  // The NGC image's server user; the container runs as it unless `docker run --user` says otherwise.
  user: { name: 'triton-server', uid: 1000 },
};

function walkFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.name === '__pycache__' || e.name.endsWith('.pyc')) continue;
    if (e.isDirectory()) out.push(...walkFiles(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

export function baseTag() {
  const h = createHash('sha256').update(JSON.stringify(BASE_RECIPE)).digest('hex');
  return `triton-chatglm-test-base:${h.slice(0, 16)}`;
}

/** The wheel's folders the image needs: pytriton/tritonserver and the libraries it links (nvidia_pytriton.libs). */
function wheelFolders() {
  const home = tritonHome();
  const sitePackages = dirname(dirname(home));
  return [
    { from: home, to: 'pytriton/tritonserver' },
    { from: join(sitePackages, 'nvidia_pytriton.libs'), to: 'nvidia_pytriton.libs' },
  ].map((f) => ({ ...f, base: sitePackages }));
}

/** The context's inputs, each { from, to } relative to the context, in a stable order. */
function contextInputs() {
  const inputs = [
    ...['Dockerfile', 'cpu-tritonserver.py'].map((n) => ({ from: join(imageDir, n), to: n })),
    { from: join(imageDir, 'mounted_weights_engine.py'), to: 'testing/mounted_weights_engine.py' },
    { from: join(projectRoot, 'triton/testing/tiny_engine.py'), to: 'testing/tiny_engine.py' },
  ];
  for (const w of wheelFolders()) {
    for (const f of walkFiles(w.from)) inputs.push({ from: f, to: join('tritonserver', relative(w.base, f)) });
  }
  return inputs;
}

export function imageTag(base = baseTag()) {
  const h = createHash('sha256').update(`${base}\n`);
  for (const i of contextInputs()) {
    h.update(`${i.to}\0${statSync(i.from).mode & 0o111 ? 'x' : '-'}\0`);
    h.update(readFileSync(i.from));
  }
  return `triton-chatglm-cpu-test:${h.digest('hex').slice(0, 16)}`;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  return r;
}

function imageExists(docker, tag) {
  return run(docker.path, ['image', 'inspect', '--format', '{{.Id}}', tag], { env: docker.env }).status === 0;
}

/** mmdebstrap → docker import, unless the tag exists. `log` receives progress lines. */
export function ensureBase(docker, stateDir, log = console.log) {
  const tag = baseTag();
  if (imageExists(docker, tag)) return tag;
  const tar = join(stateDir, 'base.tar');
  const { suite, mirror, packages, user } = BASE_RECIPE;
  log(`building the base ${tag} with mmdebstrap (${packages.join(', ')})`);
  const started = Date.now();
  const r = run('mmdebstrap', [
    '--variant=minbase', '--quiet',
    `--include=${packages.join(',')}`,
    '--aptopt=APT::Install-Recommends "false"',
    '--dpkgopt=path-exclude=/usr/share/doc/*', '--dpkgopt=path-exclude=/usr/share/man/*',
    '--dpkgopt=path-exclude=/usr/share/locale/*',
    `--customize-hook=chroot "$1" useradd --uid ${user.uid} --create-home --shell /usr/sbin/nologin ${user.name}`,
    '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*',
    suite, tar,
    `deb ${mirror} ${suite} main`, `deb ${mirror} ${suite}-updates main`, `deb ${mirror.replace(/\/debian$/, '/debian-security')} ${suite}-security main`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`mmdebstrap failed (exit ${r.status}): ${r.stderr.slice(-2000)}`);
  const imported = run(docker.path, ['import', tar, tag], { env: docker.env });
  rmSync(tar, { force: true });
  if (imported.status !== 0) throw new Error(`docker import failed: ${imported.stderr.trim()}`);
  log(`base ${tag} built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return tag;
}

/** The CPU serving image: a real `docker build --network host` of a context assembled under `stateDir`. */
export function ensureImage(docker, stateDir, log = console.log) {
  const base = ensureBase(docker, stateDir, log);
  const tag = imageTag(base);
  if (imageExists(docker, tag)) { log(`image ${tag} is built`); return tag; }
  const context = join(stateDir, 'image-context');
  rmSync(context, { recursive: true, force: true });
  for (const i of contextInputs()) {
    mkdirSync(dirname(join(context, i.to)), { recursive: true });
    cpSync(i.from, join(context, i.to), { preserveTimestamps: true });
  }
  log(`building ${tag}`);
  const started = Date.now();
  // The Debian CLI has the legacy builder only: no --progress (the flag needs BuildKit/buildx).
  const r = run(docker.path, ['build', '--network', 'host', '--build-arg', `BASE=${base}`, '-t', tag, context], { env: docker.env });
  rmSync(context, { recursive: true, force: true });
  if (r.status !== 0) throw new Error(`docker build of ${tag} failed: ${(r.stdout + r.stderr).slice(-3000)}`);
  log(`image ${tag} built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return tag;
}

/** `docker image inspect` size of a tag, in MB (for the stage's report). */
export function imageSizeMB(docker, tag) {
  const r = run(docker.path, ['image', 'inspect', '--format', '{{.Size}}', tag], { env: docker.env });
  return r.status === 0 ? Math.round(Number(r.stdout.trim()) / 1e6) : undefined;
}
