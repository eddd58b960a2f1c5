// The team server (docs/TEAM.md) on the real Docker Engine of the docker test stage: `triton-chatglm team` with two
// replicas (CPU serving image, tiny engine paced like a GPU step: TINY_ENGINE_STEP_DELAY_MS=20, one BLAS thread, so
// the two servers wait on their step clocks rather than compete for the 2 cores) behind Debian's nginx, and a second
// proxy whose only replica is the first one (a `host:port` replica). Each round runs 16 concurrent streams three
// ways, in rotating order: through the 2-replica proxy, through the 1-replica proxy, straight to that replica.
//   team_scaling_2_replicas = tokens/s (2 replicas, proxy) ÷ tokens/s (1 replica, proxy)   target ≥ 1.7
//   proxy_stream_overhead   = tokens/s (1 replica, proxy) ÷ tokens/s (1 replica, direct)   target ≥ 0.95
// Median of the paired rounds' ratios, min and max kept. Needs root (the private dockerd); not a part of
// run-all.mjs: its figures are recorded by hand in bench/README.md.
// Usage: node --import tsx bench/team.ts --out=<file> [--rounds=5] [--tokens=64]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_MODEL_ID as MODEL_NAME } from '../src/core/models/catalog';
import { streamChat, TritonClient } from '../src/core/triton';
import { freePort } from '../test/fake-docker/harness';
import { buildCli, cli, makeWeights, realDocker } from '../test/docker/harness';
import { readCliArgs } from './lib/cli-args';

const STREAMS = 16;

function figure(runs: number[]) {
  const sorted = [...runs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return { value: r(median), median_of: runs.length, min: r(sorted[0]!), max: r(sorted.at(-1)!), runs: runs.map(r) };
}

/** tokens/s of STREAMS concurrent answers through `client`. */
async function tokensPerSecond(client: TritonClient, tokens: number): Promise<number> {
  const t0 = performance.now();
  const counts = await Promise.all(Array.from({ length: STREAMS }, async (_, i) => {
    let n = 0;
    for await (const e of streamChat(client, MODEL_NAME, { prompt: `stream ${i}`, history: [], maxNewTokens: tokens })) {
      if (e.type === 'final') n = e.completionTokens;
    }
    return n;
  }));
  return counts.reduce((a, b) => a + b, 0) / ((performance.now() - t0) / 1000);
}

async function main(): Promise<void> {
  const args = readCliArgs();
  const out = args.get('out');
  if (!out) throw new Error('--out=<file> is required');
  const rounds = Number(args.get('rounds') ?? 5);
  const tokens = Number(args.get('tokens') ?? 64);
  await buildCli();
  const rd = await realDocker();
  const work = mkdtempSync(join(tmpdir(), 'bench-team-'));
  const daemon = (await import(pathToFileURL(join(__dirname, '../test/docker/daemon.mjs')).href)) as { stateDir(): string };
  const proxyImage = (await import(pathToFileURL(join(__dirname, '../test/docker/proxy-image.mjs')).href)) as { ensureProxyBase(d: unknown, s: string): string };
  const proxyBase = proxyImage.ensureProxyBase({ path: rd.dockerPath, env: rd.env }, daemon.stateDir());
  const dirs = { two: join(work, 'two'), one: join(work, 'one') };
  const team = async (dir: string, ...a: string[]) => {
    const r = await cli(['team', ...a, '--dir', dir, '--docker', rd.dockerPath], rd.env, work);
    if (r.code !== 0) throw new Error(`team ${a.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const base = 30_000 + Math.floor(Math.random() * 10_000);
  const ports = { two: await freePort(), one: await freePort() };
  try {
    const weights = makeWeights(work);
    await team(dirs.two, 'init', '--name', 'bench2', '--gpus', '0,0', '--port', String(ports.two), '--grpc-port', String(await freePort()),
      '--replica-port', String(base), '--image', rd.image, '--proxy-image', 'triton-chatglm-team-proxy-test:latest', '--weights', weights, '--no-ulimits');
    await team(dirs.one, 'init', '--name', 'bench1', '--url', `127.0.0.1:${base}`, '--port', String(ports.one), '--grpc-port', String(await freePort()),
      '--proxy-image', 'triton-chatglm-team-proxy-test:latest');
    const keys = { two: (await team(dirs.two, 'keys', 'add', 'bench')).trim(), one: (await team(dirs.one, 'keys', 'add', 'bench')).trim() };
    await team(dirs.two, 'up', '--proxy-base', proxyBase, '--build-proxy');
    await team(dirs.one, 'up');
    const client = (url: string, key?: string, ca?: string) => new TritonClient({
      baseUrl: url, connections: 64, ...(ca ? { ca } : {}), headers: key ? { authorization: `Bearer ${key}` } : {},
    });
    const clients = {
      two: client(`https://127.0.0.1:${ports.two}`, keys.two, readFileSync(join(dirs.two, 'nginx/tls/cert.pem'), 'utf8')),
      one: client(`https://127.0.0.1:${ports.one}`, keys.one, readFileSync(join(dirs.one, 'nginx/tls/cert.pem'), 'utf8')),
      direct: client(`http://127.0.0.1:${base}`),
    };
    for (let i = 0; ; i++) {
      if (await clients.two.isModelReady(MODEL_NAME).catch(() => false) && await client(`http://127.0.0.1:${base + 10}`).isModelReady(MODEL_NAME).catch(() => false)) break;
      if (i > 600) throw new Error('the replicas did not become ready');
      await new Promise((r) => setTimeout(r, 500));
    }
    const load = [loadavg()];
    // Warm-up, then paired rounds in rotating order.
    for (const c of Object.values(clients)) await tokensPerSecond(c, 8);
    const raw: Record<'two' | 'one' | 'direct', number[]> = { two: [], one: [], direct: [] };
    // How each 2-replica round's streams were spread (from the proxy's access log): with 8 rows per replica, any
    // split other than 8/8 leaves a stream waiting for a second wave on one replica.
    const splits: string[] = [];
    const accessLog = join(dirs.two, 'logs/access.log');
    const streamsLogged = () => readFileSync(accessLog, 'utf8').trim().split('\n')
      .map((l) => JSON.parse(l) as { path: string; replica?: string }).filter((l) => l.path.endsWith('/generate_stream'));
    const order: (keyof typeof raw)[] = ['two', 'one', 'direct'];
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < order.length; k++) {
        const which = order[(k + r) % order.length]!;
        const logged = which === 'two' ? streamsLogged().length : 0;
        raw[which].push(await tokensPerSecond(clients[which], tokens));
        if (which === 'two') {
          // nginx writes a line when it finalises the request, a moment after the answer.
          for (let i = 0; i < 50 && streamsLogged().length < logged + STREAMS; i++) await new Promise((res) => setTimeout(res, 100));
          const per = new Map<string, number>();
          for (const l of streamsLogged().slice(logged)) per.set(l.replica ?? '?', (per.get(l.replica ?? '?') ?? 0) + 1);
          splits.push([...per.values()].sort((a, b) => b - a).join('/'));
        }
      }
    }
    load.push(loadavg());
    const scaling = figure(raw.two.map((v, i) => v / raw.one[i]!));
    const overhead = figure(raw.one.map((v, i) => v / raw.direct[i]!));
    const result = {
      team_scaling_2_replicas: { ...scaling, target: '>= 1.7', met: scaling.value >= 1.7 },
      proxy_stream_overhead: { ...overhead, target: '>= 0.95', met: overhead.value >= 0.95 },
      replica_split_two: splits,
      tokens_per_s: { two_replicas_proxy: figure(raw.two), one_replica_proxy: figure(raw.one), one_replica_direct: figure(raw.direct) },
      settings: { streams: STREAMS, max_new_tokens: tokens, rounds, step_delay_ms: 20, max_active_rows_per_replica: 8 },
      load_average: load,
    };
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify({ team_scaling_2_replicas: scaling.value, proxy_stream_overhead: overhead.value }));
  } finally {
    await team(dirs.one, 'down').catch(() => undefined);
    await team(dirs.two, 'down').catch(() => undefined);
    await rd.release();
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (e: unknown) => { console.error(e); process.exit(1); });
