// Rootful podman asks the OCI runtime for its own default limits — open files 1048576, processes 4194304 — unless
// containers.conf sets `default_ulimits`. Raising a hard limit takes CAP_SYS_RESOURCE, which some hosts do not give
// root (sandboxes, podman inside a container): every `podman run` then fails with "error setting rlimit type 7:
// operation not permitted". The preflight reads this host's limits and capabilities and names that before a start.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ServerError } from './errors';

/** The limits rootful podman 4.x gives a container when containers.conf says nothing (its `default_ulimits`). */
export const PODMAN_ROOTFUL_LIMITS = { nofile: 1_048_576, nproc: 4_194_304 } as const;
export type PodmanLimit = keyof typeof PODMAN_ROOTFUL_LIMITS;
/** runc's rlimit numbers in its error ("error setting rlimit type 7"). */
const RLIMIT_TYPES: Record<PodmanLimit, number> = { nofile: 7, nproc: 6 };

/** What decides whether podman's limits can be set here (Linux; read from /proc). */
export interface HostLimits {
  uid: number;
  /** CAP_SYS_RESOURCE in this process's effective set (podman runs as our child, with the same set). */
  canRaise: boolean;
  hard: Record<PodmanLimit, number>;
  /** kernel.pid_max: podman's runtime could not set a process limit above it here. */
  pidMax?: number;
}

/** Where podman reads containers.conf, lowest precedence first (a later file's `default_ulimits` wins). */
export const CONTAINERS_CONF_FILES = ['/usr/share/containers/containers.conf', '/etc/containers/containers.conf'];
const CONTAINERS_CONF_DIR = '/etc/containers/containers.conf.d';

/** `default_ulimits = ["nofile=20000:20000", ...]` of containers.conf texts (later texts win): hard limit per name. */
export function configuredUlimits(texts: readonly string[]): Partial<Record<PodmanLimit, number>> {
  let found: Partial<Record<PodmanLimit, number>> | undefined;
  for (const text of texts) {
    const list = /^\s*default_ulimits\s*=\s*\[([^\]]*)\]/m.exec(text.replace(/#.*$/gm, ''))?.[1];
    if (list === undefined) continue;
    found = {};
    for (const [, name, soft, hard] of list.matchAll(/"\s*(nofile|nproc)\s*=\s*(-?\d+)(?::(-?\d+))?\s*"/g)) {
      found[name as PodmanLimit] = Number(hard ?? soft);
    }
  }
  return found ?? {};
}

/**
 * The problem podman will meet here, or undefined: a rootful podman (rootless podman keeps the user's own limits)
 * asking for a hard limit above this host's while it may not raise limits.
 */
export function podmanLimitsProblem(host: HostLimits, configured: Partial<Record<PodmanLimit, number>>): ServerError | undefined {
  if (host.uid !== 0 || host.canRaise) return undefined;
  const too = (Object.keys(PODMAN_ROOTFUL_LIMITS) as PodmanLimit[]).filter((name) => {
    const asked = configured[name] ?? PODMAN_ROOTFUL_LIMITS[name];
    return asked < 0 || asked > host.hard[name];
  });
  if (too.length === 0) return undefined;
  const asked = too.map((name) => `${name} ${configured[name] ?? PODMAN_ROOTFUL_LIMITS[name]} > ${host.hard[name]}`).join(', ');
  const fit = (name: PodmanLimit) => Math.min(host.hard[name], name === 'nproc' && host.pidMax ? host.pidMax : Infinity);
  const suggestion = `default_ulimits = [${(Object.keys(PODMAN_ROOTFUL_LIMITS) as PodmanLimit[]).map((name) => `"${name}=${fit(name)}:${fit(name)}"`).join(', ')}]`;
  const from = too.every((name) => configured[name] === undefined) ? 'its defaults' : 'containers.conf';
  return new ServerError({
    code: 'engine-limits',
    message: `Podman cannot start containers here: it asks for higher limits than this host's hard limits (${asked}; ${from}), and root on this host may not raise limits (no CAP_SYS_RESOURCE), so every podman run fails with "error setting rlimit type ${RLIMIT_TYPES[too[0]!]}: operation not permitted".`,
    fix: `Set podman's limits to what this host allows in /etc/containers/containers.conf, section [containers]: ${suggestion}; or use Docker.`,
    detail: asked,
    suggestion,
  });
}

/** This host's facts for podmanLimitsProblem (undefined off Linux or when /proc cannot be read). */
export async function readHostLimits(): Promise<HostLimits | undefined> {
  if (process.platform !== 'linux' || !process.getuid) return undefined;
  try {
    const [status, limits, pidMax] = await Promise.all([
      readFile('/proc/self/status', 'utf8'), readFile('/proc/self/limits', 'utf8'), readFile('/proc/sys/kernel/pid_max', 'utf8').catch(() => ''),
    ]);
    const capEff = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
    const hard = (label: string) => {
      const v = new RegExp(`^${label}\\s+\\S+\\s+(\\S+)`, 'm').exec(limits)?.[1];
      return v === undefined || v === 'unlimited' ? Infinity : Number(v);
    };
    if (!capEff) return undefined;
    return {
      uid: process.getuid(),
      canRaise: (BigInt(`0x${capEff}`) >> 24n & 1n) === 1n, // CAP_SYS_RESOURCE is capability 24
      hard: { nofile: hard('Max open files'), nproc: hard('Max processes') },
      ...(Number(pidMax) > 0 ? { pidMax: Number(pidMax) } : {}),
    };
  } catch {
    return undefined;
  }
}

/** The containers.conf texts podman reads ($CONTAINERS_CONF alone when set, as podman does). */
export async function readContainersConf(env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const dropIns = await readdir(CONTAINERS_CONF_DIR).then((names) => names.filter((n) => n.endsWith('.conf')).sort().map((n) => join(CONTAINERS_CONF_DIR, n)), () => [] as string[]);
  const files = env.CONTAINERS_CONF ? [env.CONTAINERS_CONF] : [...CONTAINERS_CONF_FILES, ...dropIns];
  return (await Promise.all(files.map((f) => readFile(f, 'utf8').catch(() => '')))).filter(Boolean);
}
