// Weights download throughput: our downloader (src/core/weights: listing, Range-capable GET, sha256 while
// streaming, write to the cache, rename, link, manifest) against a plain undici GET of the same files' bytes to
// /dev/null, both from the fake Hub (test/support/fake-hub.mjs) serving the tiny repository plus one large LFS
// shard, in the same process and run, rounds interleaved (ours, plain, ours, plain …) after a warm-up.
//   download_throughput_ratio = median bytes/s of ours ÷ median bytes/s of the plain GET (target ≥ 0.9)
// The cache goes to memory-backed /dev/shm where there is one (the figure is the downloader's cost, not this
// machine's disk); the same download onto the disk of the temporary folder is measured in the same rounds and
// kept as `on_disk` (a shared VM's disk writes slower than loopback delivers).
// Usage: node --import tsx bench/download.ts --out=<file> [--rounds=5] [--mb=256]
import { createWriteStream, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { request } from 'undici';
import { downloadWeights } from '../src/core/weights';
import { readCliArgs } from './lib/cli-args';

interface FakeHub {
  endpoint: string;
  commit: string;
  files: { path: string; size: number; lfs: boolean }[];
  close(): Promise<void>;
}

const NOT_SELECTED = new Set(['README.md', '.gitattributes', 'images/logo.png']);

/** The same files' bytes through a bare undici GET, redirects followed by hand, the body piped to /dev/null. */
async function plainGet(hub: FakeHub, files: FakeHub['files']): Promise<number> {
  let bytes = 0;
  for (const f of files) {
    let url = new URL(`${hub.endpoint}/THUDM/chatglm3-6b/resolve/${hub.commit}/${f.path}`);
    for (;;) {
      const res = await request(url);
      if (res.statusCode >= 300 && res.statusCode < 400) {
        await res.body.dump();
        url = new URL(String(res.headers.location), url);
        continue;
      }
      res.body.on('data', (c: Buffer) => { bytes += c.length; });
      await pipeline(res.body, createWriteStream('/dev/null'));
      break;
    }
  }
  return bytes;
}

async function main(): Promise<void> {
  const args = readCliArgs();
  const out = args.get('out');
  if (!out) throw new Error('--out=<file> is required');
  const rounds = args.int('rounds', 5);
  // The hashing worker as the build makes it (dist/sha256Worker.js; the sources use that file too).
  const esbuild = await import('esbuild');
  await esbuild.build({ entryPoints: { sha256Worker: join(__dirname, '../src/core/weights/sha256Worker.ts') }, outdir: join(__dirname, '../dist'), bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
  const mb = args.int('mb', 256);
  const { startFakeHub, tinyRepositoryFiles } = (await import(pathToFileURL(join(__dirname, '../test/support/fake-hub.mjs')).href)) as {
    startFakeHub(o: object): Promise<FakeHub>;
    tinyRepositoryFiles(o: object): unknown[];
  };
  const hub = await startFakeHub({ files: tinyRepositoryFiles({ bigFileBytes: mb * 1024 * 1024 }) });
  // What our download fetches: never README, .gitattributes, a file in a folder, nor any Python file (remote code).
  const files = hub.files.filter((f) => !NOT_SELECTED.has(f.path) && !f.path.endsWith('.py'));
  const total = files.reduce((n, f) => n + f.size, 0);
  const memoryBacked = existsSync('/dev/shm');
  const work = mkdtempSync(join(memoryBacked ? '/dev/shm' : tmpdir(), 'bench-download-'));
  const disk = mkdtempSync(join(tmpdir(), 'bench-download-'));
  const ours = async (where = work): Promise<number> => {
    const cache = mkdtempSync(join(where, 'cache-'));
    const t0 = process.hrtime.bigint();
    const r = await downloadWeights({ cacheDir: cache, endpoint: hub.endpoint, freeBytes: async () => 1e15 });
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    if (r.fetchedBytes !== total) throw new Error(`our download fetched ${r.fetchedBytes} of ${total} bytes`);
    rmSync(cache, { recursive: true, force: true });
    return total / s;
  };
  const plain = async (): Promise<number> => {
    const t0 = process.hrtime.bigint();
    const bytes = await plainGet(hub, files);
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    if (bytes !== total) throw new Error(`the plain GET received ${bytes} of ${total} bytes`);
    return total / s;
  };
  try {
    await ours();
    await plain();
    const a: number[] = [];
    const b: number[] = [];
    const d: number[] = [];
    for (let i = 0; i < rounds; i++) {
      a.push(await ours());
      b.push(await plain());
      d.push(await ours(disk));
      console.log(`round ${i + 1}: ours ${(a[i]! / 1e6).toFixed(1)} MB/s, plain GET ${(b[i]! / 1e6).toFixed(1)} MB/s, ours onto the disk ${(d[i]! / 1e6).toFixed(1)} MB/s`);
    }
    const { median, summarize, pairedRatios } = (await import(pathToFileURL(join(__dirname, 'lib/stats.mjs')).href)) as {
      median(v: number[]): number;
      summarize(v: number[], d?: number): { value: number; median_of: number; min: number; max: number };
      pairedRatios(a: number[], b: number[]): number[];
    };
    const paired = summarize(pairedRatios(a, b), 3);
    const result = {
      download_throughput_ratio: { value: Number((median(a) / median(b)).toFixed(3)), median_of: rounds, min: paired.min, max: paired.max },
      bytes_per_round: total,
      files_per_round: files.length,
      cache_on: memoryBacked ? '/dev/shm (tmpfs)' : tmpdir(),
      ours_bytes_per_second: summarize(a, 0),
      plain_get_bytes_per_second: summarize(b, 0),
      on_disk: { cache_on: tmpdir(), ratio: Number((median(d) / median(b)).toFixed(3)), ours_bytes_per_second: summarize(d, 0) },
      note: 'ours = downloadWeights (listing + GET with sha256 while streaming + write + rename + link + manifest) into a fresh cache each round; plain = undici.request of the same files to /dev/null; same fake Hub on 127.0.0.1, interleaved rounds after one warm-up each',
    };
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`download_throughput_ratio ${result.download_throughput_ratio.value} (paired ${paired.min}–${paired.max}); onto the disk ${result.on_disk.ratio}`);
  } finally {
    await hub.close();
    rmSync(work, { recursive: true, force: true });
    rmSync(disk, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
