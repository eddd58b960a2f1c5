// The weights download against the fake Hub (test/support/fake-hub.mjs, the tiny checkpoint as a repository):
// verified files and the manifest written last, resume after a cut fetching only the rest, a corrupted byte, the
// space check, cancel, hostile listings, the token's reach, the rename redirect, gated and missing repositories.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { validateWeights } from '../../../src/core/server';
import {
  checkCompleteness, CHATGLM_REPO, downloadWeights, MANIFEST_NAME, readManifest, snapshotPaths, type DownloadEvent, type DownloadOptions,
} from '../../../src/core/weights';
import { fakeHubSuite } from './support/fakeHubSuite';

interface FakeHub {
  endpoint: string;
  cdnOrigin: string;
  files: { path: string; size: number; sha256: string; lfs: boolean }[];
  knobs: { cut?: { file: string; atByte: number; times?: number }; corrupt?: { file: string; atByte: number; times: number }; bytesPerSecond: number; ignoreRange: boolean; redirectTo?: string };
  stats: { bytes: number; byFile: Record<string, number>; requests: Record<string, number> };
  log: { server: string; url: string; range?: string; authorization?: string }[];
  reset(): void;
  close(): Promise<void>;
}

interface FakeHubModule {
  FAKE_COMMIT: string;
  startFakeHub(o?: object): Promise<FakeHub>;
  tinyRepositoryFiles(): { path: string; data: Buffer; lfs: boolean }[];
}
let fakeHub: FakeHubModule;
let FAKE_COMMIT = '';
const startFakeHub = (o?: object) => fakeHub.startFakeHub(o);

const FAST_RETRY = { attempts: 4, baseDelayMs: 1, maxDelayMs: 5 };
const SHARD = 'model-00001-of-00002.safetensors';
const PLENTY = async () => 1e15;

let hub: FakeHub;
const suite = fakeHubSuite<FakeHubModule, FakeHub>('weights-dl-', (m, h) => {
  fakeHub = m;
  FAKE_COMMIT = fakeHub.FAKE_COMMIT;
  hub = h;
});

const cacheDir = (): string => suite.tmp();

function options(cache: string, extra: Partial<DownloadOptions> = {}): DownloadOptions & { events: DownloadEvent[] } {
  const events: DownloadEvent[] = [];
  return { cacheDir: cache, endpoint: hub.endpoint, retry: FAST_RETRY, freeBytes: PLENTY, onEvent: (e) => events.push(e), events, ...extra };
}

/** The files we fetch from the fake repository: all top-level ones but README, .gitattributes, the image and the Python file. */
function selected(): FakeHub['files'] {
  return hub.files.filter((f) => !['README.md', '.gitattributes', 'images/logo.png', 'tokenization_chatglm.py'].includes(f.path));
}

test('a full download verifies every file, links the snapshot into the blobs and writes the manifest last', async () => {
  const cache = cacheDir();
  const o = options(cache);
  const result = await downloadWeights(o);
  const { snapshotDir, blobsDir } = snapshotPaths(cache, CHATGLM_REPO, FAKE_COMMIT);
  assert.equal(result.snapshotDir, snapshotDir);
  assert.equal(result.commit, FAKE_COMMIT);
  assert.equal(result.newerThanTested, true, 'the fake commit is not the tested one');
  const want = selected();
  assert.deepEqual(readdirSync(snapshotDir).filter((n) => n !== MANIFEST_NAME).sort(), want.map((f) => f.path).sort());
  for (const f of want) {
    const link = join(snapshotDir, f.path);
    assert.ok(lstatSync(link).isSymbolicLink(), `${f.path} is a link`);
    assert.ok(readlinkSync(link).startsWith('../../blobs/'), 'relative link into ../../blobs');
    assert.equal(createHash('sha256').update(readFileSync(link)).digest('hex'), f.sha256, `${f.path} content`);
  }
  assert.equal(readdirSync(blobsDir).filter((n) => n.endsWith('.incomplete')).length, 0, 'no partial file left');
  const manifest = await readManifest(snapshotDir);
  assert.ok(manifest && manifest !== 'invalid');
  assert.equal(manifest.complete, true);
  assert.equal(manifest.commit, FAKE_COMMIT);
  assert.equal(manifest.format, 'safetensors');
  assert.deepEqual(manifest.files.map((f) => [f.path, f.size, f.sha256]).sort(), want.map((f) => [f.path, f.size, f.sha256]).sort());
  // The manifest is newer than every file of the snapshot (written last).
  const manifestTime = statSync(join(snapshotDir, MANIFEST_NAME)).mtimeMs;
  for (const f of want) assert.ok(lstatSync(join(snapshotDir, f.path)).mtimeMs <= manifestTime, `${f.path} before the manifest`);
  assert.equal(readFileSync(join(cache, 'models--THUDM--chatglm3-6b', 'refs', 'main'), 'utf8'), FAKE_COMMIT);
  // Bytes served = bytes of the selected files (nothing fetched twice, README and the image not at all).
  assert.equal(hub.stats.bytes, want.reduce((n, f) => n + f.size, 0));
  assert.equal(result.fetchedBytes, hub.stats.bytes);
  assert.equal(hub.stats.byFile['README.md'], undefined);
  // The checkpoint passes the checklist's weights check and the completeness check.
  await validateWeights(snapshotDir);
  assert.deepEqual((await checkCompleteness(snapshotDir)).complete, true);
  const done = o.events.find((e) => e.type === 'done');
  assert.ok(done && done.type === 'done' && done.newerThanTested);
  const last = o.events.filter((e) => e.type === 'progress').at(-1);
  assert.ok(last && last.type === 'progress' && last.doneBytes === last.totalBytes, 'the last progress event says 100 %');
});

test('the manifest is first written incomplete, and the complete one comes after the last file', async () => {
  const cache = cacheDir();
  const { snapshotDir } = snapshotPaths(cache, CHATGLM_REPO, FAKE_COMMIT);
  const seen: string[] = [];
  const o = options(cache, {
    onEvent: (e) => {
      if (e.type !== 'file-done' && e.type !== 'done') return;
      const m = JSON.parse(readFileSync(join(snapshotDir, MANIFEST_NAME), 'utf8')) as { complete: boolean };
      seen.push(`${e.type}:${m.complete}`);
    },
  });
  await downloadWeights(o);
  assert.ok(seen.length >= 2);
  assert.ok(seen.slice(0, -1).every((s) => s === 'file-done:false'), `incomplete until every file is done: ${seen.join(', ')}`);
  assert.equal(seen.at(-1), 'done:true');
});

test('a cut at 40 % of a shard, then resume, fetches only the rest (bytes counted)', async () => {
  const cache = cacheDir();
  const shard = hub.files.find((f) => f.path === SHARD)!;
  const cutAt = Math.floor(shard.size * 0.4);
  hub.knobs.cut = { file: SHARD, atByte: cutAt, times: 1 };
  // No retries in this run: the cut ends the download, as a crash or a lost network would.
  await assert.rejects(downloadWeights(options(cache, { retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } })), (e: Error) => (e as { code?: string }).code === 'network');
  const { blobsDir, snapshotDir } = snapshotPaths(cache, CHATGLM_REPO, FAKE_COMMIT);
  const partial = join(blobsDir, `${shard.sha256}.incomplete`);
  assert.equal(statSync(partial).size, cutAt, 'what was received is kept');
  assert.equal((await checkCompleteness(snapshotDir)).complete, false, 'the folder is not called complete');
  await assert.rejects(validateWeights(snapshotDir), /not finished/);
  const servedBefore = hub.stats.byFile[SHARD];
  assert.equal(servedBefore, cutAt);
  const second = options(cache);
  const result = await downloadWeights(second);
  assert.equal(hub.stats.byFile[SHARD]! - servedBefore, shard.size - cutAt, 'only the rest of the shard was fetched');
  assert.ok(hub.log.some((l) => l.range === `bytes=${cutAt}-`), 'asked with a Range');
  const resolved = second.events.find((e) => e.type === 'resolved');
  assert.ok(resolved && resolved.type === 'resolved' && resolved.plan.presentBytes >= cutAt, 'the plan counts what is already here');
  assert.equal(createHash('sha256').update(readFileSync(join(result.snapshotDir, SHARD))).digest('hex'), shard.sha256);
  assert.equal((await checkCompleteness(snapshotDir)).complete, true);
});

test('a dropped connection is retried with backoff in the same run and resumes where it stopped', async () => {
  const cache = cacheDir();
  const shard = hub.files.find((f) => f.path === SHARD)!;
  hub.knobs.cut = { file: SHARD, atByte: Math.floor(shard.size / 2), times: 2 };
  const o = options(cache);
  await downloadWeights(o);
  assert.equal(o.events.filter((e) => e.type === 'retry').length, 2);
  assert.equal(hub.stats.byFile[SHARD], shard.size, 'no byte of the shard fetched twice');
});

test('a server that ignores Range gets the file from the start (no double counting, still verified)', async () => {
  const cache = cacheDir();
  const shard = hub.files.find((f) => f.path === SHARD)!;
  hub.knobs.cut = { file: SHARD, atByte: 1000, times: 1 };
  hub.knobs.ignoreRange = true;
  const o = options(cache);
  const result = await downloadWeights(o);
  assert.equal(hub.stats.byFile[SHARD], 1000 + shard.size);
  assert.equal(createHash('sha256').update(readFileSync(join(result.snapshotDir, SHARD))).digest('hex'), shard.sha256);
  const last = o.events.filter((e) => e.type === 'progress').at(-1);
  assert.ok(last && last.type === 'progress' && last.doneBytes === last.totalBytes);
});

test('a corrupted byte: the file is discarded and fetched once more', async () => {
  const cache = cacheDir();
  const shard = hub.files.find((f) => f.path === SHARD)!;
  hub.knobs.corrupt = { file: SHARD, atByte: 12345, times: 1 };
  const o = options(cache);
  const result = await downloadWeights(o);
  assert.deepEqual(o.events.filter((e) => e.type === 'verify-failed').map((e) => e.type === 'verify-failed' && e.file), [SHARD]);
  assert.equal(hub.stats.byFile[SHARD], 2 * shard.size);
  assert.equal(createHash('sha256').update(readFileSync(join(result.snapshotDir, SHARD))).digest('hex'), shard.sha256);
});

test('a byte corrupted twice: the named error, the file thrown away, the folder not complete', async () => {
  const cache = cacheDir();
  hub.knobs.corrupt = { file: SHARD, atByte: 7, times: 2 };
  await assert.rejects(downloadWeights(options(cache)), (e: Error & { code?: string; facts?: { file?: string } }) => {
    assert.equal(e.code, 'checksum-mismatch');
    assert.equal(e.facts?.file, SHARD);
    assert.match(e.message, new RegExp(SHARD.replace(/\./g, '\\.')));
    return true;
  });
  const { blobsDir, snapshotDir } = snapshotPaths(cache, CHATGLM_REPO, FAKE_COMMIT);
  assert.equal(readdirSync(blobsDir).filter((n) => n.endsWith('.incomplete')).length, 0, 'the bad bytes are not kept');
  assert.equal(existsSync(join(snapshotDir, SHARD)), false);
  assert.equal((await checkCompleteness(snapshotDir)).complete, false);
});

test('not enough space: the error names both figures and the folder; nothing is started', async () => {
  const cache = join(cacheDir(), 'hub');
  const total = selected().reduce((n, f) => n + f.size, 0);
  await assert.rejects(downloadWeights(options(cache, { freeBytes: async () => 1000 })), (e: Error & { code?: string; facts?: { neededBytes?: number; freeBytes?: number; dir?: string } }) => {
    assert.equal(e.code, 'space-low');
    assert.equal(e.facts?.neededBytes, total);
    assert.equal(e.facts?.freeBytes, 1000);
    assert.equal(e.facts?.dir, cache);
    assert.ok(e.message.includes(cache) && e.message.includes('1 KB'));
    return true;
  });
  assert.equal(existsSync(cache), false, 'no folder created');
  assert.equal(hub.stats.bytes, 0, 'no file byte requested');
  assert.ok(!hub.log.some((l) => l.url.includes('/resolve/')));
});

test('the space check counts only what is left to fetch', async () => {
  const cache = cacheDir();
  const shard = hub.files.find((f) => f.path === SHARD)!;
  hub.knobs.cut = { file: SHARD, atByte: shard.size - 10, times: 1 };
  await assert.rejects(downloadWeights(options(cache, { retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } })));
  hub.reset();
  let asked = 0;
  await assert.rejects(downloadWeights(options(cache, { freeBytes: async () => 0 })), (e: Error & { facts?: { neededBytes?: number } }) => {
    asked = e.facts?.neededBytes ?? -1;
    return true;
  });
  const total = selected().reduce((n, f) => n + f.size, 0);
  assert.ok(asked > 0 && asked <= total - (shard.size - 10), `needed ${asked} of ${total}`);
});

test('cancel keeps the partial file; the next download continues it', async () => {
  const cache = cacheDir();
  const shard = hub.files.find((f) => f.path === SHARD)!;
  hub.knobs.bytesPerSecond = 200_000;
  const controller = new AbortController();
  const { blobsDir } = snapshotPaths(cache, CHATGLM_REPO, FAKE_COMMIT);
  const partial = join(blobsDir, `${shard.sha256}.incomplete`);
  const o = options(cache, {
    signal: controller.signal,
    onEvent: (e) => {
      if (e.type === 'progress' && existsSync(partial) && statSync(partial).size > 64 * 1024) controller.abort();
    },
  });
  await assert.rejects(downloadWeights(o), (e: Error) => e.name === 'AbortError');
  const kept = statSync(partial).size;
  assert.ok(kept > 0 && kept < shard.size, `kept ${kept} bytes`);
  hub.knobs.bytesPerSecond = 0;
  const before = hub.stats.byFile[SHARD] ?? 0;
  await downloadWeights(options(cache));
  assert.equal(hub.stats.byFile[SHARD]! - before, shard.size - kept);
});

test('a size that does not match the listing is an error naming the file', async () => {
  const bad = await startFakeHub({ files: fakeHub.tinyRepositoryFiles() });
  // The listing says one size; the file served (after the listing) has one byte more.
  const entry = bad.files.find((f) => f.path === 'config.json') as unknown as { data: Buffer; size: number };
  entry.data = Buffer.concat([entry.data, Buffer.from(' ')]);
  entry.size += 1;
  const cache = cacheDir();
  try {
    await assert.rejects(downloadWeights({ ...options(cache), endpoint: bad.endpoint }), (e: Error & { code?: string }) => e.code === 'size-mismatch' || e.code === 'checksum-mismatch');
  } finally {
    await bad.close();
  }
});

test('an existing complete snapshot is reused: nothing is fetched again', async () => {
  const cache = cacheDir();
  await downloadWeights(options(cache));
  hub.reset();
  const again = await downloadWeights(options(cache));
  assert.equal(hub.stats.bytes, 0);
  assert.equal(again.fetchedBytes, 0);
});

test('the token goes only to the configured endpoint (never to the CDN it redirects to) and is never in events', async () => {
  const token = 'hf_secret_token_abcdef123456';
  const gated = await startFakeHub({ gated: true, token });
  const cache = cacheDir();
  const events: DownloadEvent[] = [];
  try {
    await downloadWeights({ ...options(cache), endpoint: gated.endpoint, token, onEvent: (e) => events.push(e) });
    const hubRequests = gated.log.filter((l: { server: string }) => l.server === 'hub');
    const cdnRequests = gated.log.filter((l: { server: string }) => l.server === 'cdn');
    assert.ok(hubRequests.length > 0 && cdnRequests.length > 0, 'both servers were asked');
    assert.ok(hubRequests.every((l: { authorization?: string }) => l.authorization === `Bearer ${token}`));
    assert.ok(cdnRequests.every((l: { authorization?: string }) => l.authorization === undefined), 'the CDN never sees the token');
    assert.ok(!JSON.stringify(events).includes(token), 'no event carries the token');
    const { snapshotDir } = snapshotPaths(cache, CHATGLM_REPO, FAKE_COMMIT);
    assert.ok(!readFileSync(join(snapshotDir, MANIFEST_NAME), 'utf8').includes(token), 'the manifest does not hold it');
  } finally {
    await gated.close();
  }
});

test('a gated repository without a token: hub-unauthorized, and the message holds no token', async () => {
  const gated = await startFakeHub({ gated: true, token: 'hf_right' });
  try {
    await assert.rejects(downloadWeights({ ...options(cacheDir()), endpoint: gated.endpoint, token: 'hf_wrong_token_value' }), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'hub-unauthorized');
      assert.ok(!e.message.includes('hf_wrong_token_value'));
      return true;
    });
  } finally {
    await gated.close();
  }
});

test('an unknown repository or revision: hub-not-found', async () => {
  await assert.rejects(downloadWeights(options(cacheDir(), { repo: 'nobody/nothing' })), (e: Error & { code?: string }) => e.code === 'hub-not-found');
  await assert.rejects(downloadWeights(options(cacheDir(), { revision: 'v9' })), (e: Error & { code?: string }) => e.code === 'hub-not-found');
});

test('a shard of 8 MB and more is hashed on the worker thread: verified, and a corrupted byte still caught', async () => {
  // The worker script as the build makes it (dist/sha256Worker.js, which the sources use too).
  const esbuild = await import('esbuild');
  await esbuild.build({ entryPoints: { sha256Worker: join(__dirname, '../../../src/core/weights/sha256Worker.ts') }, outdir: join(__dirname, '../../../dist'), bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
  const threads = (await import('node:worker_threads')) as typeof import('node:worker_threads');
  let started = 0;
  const original = threads.Worker.prototype.postMessage;
  threads.Worker.prototype.postMessage = function (this: InstanceType<typeof threads.Worker>, ...a: Parameters<typeof original>) {
    if (typeof a[0] === 'object' && a[0] !== null && 'init' in a[0]) started += 1;
    return original.apply(this, a);
  };
  const big = await startFakeHub({ files: (fakeHub.tinyRepositoryFiles as (o: object) => unknown[])({ bigFileBytes: 9 * 1024 * 1024 }) });
  try {
    const shard = big.files.find((f) => f.path === 'model-99999-of-99999.safetensors')!;
    const cache = cacheDir();
    const r = await downloadWeights({ ...options(cache), endpoint: big.endpoint });
    assert.equal(createHash('sha256').update(readFileSync(join(r.snapshotDir, shard.path))).digest('hex'), shard.sha256);
    big.knobs.corrupt = { file: shard.path, atByte: 5 * 1024 * 1024, times: 3 }; // the cut response counts as one
    big.knobs.cut = { file: shard.path, atByte: 3 * 1024 * 1024, times: 1 };
    await assert.rejects(downloadWeights({ ...options(cacheDir()), endpoint: big.endpoint }), (e: Error & { code?: string; facts?: { file?: string } }) => e.code === 'checksum-mismatch' && e.facts?.file === shard.path);
    assert.ok(started >= 3, `the big shard's hashes ran on worker threads (${started} started)`);
  } finally {
    threads.Worker.prototype.postMessage = original;
    await big.close();
  }
});

test('a shard of many blocks is written and hashed on the worker, the buffers moved there: every byte verified, a cut kept and resumed', async () => {
  const esbuild = await import('esbuild');
  await esbuild.build({ entryPoints: { sha256Worker: join(__dirname, '../../../src/core/weights/sha256Worker.ts') }, outdir: join(__dirname, '../../../dist'), bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
  const threads = (await import('node:worker_threads')) as typeof import('node:worker_threads');
  let writes = 0;
  let moved = 0;
  let parts = 0;
  const original = threads.Worker.prototype.postMessage;
  threads.Worker.prototype.postMessage = function (this: InstanceType<typeof threads.Worker>, ...a: Parameters<typeof original>) {
    const m = a[0] as { write?: number; parts?: ArrayBuffer[] } | undefined;
    const result = original.apply(this, a);
    if (typeof m === 'object' && m !== null && 'write' in m) {
      writes += 1;
      parts += m.parts!.length;
      moved += m.parts!.filter((p) => p.byteLength === 0).length; // transferred: detached on this side
    }
    return result;
  };
  // 40 MB: ten 4 MB blocks or more, several in flight on the worker at once.
  const big = await startFakeHub({ files: (fakeHub.tinyRepositoryFiles as (o: object) => unknown[])({ bigFileBytes: 40 * 1024 * 1024 }) });
  try {
    const shard = big.files.find((f) => f.path === 'model-99999-of-99999.safetensors')!;
    const cutAt = 21 * 1024 * 1024 + 12345;
    big.knobs.cut = { file: shard.path, atByte: cutAt, times: 1 };
    const cache = cacheDir();
    // No retries: the cut ends the run; every byte that arrived is on disk (written and hashed on the worker).
    await assert.rejects(downloadWeights({ ...options(cache), endpoint: big.endpoint, retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } }), (e: Error & { code?: string }) => e.code === 'network');
    const partial = join(snapshotPaths(cache, CHATGLM_REPO, FAKE_COMMIT).blobsDir, `${shard.sha256}.incomplete`);
    assert.equal(statSync(partial).size, cutAt, 'what was received is kept');
    const r = await downloadWeights({ ...options(cache), endpoint: big.endpoint });
    assert.equal(createHash('sha256').update(readFileSync(join(r.snapshotDir, shard.path))).digest('hex'), shard.sha256);
    assert.equal(big.stats.byFile[shard.path], shard.size, 'no byte fetched twice');
    assert.ok(writes >= 10, `blocks were written on the worker (${writes} writes)`);
    assert.ok(moved === parts && parts > writes, `the buffers moved to the worker, none cloned (${moved} of ${parts})`);
  } finally {
    threads.Worker.prototype.postMessage = original;
    await big.close();
  }
});

test('cancel on a large file (written on the worker) keeps what arrived; the next download continues it', async () => {
  const big = await startFakeHub({ files: (fakeHub.tinyRepositoryFiles as (o: object) => unknown[])({ bigFileBytes: 12 * 1024 * 1024 }) });
  try {
    const shard = big.files.find((f) => f.path === 'model-99999-of-99999.safetensors')!;
    const cache = cacheDir();
    const partial = join(snapshotPaths(cache, CHATGLM_REPO, FAKE_COMMIT).blobsDir, `${shard.sha256}.incomplete`);
    big.knobs.bytesPerSecond = 4 * 1024 * 1024;
    const controller = new AbortController();
    const o = { ...options(cache), endpoint: big.endpoint, signal: controller.signal, onEvent: (e: DownloadEvent) => {
      if (e.type === 'progress' && existsSync(partial) && statSync(partial).size > 0) controller.abort();
    } };
    await assert.rejects(downloadWeights(o), (e: Error) => e.name === 'AbortError');
    const kept = statSync(partial).size;
    assert.ok(kept > 0 && kept < shard.size, `kept ${kept} bytes`);
    big.knobs.bytesPerSecond = 0;
    const before = big.stats.byFile[shard.path] ?? 0;
    const r = await downloadWeights({ ...options(cache), endpoint: big.endpoint });
    assert.equal(big.stats.byFile[shard.path]! - before, shard.size - kept, 'only the rest was fetched');
    assert.equal(createHash('sha256').update(readFileSync(join(r.snapshotDir, shard.path))).digest('hex'), shard.sha256);
  } finally {
    await big.close();
  }
});

test('a write that fails (the disk full) is space-low, not retried, on this thread and on the worker', { skip: !existsSync('/dev/full') }, async () => {
  const big = await startFakeHub({ files: (fakeHub.tinyRepositoryFiles as (o: object) => unknown[])({ bigFileBytes: 9 * 1024 * 1024 }) });
  try {
    for (const name of [SHARD, 'model-99999-of-99999.safetensors']) {
      const shard = big.files.find((f) => f.path === name)!;
      const cache = cacheDir();
      const { blobsDir } = snapshotPaths(cache, CHATGLM_REPO, FAKE_COMMIT);
      mkdirSync(blobsDir, { recursive: true });
      // Every write to the partial file fails with ENOSPC.
      symlinkSync('/dev/full', join(blobsDir, `${shard.sha256}.incomplete`));
      const o = { ...options(cache), endpoint: big.endpoint };
      await assert.rejects(downloadWeights(o), (e: Error & { code?: string }) => e.code === 'space-low' && e.message.includes(cache), name);
      assert.equal(o.events.filter((e) => e.type === 'retry').length, 0, name);
    }
  } finally {
    await big.close();
  }
});

test('a pinned commit revision downloads the same snapshot and writes no ref', async () => {
  const cache = cacheDir();
  const r = await downloadWeights(options(cache, { revision: FAKE_COMMIT }));
  assert.equal(r.commit, FAKE_COMMIT);
  assert.equal(existsSync(join(cache, 'models--THUDM--chatglm3-6b', 'refs')), false);
});

test('a redirect to plain http from an https endpoint is refused (the rule, checked on the redirect function)', async () => {
  const { followRedirect } = await import('../../../src/core/weights/index.js');
  const https = new URL('https://huggingface.co');
  assert.throws(() => followRedirect(new URL('https://huggingface.co/x'), 'http://cdn.example/x', https), /refused/);
  assert.throws(() => followRedirect(new URL('https://huggingface.co/x'), 'file:///etc/passwd', https), /refused/);
  assert.equal(followRedirect(new URL('https://huggingface.co/x'), 'https://cdn-lfs.hf.co/y', https).href, 'https://cdn-lfs.hf.co/y');
  assert.equal(followRedirect(new URL('http://127.0.0.1:1/x'), '/z', new URL('http://127.0.0.1:1')).href, 'http://127.0.0.1:1/z');
});

test('a redirect to a scheme the endpoint does not use is refused in a real download', async () => {
  hub.knobs.redirectTo = 'ftp://127.0.0.1/blob';
  await assert.rejects(downloadWeights(options(cacheDir())), (e: Error & { code?: string }) => e.code === 'redirect-refused');
});

