// A fake `docker` client + daemon for tests: the subset of the docker CLI the extension calls, with docker's own
// output formats and error texts. `run` starts the REAL tritonserver on this machine (CPU, tiny engine: the
// stand-in for a GPU container) through test/support/triton-process.mjs. State lives in $FAKE_DOCKER_STATE.
// $FAKE_DOCKER_STATE/fail or env FAKE_DOCKER_FAIL = daemon-down | permission-denied | no-nvidia | port-allocated |
// image-missing makes it fail the way real docker does. See README.md next to this file.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, watch, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { constants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, buildxVersion } from './build.mjs';
import { IMAGE_USER, shmBytes, unreadableMount } from './container-user.mjs';
import {
  allContainers, containerDir, failMode, findContainer, imageId, imagePresent, loadContainer, lockName,
  nameOwner, normalizeImage, pidAlive, processGone, readJson, removeContainer, saveContainer, stateDir, updateContainer,
} from './state.mjs';

const SELF = fileURLToPath(import.meta.url);
const SOCK = 'unix:///var/run/docker.sock';
const DAEMON_DOWN = `Cannot connect to the Docker daemon at ${SOCK}. Is the docker daemon running?`;
const permissionDenied = (path) => `permission denied while trying to connect to the Docker daemon socket at ${SOCK}: Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.49/${path}": dial unix /var/run/docker.sock: connect: permission denied`;
const CLIENT = { Version: '28.2.2', ApiVersion: '1.49', Os: 'linux', Arch: 'amd64', GoVersion: 'go1.24.3', GitCommit: 'e6534b4' };

class Exit extends Error {
  constructor(code, stderr = '', stdout = '') { super(stderr); this.code = code; this.stderr = stderr; this.stdout = stdout; }
}

const out = (s) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main(argv) {
  const [cmd, ...rest] = argv;
  if (cmd === '__supervise') return supervise(rest[0]);
  if (!cmd || cmd === '--help') { out('Usage:  docker [OPTIONS] COMMAND (fake docker for tests)'); return 0; }
  const dir = stateDir();
  const mode = failMode(dir);
  if (cmd === 'version') return version(rest, mode);
  const daemonError = (forRun) => {
    const msg = mode === 'daemon-down' ? DAEMON_DOWN : permissionDenied(forRun ? '_ping' : 'containers/json');
    return forRun ? new Exit(125, `docker: ${msg}\n\nRun 'docker run --help' for more information`) : new Exit(1, msg);
  };
  if (mode === 'daemon-down' || mode === 'permission-denied') throw daemonError(cmd === 'run');
  switch (cmd) {
    case 'info': return info(rest, mode);
    case 'image': if (rest[0] === 'inspect') return imageInspect(dir, rest.slice(1), mode); break;
    case 'build': return build(dir, rest, mode, { parseFlags, Exit });
    case 'buildx': if (rest[0] === 'version') return buildxVersion(mode, Exit); break;
    case 'kill': return kill(dir, rest);
    case 'run': return run(dir, rest, mode);
    case 'ps': return ps(dir, rest);
    case 'inspect': return inspect(dir, rest, 'object');
    case 'container':
      if (rest[0] === 'inspect') return inspect(dir, rest.slice(1), 'container');
      if (rest[0] === 'ls') return ps(dir, rest.slice(1));
      if (['stop', 'rm', 'logs', 'wait', 'kill'].includes(rest[0])) return main([rest[0], ...rest.slice(1)]);
      break;
    case 'logs': return logs(dir, rest);
    case 'stop': return stop(dir, rest);
    case 'rm': return rm(dir, rest);
    case 'wait': return wait(dir, rest);
    default: break;
  }
  throw new Exit(1, `docker: unknown command: docker ${argv.slice(0, 2).join(' ')}\n\nRun 'docker --help' for more information`);
}

// ---------------------------------------------------------------------------------------------------------------
// Argument parsing: flags with values, both `--flag value` and `--flag=value`; unknown flags are docker's error.

function parseFlags(args, spec, command) {
  const flags = {}; const positional = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') { positional.push(...args.slice(i + 1)); break; }
    if (!a.startsWith('-') || a === '-') { positional.push(...args.slice(i)); break; }
    let [name, inline] = a.includes('=') && a.startsWith('--') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const def = spec[name];
    if (!def) throw new Exit(command === 'run' ? 125 : 1, `unknown ${name.startsWith('--') ? 'flag' : 'shorthand flag'}: '${name.replace(/^-+/, '')}' in ${name}\nSee 'docker ${command} --help'.`);
    const key = def.key ?? name.replace(/^-+/, '');
    if (def.bool) { flags[key] = inline === undefined ? true : inline !== 'false'; continue; }
    const value = inline ?? args[++i];
    if (value === undefined) throw new Exit(command === 'run' ? 125 : 1, `flag needs an argument: ${name}\nSee 'docker ${command} --help'.`);
    if (def.multi) (flags[key] ??= []).push(value); else flags[key] = value;
  }
  return { flags, positional };
}

// Tiny Go-template subset: `{{json .}}`, `{{json .A.B}}`, `{{.A.B}}`, literal text around them.
function template(format, value) {
  return format.replace(/\{\{\s*(json\s+)?\.([A-Za-z0-9_.]*)\s*\}\}/g, (_, json, path) => {
    const v = path ? path.split('.').reduce((o, k) => (o == null ? undefined : o[k]), value) : value;
    if (json) return JSON.stringify(v ?? null);
    if (v === undefined || v === null) return '<no value>';
    if (typeof v === 'object') return `map[${Object.entries(v).map(([k, x]) => `${k}:${x}`).join(' ')}]`;
    return String(v);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// version, info, images

function version(args, mode) {
  const { flags } = parseFlags(args, { '--format': {}, '-f': { key: 'format' } }, 'version');
  const down = mode === 'daemon-down' || mode === 'permission-denied';
  const server = down ? null : { Platform: { Name: 'Docker Engine - Community' }, Version: '28.2.2', ApiVersion: '1.49', Os: 'linux', Arch: 'amd64' };
  if (flags.format) out(template(flags.format, { Client: CLIENT, Server: server }));
  else out(`Client:\n Version:           ${CLIENT.Version}\n API version:       ${CLIENT.ApiVersion}${server ? `\n\nServer: Docker Engine - Community\n Engine:\n  Version:          ${server.Version}` : ''}`);
  if (down) throw new Exit(1, mode === 'daemon-down' ? DAEMON_DOWN : permissionDenied('version'));
  return 0;
}

/**
 * Like a real host whose NVIDIA Container Toolkit is installed the usual way (only its prestart hook, which
 * `--gpus` runs), no `nvidia` runtime is listed unless FAKE_DOCKER_NVIDIA_RUNTIME=1 (`nvidia-ctk runtime configure`).
 */
function runtimes(mode) {
  const base = { 'io.containerd.runc.v2': { path: 'runc', status: {} }, runc: { path: 'runc', status: {} } };
  return mode !== 'no-nvidia' && process.env.FAKE_DOCKER_NVIDIA_RUNTIME === '1' ? { ...base, nvidia: { path: 'nvidia-container-runtime', status: {} } } : base;
}

function info(args, mode) {
  const { flags } = parseFlags(args, { '--format': {}, '-f': { key: 'format' } }, 'info');
  const SecurityOptions = ['name=seccomp,profile=builtin', ...(mode === 'rootless' ? ['name=rootless'] : [])];
  const data = { ServerVersion: '28.2.2', OperatingSystem: 'Fake Linux', Runtimes: runtimes(mode), DefaultRuntime: 'runc', NCPU: 2, SecurityOptions };
  out(flags.format ? template(flags.format, data) : `Client:\n Version:    ${CLIENT.Version}\n\nServer:\n Runtimes: ${Object.keys(data.Runtimes).join(' ')}\n Default Runtime: runc`);
  return 0;
}

function imageInspect(dir, args, mode) {
  const { flags, positional } = parseFlags(args, { '--format': {}, '-f': { key: 'format' } }, 'image inspect');
  if (positional.length === 0) throw new Exit(1, '"docker image inspect" requires at least 1 argument.');
  const found = []; const missing = [];
  for (const ref of positional) (imagePresent(dir, ref, mode) ? found : missing).push(ref);
  const records = found.map((ref) => ({ Id: imageId(ref), RepoTags: [normalizeImage(ref)], Architecture: 'amd64', Os: 'linux' }));
  if (flags.format) for (const r of records) out(template(flags.format, r));
  else out(JSON.stringify(records, null, 4));
  if (missing.length) throw new Exit(1, missing.map((m) => `Error response from daemon: No such image: ${normalizeImage(m)}`).join('\n'));
  return 0;
}

// ---------------------------------------------------------------------------------------------------------------
// run

const RUN_FLAGS = {
  '-d': { key: 'detach', bool: true }, '--detach': { key: 'detach', bool: true }, '--rm': { bool: true },
  '--name': {}, '--label': { key: 'label', multi: true }, '-l': { key: 'label', multi: true },
  '--gpus': {}, '--shm-size': {}, '--ulimit': { multi: true }, '--pull': {}, '--ipc': {}, '--user': {}, '-u': { key: 'user' },
  '-p': { key: 'publish', multi: true }, '--publish': { key: 'publish', multi: true },
  '-v': { key: 'volume', multi: true }, '--volume': { key: 'volume', multi: true },
  '-e': { key: 'env', multi: true }, '--env': { key: 'env', multi: true }, '--init': { bool: true },
};

function runError(text) {
  return new Exit(125, `docker: ${text}\n\nRun 'docker run --help' for more information`);
}

/** docker's CSV parsing of --gpus: an unquoted comma splits the value into fields. */
function parseGpus(value) {
  const fields = []; let cur = ''; let quoted = false;
  for (const ch of value) {
    if (ch === '"') quoted = !quoted;
    else if (ch === ',' && !quoted) { fields.push(cur); cur = ''; } else cur += ch;
  }
  fields.push(cur);
  let count; let devices;
  for (const f of fields) {
    const eq = f.indexOf('=');
    if (eq < 0) count = f === 'all' ? -1 : Number(f);
    else if (f.slice(0, eq) === 'device') devices = f.slice(eq + 1).split(',');
    else if (!['capabilities', 'driver', 'count'].includes(f.slice(0, eq))) throw new Exit(125, `invalid argument "${value}" for "--gpus" flag: unexpected key '${f.slice(0, eq)}' in '${f}'\nSee 'docker run --help'.`);
  }
  if (count !== undefined && devices) throw new Exit(125, `invalid argument "${value}" for "--gpus" flag: cannot set both Count and DeviceIDs on device request\nSee 'docker run --help'.`);
  if (count !== undefined && Number.isNaN(count)) throw new Exit(125, `invalid argument "${value}" for "--gpus" flag: strconv.Atoi: parsing "${fields[0]}": invalid syntax\nSee 'docker run --help'.`);
  return { Driver: '', Count: count ?? 0, DeviceIDs: devices ?? null, Capabilities: [['gpu']] };
}

/** `--ulimit name=soft[:hard]` → docker's inspect record. */
function parseUlimit(spec) {
  const m = /^([a-z]+)=(-?\d+)(?::(-?\d+))?$/.exec(spec);
  if (!m) throw runError(`invalid argument "${spec}" for "--ulimit" flag: invalid ulimit argument: ${spec}`);
  return { Name: m[1], Hard: Number(m[3] ?? m[2]), Soft: Number(m[2]) };
}

function parsePublish(spec) {
  // [ip:]host:container[/proto]; ip may be [v6]
  const m = /^(?:(\[[^\]]+\]|[^:]+):)?(\d+):(\d+)(?:\/(tcp|udp))?$/.exec(spec);
  if (!m) throw runError(`invalid publish spec "${spec}"`);
  return { hostIp: (m[1] ?? '').replace(/^\[|\]$/g, ''), hostPort: Number(m[2]), containerPort: Number(m[3]) };
}

function parseVolume(spec) {
  const parts = spec.split(':');
  if (parts.length < 2) throw runError(`invalid volume specification: '${spec}'`);
  return { source: parts[0], target: parts[1], readOnly: parts.slice(2).join(',').split(',').includes('ro') };
}

function portFree(port, host) {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen({ port, host: host || '0.0.0.0', exclusive: true }, () => srv.close(() => res(true)));
  });
}

async function run(dir, args, mode) {
  const { flags, positional } = parseFlags(args, RUN_FLAGS, 'run');
  if (positional.length === 0) throw new Exit(125, `"docker run" requires at least 1 argument.\nSee 'docker run --help'.`);
  const [image, ...command] = positional;
  const gpus = flags.gpus !== undefined ? parseGpus(flags.gpus) : undefined;
  const publish = (flags.publish ?? []).map(parsePublish);
  const volumes = (flags.volume ?? []).map(parseVolume);
  const env = (flags.env ?? []).map((e) => (e.includes('=') ? e : `${e}=${process.env[e] ?? ''}`));
  const labels = Object.fromEntries((flags.label ?? []).map((l) => (l.includes('=') ? [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] : [l, ''])));

  if (!imagePresent(dir, image, mode)) {
    if (flags.pull === 'never') throw runError(`Error response from daemon: No such image: ${normalizeImage(image)}.`);
    throw new Exit(125, `Unable to find image '${normalizeImage(image)}' locally\ndocker: Error response from daemon: pull access denied for ${normalizeImage(image).replace(/:[^:/]*$/, '')}, repository does not exist or may require 'docker login': denied: requested access to the resource is denied\n\nRun 'docker run --help' for more information`);
  }

  const shm = shmBytes(flags['shm-size']);
  if (shm === undefined) throw new Exit(125, `invalid argument "${flags['shm-size']}" for "--shm-size" flag: invalid size: '${flags['shm-size']}'\nSee 'docker run --help'.`);
  const ulimits = (flags.ulimit ?? []).map(parseUlimit);

  const id = randomBytes(32).toString('hex');
  const name = flags.name ?? `fake_${id.slice(0, 8)}`;
  if (!/^\/?[a-zA-Z0-9][a-zA-Z0-9_.-]+$/.test(name)) throw runError(`Error response from daemon: Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed.`);
  if (!lockName(dir, name, id)) {
    const owner = nameOwner(dir, name) ?? '';
    throw runError(`Error response from daemon: Conflict. The container name "/${name}" is already in use by container "${owner}". You have to remove (or rename) that container to be able to reuse that name.`);
  }
  const portBindings = {};
  for (const p of publish) (portBindings[`${p.containerPort}/tcp`] ??= []).push({ HostIp: p.hostIp, HostPort: String(p.hostPort) });
  const record = {
    Id: id, Created: new Date().toISOString(), Name: `/${name}`, Path: command[0] ?? '', Args: command.slice(1),
    State: { Status: 'created', Running: false, Paused: false, Restarting: false, OOMKilled: false, Dead: false, Pid: 0, ExitCode: 0, Error: '', StartedAt: '0001-01-01T00:00:00Z', FinishedAt: '0001-01-01T00:00:00Z' },
    Image: imageId(image),
    Config: { Image: image, Labels: labels, Env: env, Cmd: command, User: flags.user ?? '' },
    HostConfig: { PortBindings: portBindings, Binds: flags.volume ?? [], ShmSize: shm, Ulimits: ulimits, DeviceRequests: gpus ? [gpus] : null },
    Mounts: volumes.map((v) => ({ Type: 'bind', Source: v.source, Destination: v.target, RW: !v.readOnly })),
  };
  mkdirSync(containerDir(dir, id), { recursive: true });
  saveContainer(dir, record);
  // From here on docker has created the container: a failing start leaves it in "created", as real docker does.
  const startFailure = (text, exitCode = 128) => {
    updateContainer(dir, id, (c) => { c.State.ExitCode = exitCode; c.State.Error = text; });
    return runError(`Error response from daemon: ${text}`);
  };
  if (gpus && mode === 'no-nvidia') throw startFailure('could not select device driver "" with capabilities: [[gpu]].');
  // A rootless daemon (or one without CAP_SYS_RESOURCE) cannot raise RLIMIT_MEMLOCK (type 8): runc fails the start.
  if ((mode === 'no-memlock' || mode === 'rootless') && ulimits.some((u) => u.Name === 'memlock')) {
    throw startFailure('OCI runtime create failed: container_linux.go:380: starting container process caused: process_linux.go:545: container init caused: error setting rlimit type 8: operation not permitted: unknown');
  }
  for (const v of volumes) if (!existsSync(v.source)) throw startFailure(`invalid mount config for type "bind": bind source path does not exist: ${v.source}.`);
  for (const p of publish) {
    if (mode === 'port-allocated') throw startFailure(`driver failed programming external connectivity on endpoint ${name} (${id.slice(0, 64)}): Bind for ${p.hostIp || '0.0.0.0'}:${p.hostPort} failed: port is already allocated.`);
    if (!(await portFree(p.hostPort, p.hostIp))) throw startFailure(`driver failed programming external connectivity on endpoint ${name} (${id.slice(0, 64)}): Error starting userland proxy: listen tcp4 ${p.hostIp || '0.0.0.0'}:${p.hostPort}: bind: address already in use.`);
  }

  const launch = await containerLaunch(dir, id, command, publish, volumes, env);
  // The server reads its mounts as the container's user (rootless: container root is the host user, who owns them).
  const unreadable = launch.error ? undefined : unreadableMount(volumes, mode === 'rootless' && !flags.user ? '0:0' : flags.user ?? IMAGE_USER);
  if (unreadable) Object.assign(launch, { error: `PermissionError: [Errno 13] Permission denied: '${unreadable}'`, exitCode: 1 });
  writeFileSync(join(containerDir(dir, id), 'launch.json'), JSON.stringify(launch));
  const sup = spawn(process.execPath, [SELF, '__supervise', id], { detached: true, stdio: 'ignore', env: process.env });
  sup.unref();
  updateContainer(dir, id, (c) => { c.SupervisorPid = sup.pid; });
  // `docker run -d` returns once the process runs.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const c = loadContainer(dir, id);
    if (c.State.Status !== 'created') break;
    if (Date.now() > deadline) throw startFailure('fake docker: the container process did not start in 20 s');
    await sleep(25);
  }
  if (!flags.detach) throw new Exit(125, 'fake docker: only `docker run -d` is supported');
  out(id);
  return 0;
}

/**
 * What this "container" runs on the host: tritonserver from the venv, on the published host ports and bind
 * address, with a patched copy of the mounted repository (KIND_CPU + tiny engine) and the mounted weights path.
 */
async function containerLaunch(dir, id, command, publish, volumes, env) {
  const { tritonCommand, freePort } = await import('../support/triton-process.mjs');
  const cdir = containerDir(dir, id);
  const logFile = join(cdir, 'log');
  writeFileSync(logFile, '');
  if (command[0] !== 'tritonserver') {
    return { error: `exec: "${command[0] ?? ''}": executable file not found in $PATH`, exitCode: 127, logFile };
  }
  const targs = command.slice(1);
  const opt = (n, dflt) => { const a = targs.find((x) => x.startsWith(`--${n}=`)); return a ? a.slice(n.length + 3) : dflt; };
  const mountFor = (target) => volumes.find((v) => v.target === target || target.startsWith(`${v.target}/`));
  const repoInContainer = opt('model-repository', '/models');
  const repoMount = mountFor(repoInContainer);
  const models = join(cdir, 'models');
  mkdirSync(models, { recursive: true });
  // The supervisor keeps `models` a patched mirror of the mounted host directory (see bind-mount.mjs); the
  // config's weights_path (a container path) becomes the host path it names through the mounts (weights-view.mjs).
  const mirror = repoMount ? {
    source: join(repoMount.source, repoInContainer.slice(repoMount.target.length)),
    dest: models,
    // Test knob: another test engine than the tiny one (e.g. checkpoint_engine:CheckpointEngine, which runs the
    // mounted checkpoint: the GLM-4 journey's glm4-tiny).
    patch: process.env.FAKE_DOCKER_ENGINE ? { engine: process.env.FAKE_DOCKER_ENGINE } : {},
    volumes: volumes.filter((v) => v.target.startsWith('/weights')),
  } : undefined;
  const hostPortFor = async (containerPort) => publish.find((p) => p.containerPort === containerPort)?.hostPort ?? await freePort();
  const address = publish[0]?.hostIp || '127.0.0.1';
  const handled = ['model-repository', 'model-control-mode', 'http-port', 'grpc-port', 'metrics-port', 'http-address', 'grpc-address', 'metrics-address', 'backend-directory', 'log-verbose', 'allow-gpu-metrics'];
  const extraArgs = targs.filter((a) => !handled.some((h) => a.startsWith(`--${h}=`)));
  // Test knob: extra tritonserver flags (e.g. an invalid one to make the "container" die right after start).
  extraArgs.push(...(process.env.FAKE_DOCKER_TRITON_ARGS ?? '').split(' ').filter(Boolean));
  const containerEnv = Object.fromEntries(env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  if (containerEnv.HF_HOME) containerEnv.HF_HOME = join(cdir, 'hf');
  const cmd = tritonCommand({
    repository: models,
    httpPort: await hostPortFor(Number(opt('http-port', 8000))),
    grpcPort: await hostPortFor(Number(opt('grpc-port', 8001))),
    metricsPort: await hostPortFor(Number(opt('metrics-port', 8002))),
    address,
    extraArgs,
    env: containerEnv,
  });
  return { binary: cmd.binary, args: cmd.args, env: cmd.env, logFile, mirror };
}

/**
 * The weights_path parameter (a container path) of the mounted repository's model whose weights are mounted: the
 * repository has one entry per catalog model and only the chosen one's folder is mounted (else the first one's).
 */
function readMountedWeightsPath(source, volumes, toHost) {
  const paths = [];
  for (const name of readdirSync(source)) {
    try {
      const m = /key: "weights_path" value \{ string_value: "([^"]*)" \}/.exec(readFileSync(join(source, name, 'config.pbtxt'), 'utf8'));
      if (m) paths.push(m[1]);
    } catch { /* not a model folder */ }
  }
  return paths.find((p) => toHost(p, volumes)) ?? paths[0];
}

/** Starts the bind-mount mirror of the model repository: a first full copy now, then it follows the host. */
async function startMirror(cdir, spec) {
  const { patchConfigForTests } = await import('../support/triton-process.mjs');
  const { hostWeightsPath, toHost, unreadableInContainer } = await import('./weights-view.mjs');
  // Like a real container, links in the weights folder that point outside every mount cannot be read: the model
  // would fail to load, so the "container" says so in its log and exits (e.g. a Hub cache snapshot mounted alone).
  const first = spec.volumes?.length ? unreadableInContainer(readMountedWeightsPath(spec.source, spec.volumes, toHost), spec.volumes) : [];
  if (first.length) throw new Error(`the weights folder holds links that do not resolve inside the container: ${first.slice(0, 3).join(', ')}`);
  const { createMirror } = await import('./bind-mount.mjs');
  const mirror = createMirror({
    source: spec.source,
    dest: spec.dest,
    tmpFile: join(cdir, 'mirror.tmp'),
    // Like the container's /models/<model>/config.pbtxt: every model's config adapted to this CPU machine.
    transform: (key, data) => {
      if (!/^[^/]+\/config\.pbtxt$/.test(key)) return data;
      const text = data.toString('utf8');
      const weightsPath = hostWeightsPath(text, spec.volumes ?? []);
      return Buffer.from(patchConfigForTests(text, { ...spec.patch, ...(weightsPath ? { parameters: { weights_path: weightsPath } } : {}) }));
    },
  });
  mirror.sync();
  mirror.start(Number(process.env.FAKE_DOCKER_MOUNT_POLL_MS ?? 300));
  return mirror;
}

/** Detached helper that is the container's "shim": runs tritonserver, records its pid and exit code. */
async function supervise(id) {
  const dir = stateDir();
  const launch = readJson(join(containerDir(dir, id), 'launch.json'), {});
  const started = new Date().toISOString();
  const setState = (s) => updateContainer(dir, id, (c) => Object.assign(c.State, s));
  if (launch.error) {
    writeFileSync(launch.logFile, `${launch.error}\n`);
    setState({ Status: 'exited', Running: false, Pid: 0, ExitCode: launch.exitCode, Error: launch.error, StartedAt: started, FinishedAt: started });
    return 0;
  }
  let mirror;
  try {
    if (launch.mirror) mirror = await startMirror(containerDir(dir, id), launch.mirror);
  } catch (e) {
    const error = `fake docker: cannot copy the mounted model repository: ${e.message}`;
    writeFileSync(launch.logFile, `${error}\n`);
    setState({ Status: 'exited', Running: false, Pid: 0, ExitCode: 1, Error: error, StartedAt: started, FinishedAt: started });
    return 0;
  }
  const fd = openSync(launch.logFile, 'a');
  const child = spawn(launch.binary, launch.args, { env: launch.env, stdio: ['ignore', fd, fd], detached: true });
  const exited = new Promise((res) => {
    child.once('error', (e) => res({ code: 127, error: e.message }));
    child.once('exit', (code, signal) => res({ code: code ?? 128 + (constants.signals[signal] ?? 9) }));
  });
  if (child.pid) setState({ Status: 'running', Running: true, Pid: child.pid, StartedAt: started });
  const { code, error } = await exited;
  // Stop mirroring before the state says "exited": `docker rm` may delete the container directory right after.
  mirror?.close();
  // Python backend stubs live in the server's process group: a dead container leaves no process behind.
  if (child.pid) { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* group already gone */ } }
  setState({ Status: 'exited', Running: false, Pid: 0, ExitCode: code, Error: error ?? '', FinishedAt: new Date().toISOString() });
  return 0;
}

// ---------------------------------------------------------------------------------------------------------------
// ps, inspect, logs, stop, rm

function psRow(c, noTrunc) {
  const ports = Object.entries(c.HostConfig.PortBindings ?? {}).flatMap(([cp, bs]) => (bs ?? []).map((b) => `${b.HostIp || '0.0.0.0'}:${b.HostPort}->${cp}`));
  const status = c.State.Running ? `Up ${Math.max(1, Math.round((Date.now() - Date.parse(c.State.StartedAt)) / 1000))} seconds`
    : c.State.Status === 'created' ? 'Created' : `Exited (${c.State.ExitCode}) ${Math.max(1, Math.round((Date.now() - Date.parse(c.State.FinishedAt)) / 1000))} seconds ago`;
  return {
    Command: JSON.stringify([c.Path, ...c.Args].join(' ').slice(0, noTrunc ? undefined : 20)), CreatedAt: c.Created,
    ID: noTrunc ? c.Id : c.Id.slice(0, 12), Image: c.Config.Image,
    Labels: Object.entries(c.Config.Labels).map(([k, v]) => `${k}=${v}`).join(','), LocalVolumes: '0',
    Mounts: c.Mounts.map((m) => m.Source).join(','), Names: c.Name.slice(1), Networks: 'bridge', Ports: ports.join(', '),
    RunningFor: 'seconds ago', Size: '0B', State: c.State.Status, Status: status,
  };
}

function matchesFilter(c, filter) {
  const eq = filter.indexOf('=');
  const [key, value] = [filter.slice(0, eq), filter.slice(eq + 1)];
  switch (key) {
    case 'label': {
      const i = value.indexOf('=');
      return i < 0 ? value in c.Config.Labels : c.Config.Labels[value.slice(0, i)] === value.slice(i + 1);
    }
    case 'name': return new RegExp(value).test(c.Name) || new RegExp(value).test(c.Name.slice(1));
    case 'id': return c.Id.startsWith(value);
    case 'status': return c.State.Status === value;
    case 'ancestor': return normalizeImage(c.Config.Image) === normalizeImage(value);
    default: throw new Exit(1, `Error response from daemon: invalid filter '${key}'`);
  }
}

function ps(dir, args) {
  const { flags } = parseFlags(args, {
    '-a': { key: 'all', bool: true }, '--all': { key: 'all', bool: true }, '-q': { key: 'quiet', bool: true }, '--quiet': { key: 'quiet', bool: true },
    '--no-trunc': { bool: true }, '--filter': { key: 'filter', multi: true }, '-f': { key: 'filter', multi: true }, '--format': {},
  }, 'ps');
  // docker ORs values of the same filter key and ANDs different keys.
  const byKey = {};
  for (const f of flags.filter ?? []) (byKey[f.slice(0, f.indexOf('='))] ??= []).push(f);
  const rows = allContainers(dir)
    .filter((c) => flags.all || c.State.Running)
    .filter((c) => Object.values(byKey).every((fs) => fs.some((f) => matchesFilter(c, f))))
    .map((c) => psRow(c, flags['no-trunc']));
  if (flags.quiet) { for (const r of rows) out(r.ID); return 0; }
  if (flags.format) { for (const r of rows) out(template(flags.format, r)); return 0; }
  out('CONTAINER ID   IMAGE   COMMAND   CREATED   STATUS   PORTS   NAMES');
  for (const r of rows) out(`${r.ID}   ${r.Image}   ${r.Command}   ${r.RunningFor}   ${r.Status}   ${r.Ports}   ${r.Names}`);
  return 0;
}

/** The record as docker shows it (without the fake's own bookkeeping). */
function publicRecord(c) {
  const rest = { ...c };
  delete rest.SupervisorPid;
  return rest;
}

function inspect(dir, args, kind) {
  const { flags, positional } = parseFlags(args, { '--format': {}, '-f': { key: 'format' }, '--type': {}, '-s': { bool: true }, '--size': { key: 's', bool: true } }, 'inspect');
  if (positional.length === 0) throw new Exit(1, `"docker ${kind === 'container' ? 'container ' : ''}inspect" requires at least 1 argument.`);
  const found = []; const errors = [];
  for (const ref of positional) {
    const c = findContainer(dir, ref);
    if (c) found.push(publicRecord(c)); else errors.push(kind === 'container' ? `Error: No such container: ${ref}` : `Error: No such object: ${ref}`);
  }
  if (flags.format) for (const c of found) out(template(flags.format, c));
  else out(JSON.stringify(found, null, 4));
  if (errors.length) throw new Exit(1, errors.join('\n'));
  return 0;
}

function requireContainer(dir, ref) {
  const c = findContainer(dir, ref);
  if (!c) throw new Exit(1, `Error response from daemon: No such container: ${ref}`);
  return c;
}

async function logs(dir, args) {
  const { flags, positional } = parseFlags(args, {
    '-f': { key: 'follow', bool: true }, '--follow': { key: 'follow', bool: true }, '--tail': {}, '-n': { key: 'tail' }, '-t': { key: 'timestamps', bool: true }, '--timestamps': { key: 'timestamps', bool: true },
  }, 'logs');
  if (positional.length !== 1) throw new Exit(1, '"docker logs" requires exactly 1 argument.');
  const c = requireContainer(dir, positional[0]);
  const file = join(containerDir(dir, c.Id), 'log');
  const read = () => { try { return readFileSync(file); } catch { return Buffer.alloc(0); } };
  let data = read();
  let text = data.toString('utf8');
  if (flags.tail !== undefined && flags.tail !== 'all') {
    const n = Number(flags.tail);
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    text = n <= 0 ? '' : lines.slice(-n).map((l) => `${l}\n`).join('');
  }
  process.stdout.write(text);
  if (!flags.follow) return 0;
  let offset = data.length;
  // Follows like docker: woken by the writes to the log and by the state file's replacement (watching both
  // folders), with a slow timer only as a safety net for a missed event.
  let wake = () => undefined;
  const watchers = [containerDir(dir, c.Id), join(dir, 'containers')].map((d) => { try { return watch(d, () => wake()); } catch { return undefined; } });
  try {
    for (;;) {
      const size = existsSync(file) ? statSync(file).size : 0;
      if (size > offset) {
        data = read();
        process.stdout.write(data.subarray(offset));
        offset = data.length;
        continue;
      }
      const cur = loadContainer(dir, c.Id);
      if (!cur || !cur.State.Running) {
        // The last lines may land between the size check and the state check.
        data = read();
        if (data.length > offset) process.stdout.write(data.subarray(offset));
        return 0;
      }
      await new Promise((res) => { const t = setTimeout(res, 1000); wake = () => { clearTimeout(t); res(); }; });
    }
  } finally {
    for (const w of watchers) w?.close();
  }
}

/** `docker kill [-s SIG] REF...`: the signal (default KILL) to the container's process; it must be running. */
async function kill(dir, args) {
  const { flags, positional } = parseFlags(args, { '-s': { key: 'signal' }, '--signal': { key: 'signal' } }, 'kill');
  if (positional.length === 0) throw new Exit(1, '"docker kill" requires at least 1 argument.');
  const signal = `SIG${String(flags.signal ?? 'KILL').toUpperCase().replace(/^SIG/, '')}`;
  if (!(signal in constants.signals)) throw new Exit(1, `invalid signal: ${flags.signal}`);
  const errors = [];
  for (const ref of positional) {
    const c = findContainer(dir, ref);
    if (!c) { errors.push(`Error response from daemon: No such container: ${ref}`); continue; }
    if (!c.State.Running) { errors.push(`Error response from daemon: Cannot kill container: ${ref}: Container ${c.Id} is not running`); continue; }
    try { process.kill(c.State.Pid, signal); } catch { /* exited meanwhile */ }
    if (signal === 'SIGKILL') await waitStopped(dir, c.Id, 10_000);
    out(ref);
  }
  if (errors.length) throw new Exit(1, errors.join('\n'));
  return 0;
}

/**
 * `docker wait REF...`: blocks until each container is not running, then prints its exit code (one line per REF).
 * A container removed while waited on (`rm -f`) counts as stopped with the code it was last seen with.
 */
async function wait(dir, args) {
  const { positional } = parseFlags(args, {}, 'wait');
  if (positional.length === 0) throw new Exit(1, '"docker wait" requires at least 1 argument.');
  const errors = [];
  for (const ref of positional) {
    let c = findContainer(dir, ref);
    if (!c) { errors.push(`Error response from daemon: No such container: ${ref}`); continue; }
    while (c.State.Running || c.State.Status === 'created') {
      await sleep(100);
      const now = loadContainer(dir, c.Id);
      if (!now) break;
      c = now;
    }
    out(String(c.State.ExitCode ?? 0));
  }
  if (errors.length) throw new Exit(1, errors.join('\n'));
  return 0;
}

function killGroup(pid, signal) {
  if (!pid) return;
  try { process.kill(-pid, signal); } catch { try { process.kill(pid, signal); } catch { /* gone */ } }
}

async function waitStopped(dir, id, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const c = loadContainer(dir, id);
    if (!c || !c.State.Running) return true;
    await sleep(50);
  }
  return false;
}

/** Whether c.SupervisorPid still runs this container's supervisor (not a recycled pid). */
function isSupervisorOf(c) {
  if (processGone(c.SupervisorPid)) return false;
  try { return readFileSync(`/proc/${c.SupervisorPid}/cmdline`, 'utf8').split('\0').includes(c.Id); } catch { return false; }
}

/** Waits (bounded) until the container's supervisor, and with it the repository mirror, has exited. */
async function waitSupervisorGone(c, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!processGone(c.SupervisorPid) && Date.now() < deadline) await sleep(25);
}

async function stopOne(dir, c, timeoutS, signal = 'SIGTERM') {
  if (!c.State.Running) return;
  killGroup(c.State.Pid, signal);
  if (await waitStopped(dir, c.Id, timeoutS * 1000)) return waitSupervisorGone(c);
  killGroup(c.State.Pid, 'SIGKILL');
  if (await waitStopped(dir, c.Id, 10_000)) return waitSupervisorGone(c);
  // The supervisor is gone or stuck: record the kill ourselves and end it (it would otherwise keep mirroring).
  if (isSupervisorOf(c)) { try { process.kill(c.SupervisorPid, 'SIGKILL'); } catch { /* gone */ } }
  updateContainer(dir, c.Id, (x) => Object.assign(x.State, { Status: 'exited', Running: false, Pid: 0, ExitCode: 137, FinishedAt: new Date().toISOString() }));
}

async function stop(dir, args) {
  const { flags, positional } = parseFlags(args, { '-t': { key: 'time' }, '--time': { key: 'time' }, '--timeout': { key: 'time' }, '-s': { key: 'signal' }, '--signal': { key: 'signal' } }, 'stop');
  if (positional.length === 0) throw new Exit(1, '"docker stop" requires at least 1 argument.');
  const errors = [];
  for (const ref of positional) {
    const c = findContainer(dir, ref);
    if (!c) { errors.push(`Error response from daemon: No such container: ${ref}`); continue; }
    await stopOne(dir, c, Number(flags.time ?? 10), flags.signal ?? 'SIGTERM');
    out(ref);
  }
  if (errors.length) throw new Exit(1, errors.join('\n'));
  return 0;
}

async function rm(dir, args) {
  const { flags, positional } = parseFlags(args, { '-f': { key: 'force', bool: true }, '--force': { key: 'force', bool: true }, '-v': { key: 'volumes', bool: true } }, 'rm');
  if (positional.length === 0) throw new Exit(1, '"docker rm" requires at least 1 argument.');
  const errors = [];
  for (const ref of positional) {
    const c = findContainer(dir, ref);
    if (!c) { if (!flags.force) errors.push(`Error response from daemon: No such container: ${ref}`); continue; }
    if (c.State.Running) {
      if (!flags.force) { errors.push(`Error response from daemon: cannot remove container "${c.Name}": container is running: stop the container before removing or force remove`); continue; }
      await stopOne(dir, c, 0, 'SIGKILL');
    }
    if (pidAlive(c.SupervisorPid)) { await waitStopped(dir, c.Id, 5000); await waitSupervisorGone(c); }
    removeContainer(dir, c);
    out(ref);
  }
  if (errors.length) throw new Exit(1, errors.join('\n'));
  return 0;
}

try {
  const code = await main(process.argv.slice(2));
  process.exitCode = code ?? 0;
} catch (e) {
  if (e instanceof Exit) {
    if (e.stdout) process.stdout.write(e.stdout);
    process.stderr.write(e.stderr.endsWith('\n') ? e.stderr : `${e.stderr}\n`);
    process.exitCode = e.code;
  } else {
    process.stderr.write(`fake docker: ${e?.stack ?? e}\n`);
    process.exitCode = 1;
  }
}
