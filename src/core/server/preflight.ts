// Checks run before `docker run`, each with its own code, message and fix, so the user sees "install the NVIDIA
// Container Toolkit" instead of a docker stack trace. Later checks that depend on the daemon are skipped when it
// cannot be reached (they would only repeat the same failure).
import type { DockerCli } from './dockerCli';
import { imageInspectArgs, runtimesArgs, versionArgs } from './dockerArgs';
import { ServerError } from './errors';
import { checkPortFree } from './ports';
import type { ServerSettings } from './settings';
import { validateWeights } from './weights';

export type PreflightCheckId = 'docker' | 'nvidia-runtime' | 'image' | 'weights' | 'ports';

export interface PreflightCheck {
  id: PreflightCheckId;
  /**
   * 'warning': likely a problem but not certain (e.g. Docker Desktop gives GPUs without listing an `nvidia`
   * runtime), so it does not block the start; `docker run` reports the definite error.
   */
  level: 'ok' | 'warning' | 'error' | 'skipped';
  error?: ServerError;
}

export interface PreflightReport {
  ok: boolean;
  checks: PreflightCheck[];
  /** The first blocking error, if any. */
  firstError: ServerError | undefined;
}

export interface PreflightOptions {
  skip?: PreflightCheckId[];
  signal?: AbortSignal;
}

export async function runPreflight(docker: DockerCli, s: ServerSettings, opts: PreflightOptions = {}): Promise<PreflightReport> {
  const skip = new Set(opts.skip ?? []);
  const checks: PreflightCheck[] = [];
  const record = async (id: PreflightCheckId, fn: () => Promise<'ok' | 'warning' | ServerError>, blockedBy?: PreflightCheck) => {
    if (skip.has(id) || (blockedBy && blockedBy.level === 'error')) {
      checks.push({ id, level: 'skipped' });
      return checks[checks.length - 1];
    }
    let outcome: 'ok' | 'warning' | ServerError;
    try {
      outcome = await fn();
    } catch (e) {
      outcome = e instanceof ServerError ? e : new ServerError({ code: 'unknown', message: String(e), fix: 'Try again.' });
    }
    const check: PreflightCheck = outcome instanceof ServerError ? { id, level: 'error', error: outcome } : { id, level: outcome };
    checks.push(check);
    return check;
  };

  const daemon = await record('docker', async () => {
    const r = await docker.run(versionArgs(), { signal: opts.signal, timeoutMs: 30_000 });
    return r.exitCode === 0 ? 'ok' : docker.failure(r);
  });
  await record('nvidia-runtime', async () => {
    const r = await docker.run(runtimesArgs(), { signal: opts.signal, timeoutMs: 30_000 });
    if (r.exitCode !== 0) return docker.failure(r);
    if (runtimesIncludeNvidia(r.stdout)) return 'ok';
    return new ServerError({
      code: 'nvidia-runtime-missing',
      message: 'Docker has no "nvidia" runtime: the NVIDIA Container Toolkit seems not to be installed or configured.',
      fix: 'Install the NVIDIA Container Toolkit, run `sudo nvidia-ctk runtime configure --runtime=docker` and restart Docker.',
      detail: r.stdout,
    });
  }, daemon);
  await record('image', async () => {
    const r = await docker.run(imageInspectArgs(s.image), { signal: opts.signal, timeoutMs: 30_000 });
    if (r.exitCode === 0) return 'ok';
    const e = docker.failure(r);
    // `image inspect` of a missing image prints "No such image"; anything else (daemon trouble) stays as classified.
    return e.code === 'unknown' ? new ServerError({ code: 'image-missing', message: `The image "${s.image}" is not available locally.`, fix: 'Build it from triton/Dockerfile (the extension offers to) or set another image.', detail: r.stderr }) : withImage(e, s.image);
  }, daemon);
  await record('weights', async () => {
    await validateWeights(s.weightsPath);
    return 'ok';
  });
  await record('ports', async () => {
    for (const p of [s.httpPort, s.grpcPort, s.metricsPort]) await checkPortFree(p, s.bindAddress);
    return 'ok';
  });

  // A missing nvidia runtime is advisory (see PreflightCheck.level): downgrade it to a warning.
  for (const c of checks) if (c.id === 'nvidia-runtime' && c.level === 'error' && c.error?.code === 'nvidia-runtime-missing') c.level = 'warning';
  const firstError = checks.find((c) => c.level === 'error')?.error;
  return { ok: firstError === undefined, checks, firstError };
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

function withImage(e: ServerError, image: string): ServerError {
  if (e.code !== 'image-missing') return e;
  return new ServerError({ code: 'image-missing', message: `The image "${image}" is not available locally.`, fix: e.fix, detail: e.detail });
}
