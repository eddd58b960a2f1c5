// Container start and stop through the built CLI, on the real Docker Engine of the docker test stage (a private
// dockerd and the CPU serving image, test/docker/README.md) and on the fake docker (test/fake-docker), in the
// same run, rounds interleaved (real, fake, real, fake …):
//   container_start_s = wall time of `triton-chatglm start` (docker run + the server answering /v2/health/live)
//   container_stop_s  = wall time of `triton-chatglm stop` (docker stop -t 40 + rm)
// Each figure is the median of the rounds with min and max. Needs root (the private dockerd); not a part of
// run-all.mjs (whose smoke mode runs in the bench stage without a daemon): its figures are recorded by hand in
// bench/README.md. Usage: node --import tsx bench/container.ts --out=<file> [--rounds=3]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFakeDocker, freePort, makeFakeWeights } from '../test/fake-docker/harness';
import { buildCli, cli, makeWeights, realDocker } from '../test/docker/harness';
import { readCliArgs } from './lib/cli-args';

interface Figure { value: number; median_of: number; min: number; max: number; runs: number[] }

function figure(runs: number[]): Figure {
  const sorted = [...runs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const r = (x: number) => Math.round(x * 100) / 100;
  return { value: r(median), median_of: runs.length, min: r(sorted[0]), max: r(sorted[sorted.length - 1]), runs: runs.map(r) };
}

async function timed(run: () => Promise<{ code: number; stderr: string }>, what: string): Promise<number> {
  const t0 = performance.now();
  const r = await run();
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}): ${r.stderr.slice(-1000)}`);
  return (performance.now() - t0) / 1000;
}

async function cliEnv(work: string, base: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
  return {
    ...base,
    TRITON_CHATGLM_CONTAINER: 'triton-chatglm-bench',
    TRITON_CHATGLM_PORT: String(await freePort()),
    TRITON_CHATGLM_GRPC_PORT: String(await freePort()),
    TRITON_CHATGLM_METRICS_PORT: String(await freePort()),
    TRITON_CHATGLM_REPOSITORY: join(work, 'model_repository'),
  };
}

async function main(): Promise<void> {
  const args = readCliArgs();
  const out = args.get('out');
  if (!out) throw new Error('--out=<file> is required');
  const rounds = args.int('rounds', 3);
  await buildCli();
  const rd = await realDocker();
  const fake = createFakeDocker();
  const work = mkdtempSync(join(tmpdir(), 'bench-container-'));
  const times = { real: { start: [] as number[], stop: [] as number[] }, fake: { start: [] as number[], stop: [] as number[] } };
  try {
    const real = await cliEnv(work, { ...rd.env, TRITON_CHATGLM_DOCKER: rd.dockerPath, TRITON_CHATGLM_IMAGE: rd.image });
    const fakeEnv = await cliEnv(work, { ...fake.env, TRITON_CHATGLM_DOCKER: fake.dockerPath });
    const realWeights = makeWeights(join(work, 'real'));
    const fakeWeights = makeFakeWeights(join(work, 'fake'));
    for (let i = 0; i < rounds; i++) {
      for (const [kind, env, weights] of [['real', real, realWeights], ['fake', fakeEnv, fakeWeights]] as const) {
        times[kind].start.push(await timed(() => cli(['start', '--weights', weights], env, work), `${kind} start`));
        times[kind].stop.push(await timed(() => cli(['stop'], env, work), `${kind} stop`));
        console.log(`round ${i + 1} ${kind}: start ${times[kind].start.at(-1)!.toFixed(2)} s, stop ${times[kind].stop.at(-1)!.toFixed(2)} s`);
      }
    }
  } finally {
    fake.cleanup();
    await rd.release();
    rmSync(work, { recursive: true, force: true });
  }
  const result = {
    rounds,
    image: rd.image,
    container_start_s: { real: figure(times.real.start), fake: figure(times.fake.start) },
    container_stop_s: { real: figure(times.real.stop), fake: figure(times.fake.stop) },
  };
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify({ container_start_s: result.container_start_s, container_stop_s: result.container_stop_s }));
}

main().catch((e: unknown) => { console.error(e instanceof Error ? e.stack : e); process.exit(1); });
