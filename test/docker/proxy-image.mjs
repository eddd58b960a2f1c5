// The team proxy's base for the docker stage: Debian's nginx and set-misc from mmdebstrap → `docker import`
// (no registry pull), tagged by its recipe's hash. `triton-chatglm team up --proxy-base TAG` builds the
// deployment's proxy/Dockerfile over it (its apt step is skipped: the packages are there).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

export const PROXY_BASE_RECIPE = {
  suite: 'bookworm',
  mirror: 'http://deb.debian.org/debian',
  packages: ['nginx', 'libnginx-mod-http-set-misc'],
};

export function proxyBaseTag() {
  const h = createHash('sha256').update(JSON.stringify(PROXY_BASE_RECIPE)).digest('hex');
  return `triton-chatglm-test-proxy-base:${h.slice(0, 16)}`;
}

export function ensureProxyBase(docker, stateDir, log = console.log) {
  const tag = proxyBaseTag();
  const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  if (run(docker.path, ['image', 'inspect', '--format', '{{.Id}}', tag], { env: docker.env }).status === 0) return tag;
  const { suite, mirror, packages } = PROXY_BASE_RECIPE;
  const tar = join(stateDir, 'proxy-base.tar');
  log(`building the proxy base ${tag} with mmdebstrap (${packages.join(', ')})`);
  const started = Date.now();
  const r = run('mmdebstrap', [
    '--variant=minbase', '--quiet', `--include=${packages.join(',')}`,
    '--aptopt=APT::Install-Recommends "false"',
    '--dpkgopt=path-exclude=/usr/share/doc/*', '--dpkgopt=path-exclude=/usr/share/man/*',
    '--dpkgopt=path-exclude=/usr/share/locale/*',
    '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*',
    suite, tar,
    `deb ${mirror} ${suite} main`, `deb ${mirror} ${suite}-updates main`, `deb ${mirror.replace(/\/debian$/, '/debian-security')} ${suite}-security main`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error || r.status !== 0) throw new Error(`mmdebstrap (proxy base) failed (exit ${r.status}): ${(r.stderr ?? String(r.error)).slice(-2000)}`);
  const imported = run(docker.path, ['import', tar, tag], { env: docker.env });
  rmSync(tar, { force: true });
  if (imported.status !== 0) throw new Error(`docker import failed: ${imported.stderr.trim()}`);
  log(`proxy base ${tag} built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return tag;
}
