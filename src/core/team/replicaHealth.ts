// The replicas' health as the team proxy sees it: GET /team/replicas lists them, GET /team/replicas/<name>/ready
// asks each one's readiness from the proxy's side (Debian's nginx cannot show its own upstream state). Both need a
// key. The list is validated before a name is used in a path.
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

export async function fetchReplicaHealth(baseUrl: string, key: string, ca?: string, timeoutMs = 5_000): Promise<ReplicaHealth[]> {
  const dispatcher = new Agent({ connect: { ...(ca ? { ca } : {}), rejectUnauthorized: true }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const get = (path: string) => request(`${baseUrl.replace(/\/+$/, '')}${path}`, { dispatcher, headers: { authorization: `Bearer ${key}` } });
  try {
    const list = await get('/team/replicas');
    const text = await list.body.text();
    if (list.statusCode !== 200) throw new Error(`the team proxy answered ${list.statusCode} for /team/replicas: ${text.slice(0, 300)}`);
    const doc = replicasDoc.parse(JSON.parse(text));
    return await Promise.all(doc.replicas.map(async (r) => {
      const res = await get(`/team/replicas/${r.name}/ready`);
      await res.body.dump();
      return { name: r.name, ready: res.statusCode === 200, status: res.statusCode };
    }));
  } finally {
    await dispatcher.close();
  }
}
