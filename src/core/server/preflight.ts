// Every check a start needs, run at once and each reported on its own — Docker installed, daemon access, the
// NVIDIA runtime, the image, the weights, the ports, GPU memory — so the user sees the whole list of what to fix
// instead of one error at a time. A check that needs the daemon is "blocked" (never "ok") while the daemon cannot
// be reached; one that cannot be known here (GPU memory without nvidia-smi) is "unknown".
import { access, constants, readdir, readFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import type { DockerCli, DockerResult } from './dockerCli';
import { imageInspectArgs, runtimesArgs, versionArgs } from './dockerArgs';
import { ServerError } from './errors';
import { planForGpu, type GpuPlanVerdict, type PlanModelConfig, type PlanSettings } from './memoryPlan';
import { CHATGLM3_FP16_MIB, gpuMemoryProblem, probeGpusWithNvidiaSmi, selectedGpus, type GpuMemory, type GpuUnknownReason, type ProbeGpus } from './gpuMemory';
import { checkPortFree } from './ports';
import type { ServerSettings } from './settings';
import { snapshotStatus } from '../weights/downloadManifest';
import { validateWeights, weightsFix } from './weights';
import { catalogModel, DEFAULT_MODEL_ID } from '../models/catalog';
import { firstUnreadable, type FileUser } from './readable';
import { hostIds, isPodman } from './runEnvironment';
import { configuredUlimits, podmanLimitsProblem, readContainersConf, readHostLimits } from './podmanLimits';

/** In the order a person fixes them (and the checklist shows them). */
export const PREFLIGHT_CHECKS = ['docker', 'daemon', 'nvidia-runtime', 'image', 'weights', 'ports', 'gpu-memory'] as const;
export type PreflightCheckId = (typeof PREFLIGHT_CHECKS)[number];

/**
 * - `warning`: likely a problem but not certain (Docker Desktop gives GPUs without listing an `nvidia` runtime;
 *   another program may free GPU memory), so it does not block a start.
 * - `blocked`: not run because a check it needs failed (`blockedBy`).
 * - `unknown`: cannot be known on this machine (`note` says why); does not block.
 * - `skipped`: the caller asked not to run it.
 */
export type CheckLevel = 'ok' | 'warning' | 'error' | 'blocked' | 'unknown' | 'skipped';

/** What a check found, for the line a person reads next to its mark. */
export interface CheckFacts {
  dockerVersion?: string;
  daemonVersion?: string;
  image?: string;
  weightsPath?: string;
  /** The weights' snapshot against the one our checks used (a newer one is used all the same). */
  weightsSnapshot?: 'tested' | 'newer';
  ports?: number[];
  bindAddress?: string;
  gpus?: GpuMemory[];
  requiredMiB?: number;
  /** How `--gpus` reaches the NVIDIA toolkit: a registered runtime, or its prestart hook alone (the usual today). */
  nvidiaVia?: 'runtime' | 'hook' | 'cdi';
  /** The memory plan's verdict for each of `gpus` (same order), when the model settings were given. */
  gpuPlans?: GpuPlanVerdict[];
}

export interface PreflightCheck {
  id: PreflightCheckId;
  level: CheckLevel;
  /** The problem of an `error` or `warning`. */
  error?: ServerError;
  /** The check that kept a `blocked` one from running. */
  blockedBy?: PreflightCheckId;
  /** Why a check is `unknown`: a code for the front ends to word, and the evidence in English (the CLI prints it). */
  unknownReason?: GpuUnknownReason;
  note?: string;
  facts?: CheckFacts;
}

export interface PreflightReport {
  /** No check is `error` or `blocked`: a start can go ahead. */
  ok: boolean;
  /** Every check of PREFLIGHT_CHECKS, in that order. */
  checks: PreflightCheck[];
  /** The first blocking error, if any (what a start throws). */
  firstError: ServerError | undefined;
}

export interface PreflightOptions {
  skip?: PreflightCheckId[];
  signal?: AbortSignal;
  /** GPU memory one model copy needs, per selected GPU (default: ChatGLM3-6B in fp16). */
  requiredGpuMiB?: number;
  /** How GPU memory is read (default: the host's nvidia-smi). */
  probeGpus?: ProbeGpus;
  /** The model settings, so the GPU memory line says what will run there (memoryPlan.ts); `copies` per GPU. */
  gpuPlan?: { settings: PlanSettings; copies: number; config?: PlanModelConfig };
  /**
   * The user the server runs as, whose read access to the weights and the repository is checked (default: this
   * host's user on Linux, as `docker run --user` makes it; null: not checked, e.g. Docker Desktop).
   */
  fileUser?: FileUser | null;
  /** Finds an executable on the PATH (default: this process's PATH); tests give their own. */
  which?: (name: string) => Promise<string | undefined>;
  /** Podman only: whether it can set its limits here (default: this host's /proc and containers.conf); tests give their own. */
  podmanLimits?: () => Promise<ServerError | undefined>;
}

type Outcome = Omit<PreflightCheck, 'id'>;

const DOCKER_TIMEOUT_MS = 30_000;

export async function runPreflight(docker: DockerCli, s: ServerSettings, opts: PreflightOptions = {}): Promise<PreflightReport> {
  const skip = new Set(opts.skip ?? []);
  const { signal } = opts;
  const guard = async (id: PreflightCheckId, fn: () => Promise<Outcome>): Promise<PreflightCheck> => {
    if (skip.has(id)) return { id, level: 'skipped' };
    try {
      return { id, ...(await fn()) };
    } catch (e) {
      const error = e instanceof ServerError ? e : new ServerError({ code: 'unknown', message: String(e), fix: 'Try again.' });
      return { id, level: 'error', error };
    }
  };

  // `docker version` answers both "is the client there" and "does the daemon answer" (its Server part).
  const version = skip.has('docker') && skip.has('daemon') ? undefined : docker.run(versionArgs(), { signal, timeoutMs: DOCKER_TIMEOUT_MS });
  const dockerCheck = guard('docker', async () => dockerInstalled(docker, await version!));
  const daemonCheck = dockerCheck.then((installed) => installed.level === 'error'
    ? guard('daemon', async () => ({ level: 'blocked', blockedBy: 'docker' }))
    : guard('daemon', async () => daemonAnswers(docker, await version!, opts.podmanLimits ?? podmanHostLimits)));
  // Dependants start as soon as the daemon answered; the independent checks run meanwhile.
  const afterDaemon = (id: PreflightCheckId, fn: () => Promise<Outcome>) => daemonCheck.then((daemon) => daemon.level === 'ok' || daemon.level === 'skipped'
    ? guard(id, fn)
    : guard(id, async () => ({ level: 'blocked', blockedBy: daemon.level === 'blocked' ? daemon.blockedBy ?? 'daemon' : 'daemon' })));
  const checks = await Promise.all([
    dockerCheck,
    daemonCheck,
    afterDaemon('nvidia-runtime', () => nvidiaRuntime(docker, opts.which ?? onPath, signal)),
    afterDaemon('image', () => imagePresent(docker, s.image, signal)),
    guard('weights', () => weights(s, opts.fileUser === undefined ? hostIds() : opts.fileUser ?? undefined)),
    guard('ports', () => ports(s)),
    guard('gpu-memory', () => gpuMemory(s, opts)),
  ]);
  const firstError = checks.find((c) => c.level === 'error')?.error;
  return { ok: !checks.some((c) => c.level === 'error' || c.level === 'blocked'), checks, firstError };
}

/** Whether a check stops a start. */
export function isBlocking(check: PreflightCheck): boolean {
  return check.level === 'error' || check.level === 'blocked';
}

async function dockerInstalled(docker: DockerCli, r: DockerResult): Promise<Outcome> {
  // A client that ran at all (even one that could not reach its daemon, or hung on it) is installed.
  if (r.canceled || (r.exitCode === undefined && !r.timedOut)) return { level: 'error', error: docker.failure(r) };
  const client = versionField(r.stdout, 'Client');
  return { level: 'ok', facts: client ? { dockerVersion: client } : {} };
}

async function daemonAnswers(docker: DockerCli, r: DockerResult, podmanLimits: () => Promise<ServerError | undefined>): Promise<Outcome> {
  if (r.exitCode !== 0) return { level: 'error', error: docker.failure(r) };
  const server = versionField(r.stdout, 'Server');
  const facts = server ? { daemonVersion: server } : {};
  // Podman answers even where it cannot start a container: its limits against this host's say so first.
  const limits = isPodman(docker.dockerPath) ? await podmanLimits() : undefined;
  return limits ? { level: 'error', error: limits, facts } : { level: 'ok', facts };
}

/** This host's limits against what podman will ask for (podmanLimits.ts). */
async function podmanHostLimits(): Promise<ServerError | undefined> {
  const host = await readHostLimits();
  return host ? podmanLimitsProblem(host, configuredUlimits(await readContainersConf())) : undefined;
}

/** Docker's `--gpus` runs this hook of the NVIDIA Container Toolkit, found on the daemon's PATH; no runtime is needed. */
const NVIDIA_HOOK = 'nvidia-container-runtime-hook';
/** Where podman (and docker 25+) read CDI specs from. */
export const CDI_SPEC_DIRS = ['/etc/cdi', '/var/run/cdi'];

async function nvidiaRuntime(docker: DockerCli, which: (name: string) => Promise<string | undefined>, signal: AbortSignal | undefined): Promise<Outcome> {
  if (isPodman(docker.dockerPath)) return podmanCdi();
  const r = await docker.run(runtimesArgs(), { signal, timeoutMs: DOCKER_TIMEOUT_MS });
  if (r.exitCode !== 0) return { level: 'error', error: docker.failure(r) };
  if (runtimesIncludeNvidia(r.stdout)) return { level: 'ok', facts: { nvidiaVia: 'runtime' } };
  // A toolkit installed the usual way registers no runtime: `--gpus` goes through its hook (a local daemon's PATH
  // is ours). Advisory otherwise: Docker Desktop (WSL 2) passes GPUs through without either; `docker run` tells.
  if (await which(NVIDIA_HOOK)) return { level: 'ok', facts: { nvidiaVia: 'hook' } };
  return {
    level: 'warning',
    error: new ServerError({
      code: 'nvidia-runtime-missing',
      message: `Docker has no "nvidia" runtime and ${NVIDIA_HOOK} is not installed: the NVIDIA Container Toolkit seems not to be installed or configured.`,
      fix: 'Install the NVIDIA Container Toolkit, run `sudo nvidia-ctk runtime configure --runtime=docker` and restart Docker.',
      detail: r.stdout,
    }),
  };
}

/** Podman has no `--gpus`: GPUs come as CDI devices (`--device nvidia.com/gpu=all`), which need the toolkit's spec. */
async function podmanCdi(): Promise<Outcome> {
  for (const dir of CDI_SPEC_DIRS) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names.filter((n) => /\.(ya?ml|json)$/.test(n))) {
      const text = await readFile(join(dir, name), 'utf8').catch(() => '');
      if (/nvidia\.com\/gpu/.test(text)) return { level: 'ok', facts: { nvidiaVia: 'cdi' } };
    }
  }
  return {
    level: 'error',
    error: new ServerError({
      code: 'nvidia-runtime-missing',
      message: `Podman gives a container GPUs through CDI, and no NVIDIA CDI spec was found in ${CDI_SPEC_DIRS.join(' or ')}.`,
      fix: 'Install the NVIDIA Container Toolkit and generate the spec: `sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml` (check with `nvidia-ctk cdi list`).',
    }),
  };
}

/** An executable of that name on this process's PATH. */
async function onPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const path = join(dir, name);
    if (await access(path, constants.X_OK).then(() => true, () => false)) return path;
  }
  return undefined;
}

async function imagePresent(docker: DockerCli, image: string, signal: AbortSignal | undefined): Promise<Outcome> {
  const r = await docker.run(imageInspectArgs(image), { signal, timeoutMs: DOCKER_TIMEOUT_MS });
  if (r.exitCode === 0) return { level: 'ok', facts: { image } };
  const e = docker.failure(r);
  // `image inspect` of a missing image prints "No such image"; anything else (daemon trouble) stays as classified.
  if (e.code !== 'unknown' && e.code !== 'image-missing') return { level: 'error', error: e };
  return {
    level: 'error',
    facts: { image },
    error: new ServerError({ code: 'image-missing', message: `The image "${image}" is not available locally.`, fix: 'Build it from triton/Dockerfile (the extension offers to) or set another image.', detail: r.stderr }),
  };
}

async function weights(s: ServerSettings, user: FileUser | undefined): Promise<Outcome> {
  const path = s.weightsPath;
  // An unknown model is the settings check's to report; the weights are checked against the default meanwhile.
  const model = catalogModel(s.model) ?? catalogModel(DEFAULT_MODEL_ID)!;
  if (!path.trim()) {
    throw new ServerError({ code: 'weights-missing', message: `No weights folder is set and the Hugging Face cache has no complete ${model.hub.repo}: ${model.displayName} has no weights here.`, fix: weightsFix(model) });
  }
  const facts = { weightsPath: path };
  try {
    await validateWeights(path, model);
  } catch (e) {
    if (e instanceof ServerError) return { level: 'error', error: e, facts };
    throw e;
  }
  // The server reads both through its mounts as `user`: a 0600 file (umask 077) fails there, not here.
  if (user) {
    for (const root of [path, s.repositoryPath].filter((p) => p.trim())) {
      const file = await firstUnreadable(root, user);
      if (file) return { level: 'error', error: unreadable(file, user), facts };
    }
  }
  const snapshot = await snapshotStatus(path, model.hub.testedCommit);
  return { level: 'ok', facts: snapshot ? { ...facts, weightsSnapshot: snapshot } : facts };
}

function unreadable(file: string, user: FileUser): ServerError {
  return new ServerError({
    code: 'files-unreadable',
    message: `The server runs as uid ${user.uid} (gid ${user.gid}) and cannot read "${file}".`,
    fix: `Make it readable to that user (its owner can run \`chmod -R a+rX "${file}"\`), then start again.`,
    file,
  });
}

async function ports(s: ServerSettings): Promise<Outcome> {
  const list = [s.httpPort, s.grpcPort, s.metricsPort];
  if (new Set(list).size !== list.length) {
    throw new ServerError({ code: 'settings-invalid', message: 'The HTTP, gRPC and metrics ports must differ.', fix: 'Give each of them its own port in the settings.' });
  }
  for (const p of list) await checkPortFree(p, s.bindAddress);
  return { level: 'ok', facts: { ports: list, bindAddress: s.bindAddress } };
}

async function gpuMemory(s: ServerSettings, opts: PreflightOptions): Promise<Outcome> {
  const requiredMiB = opts.requiredGpuMiB ?? CHATGLM3_FP16_MIB;
  // Unknown still says what the chosen model needs (the checklist names it).
  if (s.gpuIds !== 'all' && s.gpuIds.some((id) => id.startsWith('MIG-'))) {
    return { level: 'unknown', unknownReason: 'mig', note: 'nvidia-smi --query-gpu does not list the memory of MIG devices; the load shows whether the model fits.', facts: { requiredMiB } };
  }
  const probe = await (opts.probeGpus ?? probeGpusWithNvidiaSmi)(opts.signal);
  if ('unknown' in probe) return { level: 'unknown', unknownReason: probe.unknown, note: probe.note, facts: { requiredMiB } };
  const problem = gpuMemoryProblem(probe.gpus, s.gpuIds, requiredMiB);
  const facts: CheckFacts = { gpus: selectedGpus(probe.gpus, s.gpuIds).selected, requiredMiB };
  if (opts.gpuPlan) {
    const { settings, copies, config } = opts.gpuPlan;
    facts.gpuPlans = facts.gpus!.map((g) => planForGpu((g.freeMiB * 2 ** 20) / Math.max(1, copies), settings, config));
    // The plan's own verdict wins over the flat threshold: what the load will refuse is a warning here.
    const needed = Math.max(0, ...facts.gpuPlans.map((v) => (v.kind === 'too-small' ? Math.ceil(v.needed.total / 2 ** 20) * copies : 0)));
    if (needed > 0 && !problem) {
      facts.requiredMiB = needed;
      return { level: 'warning', error: gpuMemoryProblem(probe.gpus, s.gpuIds, needed), facts };
    }
  }
  return problem ? { level: 'warning', error: problem, facts } : { level: 'ok', facts };
}

/** `docker version --format '{{json .}}'` → the client's or the daemon's version. */
function versionField(stdout: string, part: 'Client' | 'Server'): string | undefined {
  try {
    const v = JSON.parse(stdout.trim().split('\n')[0] ?? '') as Record<string, { Version?: unknown } | null>;
    const version = v[part]?.Version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

/** `docker info --format '{{json .Runtimes}}'` → whether an nvidia runtime is registered. */
export function runtimesIncludeNvidia(stdout: string): boolean {
  try {
    const v: unknown = JSON.parse(stdout.trim() || 'null');
    return typeof v === 'object' && v !== null && Object.keys(v).some((k) => k.toLowerCase().includes('nvidia'));
  } catch {
    return /nvidia/i.test(stdout);
  }
}
