// Lifecycle of the one Triton container this extension manages: start (or re-attach), liveness, logs, status,
// stop, restart and building the image. All docker calls go through DockerCli (argument arrays, typed errors).
import {
  ADMIN_HEADER, buildRunArgs, inspectArgs, LABELS, listManagedArgs, logsArgs, newAdminKey, rmArgs, stopArgs, waitArgs, type RunEnvironment,
} from './dockerArgs';
import { DockerCli, type DockerCliOptions, type LineStream } from './dockerCli';
import { containerExitedError, ServerError } from './errors';
import { buildImage } from './imageBuild';
import { parseInspect, type ContainerInfo } from './inspect';
import { throwIfAborted, waitForLive } from './liveness';
import { runPreflight, type PreflightOptions, type PreflightReport } from './preflight';
import { daemonFacts, runEnvironment, type UlimitsDropped } from './runEnvironment';
import { connectHost, resolveSettings, type ServerSettings } from './settings';
import { isModelId } from '../models/choice';

export interface Disposable {
  dispose(): void;
}

/** Everything a client needs to talk to a running server. */
export interface ServerHandle {
  containerId: string;
  containerName: string;
  /** e.g. http://127.0.0.1:8000 */
  url: string;
  metricsUrl: string;
  httpPort: number;
  grpcPort: number;
  metricsPort: number;
  bindAddress: string;
  /** Header name and value that unlock load/unload (restricted APIs). */
  adminHeader: typeof ADMIN_HEADER;
  adminKey: string;
  image: string;
  /** True when an already running container was found instead of starting one. */
  attached: boolean;
  /** The catalog model it was started for (its label); undefined for a container of an older version. */
  model?: string;
}

export type ServerStatus =
  | { state: 'running'; handle: ServerHandle }
  | { state: 'exited'; containerId: string; exitCode: number; logTail: string[] }
  | { state: 'absent' }
  /** A container with our name exists but is not ours: we never touch it. */
  | { state: 'foreign'; containerId: string };

export type StartStep = 'preflight' | 'removing-old' | 'running' | 'waiting-live' | 'live';

export interface StartOptions {
  /** Run the preflight checks first and throw the first blocking error (default true). */
  preflight?: boolean | PreflightOptions;
  /** Receives the whole preflight report before a blocking error is thrown (the setup checklist shows every check). */
  onPreflight?: (report: PreflightReport) => void;
  signal?: AbortSignal;
  /** Receives the container's log lines from `docker logs -f` until the container stops or the manager is disposed. */
  onLog?: (line: string) => void;
  /** Progress of the start, for a status bar / progress notification. */
  onProgress?: (step: StartStep) => void;
  livenessTimeoutMs?: number;
  /** Told when the container runs without `--ulimit` because the daemon refuses them (or would). */
  onUlimitsDropped?: (why: Exclude<UlimitsDropped, 'setting'>) => void;
}

export interface ManagerOptions extends DockerCliOptions {
  /** Default deadline for liveness after `docker run`. */
  livenessTimeoutMs?: number;
  /** Lines of log shown when the container died. */
  logTailLines?: number;
}

const DEFAULT_LIVENESS_MS = 180_000;

export class ContainerManager implements Disposable {
  readonly docker: DockerCli;
  private readonly followers = new Set<LineStream>();
  private ref: string;

  constructor(readonly settings: ServerSettings, private readonly options: ManagerOptions = {}) {
    this.docker = new DockerCli(settings.dockerPath, options);
    this.ref = settings.containerName;
  }

  preflight(opts: PreflightOptions = {}): Promise<PreflightReport> {
    return runPreflight(this.docker, this.settings, opts);
  }

  /** The container this manager works on: the configured name, or the one `attach` found by label. */
  get containerRef(): string {
    return this.ref;
  }

  /** Inspects the container we work on; undefined when there is none. */
  async inspect(signal?: AbortSignal): Promise<ContainerInfo | undefined> {
    return (await this.inspectRefs([this.ref], signal))[0];
  }

  /** Every container carrying our label, running or not (normally at most one). */
  async listManaged(signal?: AbortSignal): Promise<ContainerInfo[]> {
    const r = await this.docker.run(listManagedArgs(), { signal, timeoutMs: 30_000 });
    if (r.exitCode !== 0) throw this.docker.failure(r);
    const ids = r.stdout.split('\n').map((l) => l.trim()).filter((l) => /^[0-9a-f]{12,64}$/.test(l));
    return (await this.inspectRefs(ids, signal)).filter((c) => c.managed);
  }

  /**
   * Finds our running container (e.g. after a window reload) without starting anything: the configured name
   * first; else, by our label, a running container of ours under another name (the name setting changed while it
   * ran), which this manager then works on.
   */
  async attach(signal?: AbortSignal): Promise<ServerHandle | undefined> {
    const info = await this.inspect(signal);
    if (info?.managed && info.running) return this.handleFrom(info, true);
    if (info) return undefined;
    const other = (await this.listManaged(signal)).find((c) => c.running);
    if (!other) return undefined;
    this.ref = other.name;
    return this.handleFrom(other, true);
  }

  /** Our container by name, else a running one of ours found by label (see attach). */
  private async resolve(signal?: AbortSignal): Promise<ContainerInfo | undefined> {
    const info = await this.inspect(signal);
    if (info) return info;
    return (await this.attach(signal)) ? this.inspect(signal) : undefined;
  }

  private async inspectRefs(refs: string[], signal?: AbortSignal): Promise<ContainerInfo[]> {
    if (refs.length === 0) return [];
    const r = await this.docker.run(inspectArgs(...refs), { signal, timeoutMs: 30_000 });
    if (r.exitCode !== 0) {
      // Some refs may exist (docker prints them and exits 1); a missing one is not an error here.
      if (/No such (container|object)/i.test(r.stderr)) return r.stdout.trim() ? parseInspect(r.stdout) : [];
      throw this.docker.failure(r);
    }
    return parseInspect(r.stdout);
  }

  async status(signal?: AbortSignal): Promise<ServerStatus> {
    const info = await this.resolve(signal);
    if (!info) return { state: 'absent' };
    if (!info.managed) return { state: 'foreign', containerId: info.id };
    if (info.running) return { state: 'running', handle: this.handleFrom(info, true) };
    return { state: 'exited', containerId: info.id, exitCode: info.exitCode, logTail: await this.logTail(info.id) };
  }

  /**
   * Starts the server, or attaches to ours when it already runs (never a second container). A stopped container
   * of ours is removed first; a foreign container with our name is left alone and reported as a name conflict.
   */
  async start(opts: StartOptions = {}): Promise<ServerHandle> {
    const { signal } = opts;
    const existing = await this.resolve(signal);
    if (existing && !existing.managed) throw nameConflict(this.ref);
    if (existing?.running) {
      // Ours and running (e.g. started by another window, maybe still starting): join it, never start a second.
      const handle = this.handleFrom(existing, true);
      if (opts.onLog) this.followLogs(opts.onLog, { tail: 0 });
      await this.waitLive(handle.url, existing.id, opts);
      return handle;
    }
    if (opts.preflight !== false) {
      opts.onProgress?.('preflight');
      const report = await this.preflight({ ...(typeof opts.preflight === 'object' ? opts.preflight : {}), signal });
      opts.onPreflight?.(report);
      if (report.firstError) throw report.firstError;
    }
    throwIfAborted(signal);
    // The settings are used as configured until here (the preflight names what is missing, e.g. the weights
    // folder); what `docker run` gets must be valid.
    const settings = resolveSettings(this.settings);
    if (existing) {
      opts.onProgress?.('removing-old');
      await this.removeIfOurs();
    }

    opts.onProgress?.('running');
    this.ref = settings.containerName;
    const key = newAdminKey();
    const facts = await daemonFacts(this.docker, signal);
    const env = runEnvironment(settings, facts);
    if (facts.rootless && settings.raiseUlimits) opts.onUlimitsDropped?.('rootless');
    let containerId: string;
    try {
      containerId = await this.run(settings, key, env, signal);
    } catch (e) {
      // A daemon that may not raise limits (no CAP_SYS_RESOURCE, a lower hard limit): the server runs without them.
      if (!(e instanceof ServerError && e.code === 'ulimit-denied' && env.ulimits)) throw e;
      opts.onUlimitsDropped?.('refused');
      containerId = await this.run(settings, key, { ...env, ulimits: false }, signal);
    }
    if (opts.onLog) this.followLogs(opts.onLog);

    opts.onProgress?.('waiting-live');
    const url = `http://${connectHost(settings.bindAddress)}:${settings.httpPort}`;
    try {
      await this.waitLive(url, containerId, opts);
    } catch (e) {
      // A container that never became live would hold the GPU and the ports: remove it, unless it died on its own
      // (then it stays, so `status` and `docker logs` can still show why).
      if (!(e instanceof ServerError && e.code === 'container-exited')) await this.stop().catch(() => undefined);
      throw e;
    }
    opts.onProgress?.('live');
    const info = await this.inspect(signal);
    if (!info?.running) throw containerExitedError(info?.exitCode, await this.logTail(containerId));
    return this.handleFrom(info, false, key);
  }

  /** `docker run -d` → the container id; a failed run leaves nothing of ours behind. */
  private async run(settings: ServerSettings, key: string, env: RunEnvironment, signal: AbortSignal | undefined): Promise<string> {
    const run = await this.docker.run(buildRunArgs(settings, key, env), { signal, secret: key, timeoutMs: 120_000 });
    if (run.exitCode !== 0) {
      const error = this.docker.failure(run, key);
      // Docker creates the container before failing to start it (port taken, no GPU driver): do not leave it behind.
      if (error.code !== 'name-conflict') await this.removeIfOurs().catch(() => undefined);
      throw error;
    }
    return run.stdout.trim().split('\n').pop() ?? '';
  }

  /** Liveness with backoff; between attempts, a container that died ends the wait with its last log lines. */
  private async waitLive(url: string, containerId: string, opts: StartOptions): Promise<void> {
    await waitForLive(url, {
      deadlineMs: opts.livenessTimeoutMs ?? this.options.livenessTimeoutMs ?? DEFAULT_LIVENESS_MS,
      signal: opts.signal,
      between: async () => {
        const info = await this.inspect(opts.signal);
        if (!info) throw containerExitedError(undefined, ['The container was removed while starting.']);
        if (!info.running) throw containerExitedError(info.exitCode, await this.logTail(containerId));
      },
    });
  }

  /** `docker stop -t 40` then `docker rm`. Idempotent; never touches a container that is not ours. */
  async stop(signal?: AbortSignal): Promise<void> {
    const info = await this.resolve(signal);
    if (!info) return;
    if (!info.managed) throw nameConflict(this.ref);
    if (info.running) {
      const r = await this.docker.run(stopArgs(info.id), { signal, timeoutMs: 120_000 });
      if (r.exitCode !== 0 && !/No such container/i.test(r.stderr)) throw this.docker.failure(r);
    }
    const rm = await this.docker.run(rmArgs(info.id, true), { signal, timeoutMs: 60_000 });
    if (rm.exitCode !== 0 && !/No such container|is already in progress/i.test(rm.stderr)) throw this.docker.failure(rm);
    this.disposeFollowers();
    this.ref = this.settings.containerName;
  }

  async restart(opts: StartOptions = {}): Promise<ServerHandle> {
    await this.stop(opts.signal);
    return this.start(opts);
  }

  /** Follows the container's log (stdout and stderr) line by line; dispose kills the `docker logs` process. */
  followLogs(sink: (line: string) => void, opts: { tail?: number } = {}): Disposable {
    const stream = this.docker.stream(logsArgs(this.ref, { follow: true, tail: opts.tail }), sink);
    this.followers.add(stream);
    void stream.done.finally(() => this.followers.delete(stream));
    return { dispose: () => { stream.dispose(); this.followers.delete(stream); } };
  }

  /**
   * `docker wait`: `done` resolves when the container stops (the quickest signal there is, with one idle process),
   * or when docker itself gave up (daemon gone). Dispose kills the `docker wait` process, not the container.
   */
  watchExit(containerId: string): LineStream {
    return this.docker.stream(waitArgs(containerId), () => undefined);
  }

  /** The last lines the container wrote (stdout and stderr together). */
  async logTail(nameOrId = this.ref, lines = this.options.logTailLines ?? 40): Promise<string[]> {
    const r = await this.docker.run(logsArgs(nameOrId, { tail: lines }), { timeoutMs: 30_000 });
    const text = [r.stdout, r.stderr].filter(Boolean).join('\n');
    return text.split('\n').filter((l) => l.trim().length > 0).slice(-lines);
  }

  /** Whether the configured image exists locally. */
  async imagePresent(signal?: AbortSignal): Promise<boolean> {
    const report = await runPreflight(this.docker, this.settings, { skip: ['nvidia-runtime', 'weights', 'ports', 'gpu-memory'], signal });
    const check = report.checks.find((c) => c.id === 'image');
    if (check?.level === 'error' && check.error?.code !== 'image-missing') throw check.error;
    return check?.level === 'ok';
  }

  /** `docker build` of triton/Dockerfile into the configured image name, with its progress lines (imageBuild.ts). */
  buildImage(contextDir: string, onLine: (line: string) => void, signal?: AbortSignal): Promise<void> {
    return buildImage(this.docker, this.settings.image, contextDir, onLine, signal);
  }

  dispose(): void {
    this.disposeFollowers();
  }

  private disposeFollowers(): void {
    for (const f of this.followers) f.dispose();
    this.followers.clear();
  }

  private async removeIfOurs(): Promise<void> {
    const info = await this.inspect();
    if (info?.managed) await this.docker.run(rmArgs(info.id, true), { timeoutMs: 60_000 });
  }

  private handleFrom(info: ContainerInfo, attached: boolean, key?: string): ServerHandle {
    const ports = info.ports ?? { http: this.settings.httpPort, grpc: this.settings.grpcPort, metrics: this.settings.metricsPort };
    const host = connectHost(info.bindAddress);
    return {
      containerId: info.id,
      containerName: info.name,
      url: `http://${host}:${ports.http}`,
      metricsUrl: `http://${host}:${ports.metrics}/metrics`,
      httpPort: ports.http,
      grpcPort: ports.grpc,
      metricsPort: ports.metrics,
      bindAddress: info.bindAddress,
      adminHeader: ADMIN_HEADER,
      adminKey: key ?? info.adminKey ?? '',
      image: info.image,
      attached,
      ...(isModelId(info.labels[LABELS.model]) ? { model: info.labels[LABELS.model] } : {}),
    };
  }
}

function nameConflict(name: string): ServerError {
  return new ServerError({
    code: 'name-conflict',
    message: `A container named "${name}" exists but was not started by this extension; it is left untouched.`,
    fix: `Remove or rename it (\`docker rm -f ${name}\`), or choose another container name in the settings.`,
  });
}
