// Pure builders of docker argument arrays. They are passed to execa as arrays (never through a shell), so no value
// is ever re-parsed by a shell; the only quoting is the one docker itself requires (multi-GPU `--gpus`).
import { randomBytes } from 'node:crypto';
import { DEFAULT_MODEL_ID } from '../models/catalog';
import { chosenModel, containerWeightsDir } from '../models/choice';
import { cacheRepoOf } from '../weights/hubCache';
import type { ServerSettings } from './settings';

/** Labels that mark a container as ours and let a reloaded window recover its settings. */
export const LABELS = {
  managed: 'triton-chatglm.managed',
  httpPort: 'triton-chatglm.http-port',
  grpcPort: 'triton-chatglm.grpc-port',
  metricsPort: 'triton-chatglm.metrics-port',
  bindAddress: 'triton-chatglm.bind-address',
  weights: 'triton-chatglm.weights',
  repository: 'triton-chatglm.repository',
  /** The catalog model the container was started for (its weights are the ones mounted). */
  model: 'triton-chatglm.model',
} as const;

/** Ports tritonserver listens on inside the container. */
export const CONTAINER_PORTS = { http: 8000, grpc: 8001, metrics: 8002 } as const;
export const CONTAINER_MODELS_DIR = '/models';
/** Where the default model's plain weights folder is mounted (each model has its own: containerWeightsDir). */
export const CONTAINER_WEIGHTS_DIR = containerWeightsDir({ id: DEFAULT_MODEL_ID });
/** Where a Hugging Face cache repository folder (blobs/, snapshots/, refs/) is mounted. */
export const CONTAINER_HUB_REPO_DIR = '/weights/hub-repository';

/**
 * How the weights folder is mounted. A snapshot of the Hugging Face cache holds links into ../../blobs, which
 * would dangle if the snapshot alone were mounted: its whole repository folder is mounted read-only instead, and
 * the server is pointed at the snapshot inside it (`weightsPath`, the path config.pbtxt names).
 */
export function weightsMount(hostWeightsPath: string, model: string = DEFAULT_MODEL_ID): { source: string; target: string; weightsPath: string } {
  const cache = hostWeightsPath ? cacheRepoOf(hostWeightsPath) : undefined;
  if (cache) return { source: cache.repoDir, target: CONTAINER_HUB_REPO_DIR, weightsPath: `${CONTAINER_HUB_REPO_DIR}/${cache.snapshotRel}` };
  const target = containerWeightsDir(chosenModel(model));
  return { source: hostWeightsPath, target, weightsPath: target };
}
/** Header that unlocks the restricted APIs (model load/unload, config, shared memory, trace, logging). */
export const ADMIN_HEADER = 'x-triton-admin';
const RESTRICTED_APIS = 'model-repository,model-config,shared-memory,trace,logging';
/** Seconds docker waits after SIGTERM: Triton itself waits up to 30 s for in-flight requests. */
export const STOP_TIMEOUT_S = 40;

/** A fresh secret per container: whoever can reach the port but not docker cannot load models or rewrite configs. */
export function newAdminKey(): string {
  return randomBytes(24).toString('hex');
}

/**
 * `--gpus` value. Docker parses it as CSV, so a list with commas needs literal double quotes *inside* the value
 * (`"device=1,2"`); a single id or `all` must stay unquoted.
 */
export function gpusArg(gpuIds: ServerSettings['gpuIds']): string {
  if (gpuIds === 'all') return 'all';
  if (gpuIds.length === 1) return `device=${gpuIds[0]}`;
  return `"device=${gpuIds.join(',')}"`;
}

function publish(bindAddress: string, host: number, container: number): string {
  const addr = bindAddress.includes(':') ? `[${bindAddress}]` : bindAddress;
  return `${addr}:${host}:${container}`;
}

/** The tritonserver command line inside the container: empty server, explicit model control, admin APIs locked. */
export function tritonServerArgs(adminKey: string): string[] {
  return [
    'tritonserver',
    `--model-repository=${CONTAINER_MODELS_DIR}`,
    '--model-control-mode=explicit',
    `--http-restricted-api=${RESTRICTED_APIS}:${ADMIN_HEADER}=${adminKey}`,
    // The gRPC port is published too; without this its repository API (load with arbitrary config) would be open.
    `--grpc-restricted-protocol=${RESTRICTED_APIS}:${ADMIN_HEADER}=${adminKey}`,
    '--log-verbose=0',
  ];
}

/**
 * What `docker run` adapts to on this host and daemon (containerManager.ts finds it out; the builders stay pure).
 * - `user`: `--user` value. The NGC image runs as uid 1000, which cannot read a host user's 0600 weights or a
 *   repository rendered under `umask 077`; running as the host user makes "readable by me" mean "readable by the
 *   server" (what the preflight checks). Undefined: the image's own user (Docker Desktop: no host uid applies).
 * - `ulimits`: pass `--ulimit memlock/stack` (a rootless daemon, or one without the privilege, refuses them).
 * - `gpuFlag`: docker's `--gpus`, or CDI devices (`--device nvidia.com/gpu=...`) for podman, which has no `--gpus`.
 */
export interface RunEnvironment {
  user?: string;
  ulimits: boolean;
  gpuFlag?: 'gpus' | 'cdi';
}

/** Host user → `--user`: Linux only; under a rootless daemon container root *is* the host user (user namespace). */
export function containerUser(platform: NodeJS.Platform, ids: { uid: number; gid: number } | undefined, rootless: boolean): string | undefined {
  if (platform !== 'linux' || !ids) return undefined;
  return rootless ? '0:0' : `${ids.uid}:${ids.gid}`;
}

/** CDI device names of the NVIDIA toolkit's spec (`nvidia-ctk cdi generate`): `nvidia.com/gpu=all`, `=0`, `=GPU-…`. */
export function cdiDevices(gpuIds: ServerSettings['gpuIds']): string[] {
  return gpuIds === 'all' ? ['nvidia.com/gpu=all'] : gpuIds.map((id) => `nvidia.com/gpu=${id}`);
}

/** `docker run` for our container. No startup model: the extension loads it explicitly (load blocks, start must not). */
export function buildRunArgs(s: ServerSettings, adminKey: string, env: RunEnvironment = { ulimits: s.raiseUlimits }): string[] {
  const weights = weightsMount(s.weightsPath, s.model);
  const gpus = env.gpuFlag === 'cdi' ? cdiDevices(s.gpuIds).flatMap((d) => ['--device', d]) : ['--gpus', gpusArg(s.gpuIds)];
  const args = [
    'run', '-d',
    '--name', s.containerName,
    // Never let `docker run` start a silent multi-GB pull: a missing image is reported and built/pulled explicitly.
    '--pull', 'never',
    '--label', `${LABELS.managed}=1`,
    '--label', `${LABELS.httpPort}=${s.httpPort}`,
    '--label', `${LABELS.grpcPort}=${s.grpcPort}`,
    '--label', `${LABELS.metricsPort}=${s.metricsPort}`,
    '--label', `${LABELS.bindAddress}=${s.bindAddress}`,
    '--label', `${LABELS.weights}=${s.weightsPath}`,
    '--label', `${LABELS.repository}=${s.repositoryPath}`,
    '--label', `${LABELS.model}=${s.model}`,
    ...gpus,
    '--shm-size', s.shmSize,
    ...(env.ulimits ? ['--ulimit', 'memlock=-1', '--ulimit', 'stack=67108864'] : []),
    // Another user than the image's has no home there: Python and the hub libraries need a writable one.
    ...(env.user ? ['--user', env.user, '-e', 'HOME=/tmp'] : []),
    '-p', publish(s.bindAddress, s.httpPort, CONTAINER_PORTS.http),
    '-p', publish(s.bindAddress, s.grpcPort, CONTAINER_PORTS.grpc),
    '-p', publish(s.bindAddress, s.metricsPort, CONTAINER_PORTS.metrics),
    '-v', `${s.repositoryPath}:${CONTAINER_MODELS_DIR}:ro`,
    '-v', `${weights.source}:${weights.target}:ro`,
    '-e', 'HF_HUB_OFFLINE=1',
    '-e', 'TRANSFORMERS_OFFLINE=1',
    '-e', 'HF_HOME=/tmp/hf',
    '-e', 'TOKENIZERS_PARALLELISM=false',
  ];
  for (const [k, v] of Object.entries(s.extraEnv)) args.push('-e', `${k}=${v}`);
  args.push(s.image, ...tritonServerArgs(adminKey));
  return args;
}

export function stopArgs(nameOrId: string, timeoutS = STOP_TIMEOUT_S): string[] {
  return ['stop', '-t', String(timeoutS), nameOrId];
}

export function rmArgs(nameOrId: string, force = false): string[] {
  return force ? ['rm', '-f', nameOrId] : ['rm', nameOrId];
}

export function inspectArgs(...namesOrIds: string[]): string[] {
  return ['container', 'inspect', ...namesOrIds];
}

/**
 * The ids of all containers (running or not) that carry our label, one per line. `{{.ID}}` reads the same in
 * docker and podman; their `{{json .}}` differ (podman prints one pretty-printed array with "Id").
 */
export function listManagedArgs(): string[] {
  return ['ps', '-a', '--no-trunc', '--filter', `label=${LABELS.managed}=1`, '--format', '{{.ID}}'];
}

export function logsArgs(nameOrId: string, opts: { follow?: boolean; tail?: number } = {}): string[] {
  const args = ['logs'];
  if (opts.follow) args.push('-f');
  if (opts.tail !== undefined) args.push('--tail', String(opts.tail));
  args.push(nameOrId);
  return args;
}

/** Blocks until the container stops; prints its exit code. */
export function waitArgs(nameOrId: string): string[] {
  return ['wait', nameOrId];
}

export function imageInspectArgs(image: string): string[] {
  return ['image', 'inspect', '--format', '{{.Id}}', image];
}

export function runtimesArgs(): string[] {
  return ['info', '--format', '{{json .Runtimes}}'];
}

/** The daemon's security options (`name=rootless` under rootless Docker); podman says it in its own field. */
export function securityOptionsArgs(podman = false): string[] {
  return ['info', '--format', podman ? '{{json .Host.Security.Rootless}}' : '{{json .SecurityOptions}}'];
}

/** Exits 0 only when the buildx plugin (BuildKit's client) is installed. */
export function buildxVersionArgs(): string[] {
  return ['buildx', 'version'];
}

export function versionArgs(): string[] {
  return ['version', '--format', '{{json .}}'];
}

/** BuildKit (through buildx) or the legacy builder (docker.io without the docker-buildx plugin). */
export type ImageBuilder = 'buildkit' | 'legacy';

/**
 * `docker build`. `--progress` exists only with BuildKit: the legacy builder (and a 20.10 client whose daemon
 * defaults to it) says "unknown flag: --progress". The builder is chosen explicitly (buildEnv) so the flag matches.
 */
export function buildImageArgs(image: string, contextDir: string, builder: ImageBuilder = 'buildkit'): string[] {
  return builder === 'buildkit' ? ['build', '--progress', 'plain', '-t', image, contextDir] : ['build', '-t', image, contextDir];
}

/** DOCKER_BUILDKIT for the chosen builder (a user's DOCKER_BUILDKIT=1 without buildx would fail the build). */
export function buildEnv(builder: ImageBuilder): Record<string, string> {
  return { DOCKER_BUILDKIT: builder === 'buildkit' ? '1' : '0' };
}

/** Every occurrence of the admin key replaced, for the command lines we log or show. */
export function redact(text: string, secret: string): string {
  return secret ? text.split(secret).join('<redacted>') : text;
}

/** A readable (and key-free) rendering of a docker call for logs; not meant to be pasted into a shell verbatim. */
export function formatCommand(dockerPath: string, args: readonly string[], secret = ''): string {
  const quote = (a: string) => (/^[A-Za-z0-9_./:=@,+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  return redact([dockerPath, ...args].map(quote).join(' '), secret);
}
