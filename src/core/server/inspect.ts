// Reads `docker container inspect` output into what the extension needs to re-attach after a window reload.
import { ADMIN_HEADER, CONTAINER_PORTS, LABELS } from './dockerArgs';

export type ContainerState = 'running' | 'exited' | 'created' | 'restarting' | 'paused' | 'dead' | 'removing';

export interface ContainerInfo {
  id: string;
  /** Without docker's leading "/". */
  name: string;
  state: ContainerState;
  running: boolean;
  exitCode: number;
  pid: number;
  image: string;
  labels: Record<string, string>;
  /** Carries our `triton-chatglm.managed=1` label. */
  managed: boolean;
  /** Host ports, from the port bindings (labels as a fallback). */
  ports: { http: number; grpc: number; metrics: number } | undefined;
  bindAddress: string;
  /**
   * The restricted-API key, recovered from the container's command line. Storing it there is acceptable: anyone
   * who can run `docker inspect` controls the daemon (and so the container) anyway; the key only keeps processes
   * that can reach the port but not docker from loading models.
   */
  adminKey: string | undefined;
}

interface RawInspect {
  Id?: string;
  Name?: string;
  Args?: unknown;
  State?: { Status?: string; Running?: boolean; ExitCode?: number; Pid?: number };
  Config?: { Labels?: Record<string, string> | null; Image?: string; Cmd?: unknown };
  HostConfig?: { PortBindings?: Record<string, { HostIp?: string; HostPort?: string }[] | null> | null };
}

/** Parses docker's JSON array; returns one entry per container. Throws on text that is not docker's output. */
export function parseInspect(stdout: string): ContainerInfo[] {
  const raw: unknown = JSON.parse(stdout);
  if (!Array.isArray(raw)) throw new Error('docker inspect did not return a JSON array');
  return raw.map((r) => toInfo(r as RawInspect));
}

function toInfo(r: RawInspect): ContainerInfo {
  const labels = r.Config?.Labels ?? {};
  const status = (r.State?.Status ?? (r.State?.Running ? 'running' : 'exited')) as ContainerState;
  const binding = (containerPort: number) => r.HostConfig?.PortBindings?.[`${containerPort}/tcp`]?.[0];
  const hostPort = (containerPort: number, label: string) => {
    const n = Number(binding(containerPort)?.HostPort || labels[label]);
    return Number.isInteger(n) && n > 0 ? n : undefined;
  };
  const http = hostPort(CONTAINER_PORTS.http, LABELS.httpPort);
  const grpc = hostPort(CONTAINER_PORTS.grpc, LABELS.grpcPort);
  const metrics = hostPort(CONTAINER_PORTS.metrics, LABELS.metricsPort);
  const args = [...stringArray(r.Args), ...stringArray(r.Config?.Cmd)];
  return {
    id: r.Id ?? '',
    name: (r.Name ?? '').replace(/^\//, ''),
    state: status,
    running: r.State?.Running === true,
    exitCode: r.State?.ExitCode ?? 0,
    pid: r.State?.Pid ?? 0,
    image: r.Config?.Image ?? '',
    labels,
    managed: labels[LABELS.managed] === '1',
    ports: http && grpc && metrics ? { http, grpc, metrics } : undefined,
    bindAddress: binding(CONTAINER_PORTS.http)?.HostIp || labels[LABELS.bindAddress] || '127.0.0.1',
    adminKey: adminKeyFromArgs(args),
  };
}

export function adminKeyFromArgs(args: readonly string[]): string | undefined {
  const marker = `:${ADMIN_HEADER}=`;
  for (const a of args) {
    if (!a.startsWith('--http-restricted-api=')) continue;
    const i = a.lastIndexOf(marker);
    if (i >= 0) return a.slice(i + marker.length);
  }
  return undefined;
}

function stringArray(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}
