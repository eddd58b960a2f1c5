// What `docker run` must adapt to on this host and daemon (see RunEnvironment in dockerArgs.ts): the user the
// server runs as, whether the daemon lets the container raise its limits, and how GPUs are requested.
import { basename } from 'node:path';
import { containerUser, securityOptionsArgs, type RunEnvironment } from './dockerArgs';
import type { DockerCli } from './dockerCli';
import type { ServerSettings } from './settings';

/** Podman's docker-compatible CLI: no `--gpus` (GPUs come through CDI), and its own `info` layout. */
export function isPodman(dockerPath: string): boolean {
  return /^podman(\.exe)?$/i.test(basename(dockerPath.replace(/\\/g, '/')));
}

/** `docker info` security options → rootless? (podman: `.Host.Security.Rootless`). Unknown counts as not rootless. */
export function parseRootless(stdout: string, podman: boolean): boolean {
  try {
    const v: unknown = JSON.parse(stdout.trim() || 'null');
    if (podman) return v === true;
    return Array.isArray(v) && v.some((o) => typeof o === 'string' && o.split(',').includes('name=rootless'));
  } catch {
    return false;
  }
}

/** The host user's ids, where a host uid means something to the daemon (Linux). */
export function hostIds(): { uid: number; gid: number } | undefined {
  return process.platform === 'linux' && process.getuid && process.getgid ? { uid: process.getuid(), gid: process.getgid() } : undefined;
}

export interface DaemonFacts {
  rootless: boolean;
  podman: boolean;
}

export async function daemonFacts(docker: DockerCli, signal?: AbortSignal): Promise<DaemonFacts> {
  const podman = isPodman(docker.dockerPath);
  const r = await docker.run(securityOptionsArgs(podman), { signal, timeoutMs: 30_000 });
  return { podman, rootless: r.exitCode === 0 && parseRootless(r.stdout, podman) };
}

/** Why the run leaves out `--ulimit` (undefined: it passes them). */
export type UlimitsDropped = 'setting' | 'rootless' | 'refused';

export function runEnvironment(s: ServerSettings, facts: DaemonFacts, ids = hostIds(), platform: NodeJS.Platform = process.platform): RunEnvironment {
  return {
    user: containerUser(platform, ids, facts.rootless),
    // A rootless daemon cannot raise memlock above the user's own limit: asking fails every start.
    ulimits: s.raiseUlimits && !facts.rootless,
    gpuFlag: facts.podman ? 'cdi' : 'gpus',
  };
}
