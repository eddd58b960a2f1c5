// The docker stage's own Docker Engine (Debian's docker.io): a private dockerd with its own data root, exec root,
// pidfile, socket, config file, bridge and containerd, all under the state folder; never /var/run/docker.sock,
// never the host's /etc/docker/daemon.json, never the host's docker0 or iptables rules. It cannot raise the
// memlock limit (hard limit fixed, CAP_SYS_RESOURCE out of its bounding set), like rootless Docker. A stub
// NVIDIA prestart hook on its PATH makes `--gpus` reach runc on a machine without a GPU.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../support/triton-process.mjs';

/** The pinned Debian client (20.10, as the daemon): reproducible on a fresh Debian 12, and without buildx. */
export const DOCKER_CLI = '/usr/bin/docker';
export const DOCKERD = '/usr/sbin/dockerd';
const HOOK_DIR = join(projectRoot, 'test/docker/nvidia-hook');
/**
 * Our bridge instead of docker0 (another daemon on this machine may own that one), one per state folder so that two
 * checkouts' daemons never share a bridge or hand out the same addresses; 15 characters at most.
 */
function bridge(dir) {
  const hash = createHash('sha256').update(dir).digest();
  return { name: `tcg${hash.toString('hex').slice(0, 8)}`, cidr: `172.31.${hash[4]}.1/24` };
}
/** The memlock hard limit the daemon and its containers get (bytes): `--ulimit memlock=-1` cannot be granted. */
const MEMLOCK_LIMIT = 8 * 1024 * 1024;

/**
 * Outside the checkout (eslint, vsce and editors would walk the image file systems of the data root), one per
 * checkout; kept between runs so the images are built once.
 */
export function stateDir() {
  const checkout = createHash('sha256').update(projectRoot).digest('hex').slice(0, 8);
  return process.env.TRITON_CHATGLM_DOCKER_TEST_STATE || join('/var/tmp/triton-chatglm-docker-test', checkout);
}

export function paths(dir = stateDir()) {
  return {
    dir,
    socket: join(dir, 'docker.sock'),
    pidfile: join(dir, 'dockerd.pid'),
    dataRoot: join(dir, 'data'),
    execRoot: join(dir, 'exec'),
    config: join(dir, 'daemon.json'),
    log: join(dir, 'dockerd.log'),
    clientConfig: join(dir, 'client-config'),
    /** What the stub NVIDIA hook saw, one line per container started with --gpus. */
    hookLog: join(dir, 'nvidia-hook.log'),
  };
}

/** How a client reaches the daemon: the Debian CLI with DOCKER_HOST, and a client config of its own. */
export function client(dir = stateDir()) {
  const p = paths(dir);
  return { path: DOCKER_CLI, env: { ...process.env, DOCKER_HOST: `unix://${p.socket}`, DOCKER_CONFIG: p.clientConfig } };
}

/** Running, not a zombie (an orphan's zombie stays until pid 1 reaps it, and some sandboxes' pid 1 never does). */
function alive(pid) {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch { return false; }
}

function readPid(file) {
  try { return Number(readFileSync(file, 'utf8').trim()) || undefined; } catch { return undefined; }
}

/** Whether `pid` is a dockerd of this state folder (a pidfile may outlive its process and the pid be reused). */
function isOurDockerd(pid, p) {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmd.some((a) => a.endsWith('dockerd')) && cmd.includes(p.dataRoot);
  } catch { return false; }
}

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

async function waitGone(pid, ms) {
  for (let t = 0; t < ms && alive(pid); t += 100) await sleep(100);
  return !alive(pid);
}

/** Stops this state folder's dockerd (and so its containerd and containers); also one a killed run left. */
export async function stopDaemon(dir = stateDir()) {
  const p = paths(dir);
  const pid = readPid(p.pidfile);
  if (pid && alive(pid) && isOurDockerd(pid, p)) {
    process.kill(pid, 'SIGTERM');
    if (!await waitGone(pid, 30_000)) { process.kill(pid, 'SIGKILL'); await waitGone(pid, 5_000); }
  }
  // A SIGKILLed dockerd leaves its containerd (and container shims) behind: they name our exec root.
  for (const stray of processesNaming(p.execRoot)) {
    try { process.kill(stray, 'SIGKILL'); } catch { /* already gone */ }
  }
  rmSync(p.pidfile, { force: true });
  rmSync(p.socket, { force: true });
  // containerd's pidfile outlives a killed containerd: a reused pid would make the next dockerd wait for it.
  rmSync(join(p.execRoot, 'containerd/containerd.pid'), { force: true });
  spawnSync('ip', ['link', 'delete', bridge(dir).name], { stdio: 'ignore' });
}

function processesNaming(text) {
  const found = [];
  for (const name of spawnSync('ls', ['/proc'], { encoding: 'utf8' }).stdout.split('\n')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(text) && alive(Number(name))) found.push(Number(name));
    } catch { /* exited meanwhile */ }
  }
  return found;
}

function ensureBridge(dir) {
  const { name, cidr } = bridge(dir);
  if (spawnSync('ip', ['link', 'show', name], { stdio: 'ignore' }).status === 0) return;
  for (const args of [['link', 'add', name, 'type', 'bridge'], ['addr', 'add', cidr, 'dev', name], ['link', 'set', name, 'up']]) {
    const r = spawnSync('ip', args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
  }
}

/**
 * Starts the private dockerd (after stopping a stale one) and waits until it answers. `nvidiaRuntime` registers
 * a runtime named `nvidia` (runc underneath) in its config, as the NVIDIA Container Toolkit's `nvidia-ctk` does;
 * without it `docker info` lists none, as on a host with only the hook.
 */
export async function startDaemon({ dir = stateDir(), nvidiaRuntime = false } = {}) {
  if (process.getuid?.() !== 0) throw new Error('the docker stage starts its own dockerd and needs root');
  await stopDaemon(dir);
  const p = paths(dir);
  for (const d of [p.dir, p.dataRoot, p.execRoot, p.clientConfig]) mkdirSync(d, { recursive: true });
  writeFileSync(p.config, `${JSON.stringify(nvidiaRuntime ? { runtimes: { nvidia: { path: '/usr/sbin/runc' } } } : {}, null, 2)}\n`);
  ensureBridge(dir);
  const args = [
    `--data-root=${p.dataRoot}`, `--exec-root=${p.execRoot}`, `--pidfile=${p.pidfile}`,
    `--host=unix://${p.socket}`, `--config-file=${p.config}`,
    `--bridge=${bridge(dir).name}`, '--iptables=false', '--ip-masq=false', '--ip6tables=false',
    '--shutdown-timeout=5',
  ];
  // prlimit fixes the memlock hard limit; setpriv takes CAP_SYS_RESOURCE out of the bounding set, so neither
  // dockerd nor runc can raise it (as for rootless Docker).
  const log = openSync(p.log, 'a');
  const child = spawn('prlimit', [
    `--memlock=${MEMLOCK_LIMIT}:${MEMLOCK_LIMIT}`, '--',
    'setpriv', '--bounding-set=-sys_resource', '--inh-caps=-sys_resource', '--',
    DOCKERD, ...args,
  ], {
    detached: true, stdio: ['ignore', log, log],
    env: { ...process.env, PATH: `${HOOK_DIR}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`, TRITON_CHATGLM_TEST_HOOK_LOG: p.hookLog },
  });
  child.unref();
  const c = client(dir);
  for (let t = 0; t < 60_000; t += 250) {
    if (child.exitCode !== null) break;
    if (existsSync(p.socket) && spawnSync(c.path, ['version', '--format', '{{.Server.Version}}'], { env: c.env, stdio: 'ignore' }).status === 0) {
      return { pid: child.pid, ...c, paths: p };
    }
    await sleep(250);
  }
  const tail = readFileSync(p.log, 'utf8').split('\n').slice(-15).join('\n');
  await stopDaemon(dir);
  throw new Error(`dockerd did not start (log ${p.log}):\n${tail}`);
}

/** Removes every container of the daemon (a killed run's leftovers must not hold names or ports). */
export function removeAllContainers(c = client()) {
  const ids = spawnSync(c.path, ['ps', '-aq'], { env: c.env, encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  if (ids.length) spawnSync(c.path, ['rm', '-f', ...ids], { env: c.env, stdio: 'ignore' });
  return ids.length;
}
