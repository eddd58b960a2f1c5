// team.json: what a team deployment is (replicas, ports, images, weights), the one file a person edits. Validated
// with zod; everything else in the deployment folder is rendered from it by `triton-chatglm team init`.
import { z } from 'zod';
import { DEFAULT_MODEL_ID } from '../models/catalog';
import { isModelId, MODEL_IDS } from '../models/choice';

export const TEAM_SPEC_FILE = 'team.json';

const name = z.string().regex(/^[a-z0-9][a-z0-9-]{0,30}$/, 'lower-case letters, digits and dashes (up to 31)');
const port = z.number().int().min(1).max(65535);
const hostPort = z.string().regex(/^[A-Za-z0-9.-]+:\d{1,5}$/, 'host:port');

/** A tritonserver this box runs (one GPU or a set of GPUs), published on 127.0.0.1 only. */
const localReplica = z.object({
  name,
  gpus: z.array(z.string().regex(/^[A-Za-z0-9-]+$/)).min(1),
  httpPort: port,
  grpcPort: port,
  metricsPort: port,
}).strict();

/** A tritonserver another machine runs (`triton-chatglm start --bind-address ...` there). */
const remoteReplica = z.object({ name, http: hostPort, grpc: hostPort }).strict();

export const teamSpecSchema = z.object({
  version: z.literal(1),
  name,
  /** Where the proxy listens: 127.0.0.1 unless the team opts out (0.0.0.0 or the box's address). */
  bindAddress: z.string().regex(/^[0-9A-Fa-f.:]+$/),
  httpsPort: port,
  grpcPort: port,
  /** The serving image (the one `triton-chatglm build-image` makes). */
  image: z.string().min(1),
  /** The catalog model every local replica loads (its repository entry and weights mount); a team.json from
   *  before the model choice has none and serves the default. */
  model: z.string().refine(isModelId, { message: `must be one of ${MODEL_IDS.join(', ')}` }).default(DEFAULT_MODEL_ID),
  /** The proxy image, built from deploy/team/nginx/Dockerfile (Debian's nginx). */
  proxyImage: z.string().min(1),
  /** Host folder of the checkpoint, mounted read-only into every local replica. */
  weightsPath: z.string(),
  shmSize: z.string().regex(/^\d+[bkmg]?$/i),
  /** `--ulimit memlock=-1 --ulimit stack=64M` on local replicas (a rootless daemon refuses them). */
  raiseUlimits: z.boolean(),
  /** Passive health: a replica that failed `maxFails` times is skipped for `failTimeoutS`. */
  maxFails: z.number().int().min(0).max(100),
  failTimeoutS: z.number().int().min(1).max(3600),
  /** How long an answer may stream (nginx's read/send timeouts between two chunks). */
  streamTimeoutS: z.number().int().min(10).max(86400),
  /** Extra names for the self-signed certificate (the box's DNS name or address). */
  tlsNames: z.array(z.string().regex(/^[A-Za-z0-9.:*-]+$/)),
  replicas: z.array(z.union([localReplica, remoteReplica])).min(1),
}).strict().superRefine((s, ctx) => {
  const names = new Set<string>();
  const ports = new Set<number>([s.httpsPort, s.grpcPort]);
  if (s.httpsPort === s.grpcPort) ctx.addIssue({ code: 'custom', message: 'httpsPort and grpcPort must differ', path: ['grpcPort'] });
  s.replicas.forEach((r, i) => {
    if (names.has(r.name)) ctx.addIssue({ code: 'custom', message: `replica name ${r.name} is used twice`, path: ['replicas', i, 'name'] });
    names.add(r.name);
    if ('gpus' in r) {
      for (const p of [r.httpPort, r.grpcPort, r.metricsPort]) {
        if (ports.has(p)) ctx.addIssue({ code: 'custom', message: `port ${p} is used twice`, path: ['replicas', i] });
        ports.add(p);
      }
    }
  });
});

export type TeamSpec = z.infer<typeof teamSpecSchema>;
export type TeamReplica = TeamSpec['replicas'][number];
export type LocalReplica = Extract<TeamReplica, { gpus: string[] }>;

export const isLocal = (r: TeamReplica): r is LocalReplica => 'gpus' in r;

/** The HTTP and gRPC address the proxy reaches a replica at. */
export function replicaAddress(r: TeamReplica): { http: string; grpc: string } {
  return isLocal(r) ? { http: `127.0.0.1:${r.httpPort}`, grpc: `127.0.0.1:${r.grpcPort}` } : { http: r.http, grpc: r.grpc };
}

export interface NewTeamOptions {
  name?: string;
  /** One local replica per entry (GPU ids, e.g. ["0"], ["1"]). */
  gpus?: string[][];
  /** Remote replicas as host:httpPort (gRPC at httpPort+1). */
  urls?: string[];
  bindAddress?: string;
  httpsPort?: number;
  grpcPort?: number;
  /** First port of the local replicas: replica i gets base+10i (HTTP), +1 (gRPC), +2 (metrics). */
  replicaBasePort?: number;
  image?: string;
  model?: string;
  proxyImage?: string;
  weightsPath?: string;
  tlsNames?: string[];
  raiseUlimits?: boolean;
}

export class TeamSpecError extends Error {
  override readonly name = 'TeamSpecError';
}

/** A fresh spec from `team init`'s options; the same validation as a spec read from disk. */
export function newTeamSpec(o: NewTeamOptions): TeamSpec {
  const base = o.replicaBasePort ?? 18000;
  const local = (o.gpus ?? (o.urls?.length ? [] : [['0']])).map((gpus, i) => ({
    name: `r${i}`, gpus, httpPort: base + 10 * i, grpcPort: base + 10 * i + 1, metricsPort: base + 10 * i + 2,
  }));
  const remote = (o.urls ?? []).map((u, i) => {
    const m = /^(?:https?:\/\/)?([A-Za-z0-9.-]+):(\d{1,5})\/?$/.exec(u);
    if (!m) throw new TeamSpecError(`replica URL ${u}: expected host:port or http://host:port`);
    return { name: `m${i}`, http: `${m[1]}:${m[2]}`, grpc: `${m[1]}:${Number(m[2]) + 1}` };
  });
  return parseTeamSpec({
    version: 1,
    name: o.name ?? 'team',
    bindAddress: o.bindAddress ?? '127.0.0.1',
    httpsPort: o.httpsPort ?? 8443,
    grpcPort: o.grpcPort ?? 8444,
    image: o.image ?? 'triton-chatglm:24.10',
    model: o.model ?? DEFAULT_MODEL_ID,
    proxyImage: o.proxyImage ?? 'triton-chatglm-team-proxy:1',
    weightsPath: o.weightsPath ?? '',
    shmSize: '2g',
    raiseUlimits: o.raiseUlimits ?? true,
    maxFails: 1,
    failTimeoutS: 10,
    streamTimeoutS: 3600,
    tlsNames: o.tlsNames ?? [],
    replicas: [...local, ...remote],
  });
}

/** Validates a spec (parsed JSON); the error names each wrong field. */
export function parseTeamSpec(value: unknown): TeamSpec {
  const r = teamSpecSchema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`);
  throw new TeamSpecError(`${TEAM_SPEC_FILE} is not valid:\n  ${issues.join('\n  ')}`);
}

export function formatTeamSpec(s: TeamSpec): string {
  return `${JSON.stringify(s, null, 2)}\n`;
}
