// The replicas' health as the team proxy sees it: GET /team/replicas lists them, GET /team/replicas/<name>/ready
// asks each one's readiness from the proxy's side (Debian's nginx cannot show its own upstream state). Both need a
// key. The list is validated before a name is used in a path. The CLI (`team status`) asks with its own agent;
// Server Status asks through the extension's Triton client (its key and pinned CA), with `replicaHealthVia`.
import { Agent, request } from 'undici';
import { z } from 'zod';

const replicasDoc = z.object({
  replicas: z.array(z.object({ name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,30}$/), health: z.string() })).max(256),
});

export interface ReplicaHealth {
  name: string;
  ready: boolean;
  /** The proxy's HTTP status for the replica's readiness (200 ready; 502 unreachable; 503 loading). */
  status: number;
}

/** A GET of a path on the team server: its status and body text. */
export type TeamGet = (path: string) => Promise<{ status: number; text: string }>;

/** Thrown when the server has no replica list (not a team proxy, or the key was refused): `status` says which. */
export class NoReplicaList extends Error {
  constructor(readonly status: number, text: string) {
    super(`the team proxy answered ${status} for /team/replicas: ${text.slice(0, 300)}`);
  }
}

export async function replicaHealthVia(get: TeamGet): Promise<ReplicaHealth[]> {
  const list = await get('/team/replicas');
  if (list.status !== 200) throw new NoReplicaList(list.status, list.text);
  const doc = replicasDoc.parse(JSON.parse(list.text));
  return Promise.all(doc.replicas.map(async (r) => {
    const res = await get(`/team/replicas/${r.name}/ready`);
    return { name: r.name, ready: res.status === 200, status: res.status };
  }));
}

export async function fetchReplicaHealth(baseUrl: string, key: string, ca?: string, timeoutMs = 5_000): Promise<ReplicaHealth[]> {
  const dispatcher = new Agent({ connect: { ...(ca ? { ca } : {}), rejectUnauthorized: true }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  try {
    return await replicaHealthVia(async (path) => {
      const res = await request(`${baseUrl.replace(/\/+$/, '')}${path}`, { dispatcher, headers: { authorization: `Bearer ${key}` } });
      return { status: res.statusCode, text: await res.body.text() };
    });
  } finally {
    await dispatcher.close();
  }
}
