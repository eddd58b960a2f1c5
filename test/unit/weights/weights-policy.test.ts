// The download's pure rules and the disk-only parts: which files of a listing are fetched, which listings are
// refused, the tested snapshot against ../shared/reference, finding a complete snapshot in the Hub caches without
// a request, the completeness rules of the weights check, and where a cache snapshot's repository folder is.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, test } from 'node:test';
import { validateWeights } from '../../../src/core/server';
import { catalogConfigJson } from '../../support/catalogConfig';
import {
  cacheRepoOf, checkListing, defaultHubCache, findCachedSnapshots, hubCacheCandidates, MANIFEST_NAME, parseEndpoint, selectFiles,
  spaceMargin, TESTED_SNAPSHOT, writeManifest, type HubFile, checkScheme, checkTokenTransport, isLoopbackHost, listingLimits,
} from '../../../src/core/weights';

const root = resolve(__dirname, '..', '..', '..');
let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'weights-policy-'));
  dirs.push(d);
  return d;
}

const sha = (c: string) => c.repeat(64);
const oid = (c: string) => c.repeat(40);
const real = TESTED_SNAPSHOT.files.map(([path, size, sha256]): HubFile => (size > 100_000 ? { path, size, sha256 } : { path, size, gitOid: oid('a') }));

test('the tested snapshot in the code is the one in ../shared/reference', () => {
  const ref = join(process.env.TRITON_CHATGLM_SHARED ?? join(root, '..', 'shared'), 'reference', 'chatglm3-6b-snapshot.json');
  const j = JSON.parse(readFileSync(ref, 'utf8')) as { commit: string; total_bytes: number; files: { path: string; size: number; sha256: string }[] };
  assert.equal(TESTED_SNAPSHOT.commit, j.commit);
  assert.equal(TESTED_SNAPSHOT.totalBytes, j.total_bytes);
  assert.deepEqual(TESTED_SNAPSHOT.files.map(([p, s, h]) => ({ path: p, size: s, sha256: h })), j.files.map(({ path, size, sha256 }) => ({ path, size, sha256 })));
});

test('selection: the tested snapshot has only .bin shards: config, tokenizer, license, the bin index and 7 shards (no Python file)', () => {
  const { format, files } = selectFiles(real);
  assert.equal(format, 'bin');
  assert.deepEqual(files.map((f) => f.path), [
    'MODEL_LICENSE', 'config.json',
    'tokenizer.model', 'tokenizer_config.json', 'pytorch_model.bin.index.json',
    ...[1, 2, 3, 4, 5, 6, 7].map((i) => `pytorch_model-0000${i}-of-00007.bin`),
  ]);
  // The selection is the whole checkpoint but README, .gitattributes and the Python files: about 12.5 GB.
  assert.ok(files.reduce((n, f) => n + f.size, 0) > 12.48e9);
});

test('selection: a revision with safetensors takes those and their index only, never both formats', () => {
  const listing: HubFile[] = [
    ...real,
    { path: 'model-00001-of-00002.safetensors', size: 10, sha256: sha('b') },
    { path: 'model-00002-of-00002.safetensors', size: 10, sha256: sha('c') },
    { path: 'model.safetensors.index.json', size: 5, gitOid: oid('d') },
    { path: 'onnx/model.onnx', size: 5, sha256: sha('e') },
  ];
  const { format, files } = selectFiles(listing);
  assert.equal(format, 'safetensors');
  const names = files.map((f) => f.path);
  assert.ok(names.includes('model.safetensors.index.json'));
  assert.ok(!names.some((n) => n.endsWith('.bin') || n === 'pytorch_model.bin.index.json'));
  assert.ok(!names.includes('onnx/model.onnx'));
  assert.deepEqual(names.slice(-2), ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
});

test('selection: a revision without weight files is refused', () => {
  assert.throws(() => selectFiles(real.filter((f) => !f.path.endsWith('.bin'))), /neither/);
});

test('hostile listings: parent segments, absolute paths, backslashes, control characters, bad hashes, duplicates', () => {
  const ok: HubFile = { path: 'config.json', size: 1, gitOid: oid('a') };
  for (const path of ['../evil', 'x/../../evil', './config.json', '/abs', 'C:\\x', 'a\\b', 'a//b', 'new\nline', '']) {
    assert.throws(() => checkListing([ok, { path, size: 1, gitOid: oid('b') }]), /refused/, JSON.stringify(path));
  }
  assert.throws(() => checkListing([{ path: 'a.bin', size: -1, sha256: sha('a') }]), /size/);
  assert.throws(() => checkListing([{ path: 'a.bin', size: 1.5, sha256: sha('a') }]), /size/);
  assert.throws(() => checkListing([{ path: 'a.bin', size: 1, sha256: 'zz' }]), /sha256/);
  assert.throws(() => checkListing([{ path: 'a.bin', size: 1 }]), /no hash/);
  assert.throws(() => checkListing([ok, ok]), /twice/);
  checkListing([ok, { path: 'onnx/model.onnx', size: 3, sha256: sha('f') }]);
});

test('the endpoint: http(s) only, no credentials in it, trailing slash dropped', () => {
  assert.equal(parseEndpoint(undefined).href, 'https://huggingface.co/');
  assert.equal(parseEndpoint('https://hf-mirror.com/').origin, 'https://hf-mirror.com');
  assert.throws(() => parseEndpoint('ftp://x'), /http or https/);
  assert.throws(() => parseEndpoint('not a url'), /not a URL/);
  assert.throws(() => parseEndpoint('https://user:pw@x.org'), /user name or password/);
});

test('the space margin keeps half a GiB plus 1 %', () => {
  assert.equal(spaceMargin(0), 512 * 1024 * 1024);
  assert.equal(spaceMargin(1e10), 512 * 1024 * 1024 + 1e8);
});

test('cache roots: HF_HUB_CACHE, then HF_HOME/hub, then ~/.cache/huggingface/hub', () => {
  assert.equal(defaultHubCache({ HF_HUB_CACHE: '/c', HF_HOME: '/h' }, '/home/u'), '/c');
  assert.equal(defaultHubCache({ HF_HOME: '/h' }, '/home/u'), '/h/hub');
  assert.equal(defaultHubCache({}, '/home/u'), '/home/u/.cache/huggingface/hub');
  assert.deepEqual(hubCacheCandidates({ HF_HUB_CACHE: '/c', HF_HOME: '/h' }, '/home/u'), ['/c', '/h/hub', '/home/u/.cache/huggingface/hub']);
});

/** ChatGLM3-6B's config.json (the weights check identifies the model by its shape). */
const CONFIG = JSON.stringify(catalogConfigJson('chatglm3-6b'));

/** A snapshot laid out as huggingface-cli leaves it: links into ../../blobs, refs/main. */
function cliSnapshot(cache: string, repoFolder: string, commit: string, opts: { dropShard?: boolean; manifest?: 'incomplete' } = {}): string {
  const repo = join(cache, repoFolder);
  const blobs = join(repo, 'blobs');
  const snap = join(repo, 'snapshots', commit);
  mkdirSync(blobs, { recursive: true });
  mkdirSync(snap, { recursive: true });
  mkdirSync(join(repo, 'refs'), { recursive: true });
  writeFileSync(join(repo, 'refs', 'main'), commit);
  const files: Record<string, string> = {
    'config.json': CONFIG,
    'tokenizer.model': 'tok',
    'model.safetensors.index.json': JSON.stringify({ weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' } }),
    'model-00001-of-00002.safetensors': 'one',
    'model-00002-of-00002.safetensors': 'two',
  };
  let i = 0;
  for (const [name, content] of Object.entries(files)) {
    if (opts.dropShard && name === 'model-00002-of-00002.safetensors') continue;
    const blob = `blob${i++}`;
    writeFileSync(join(blobs, blob), content);
    symlinkSync(`../../blobs/${blob}`, join(snap, name));
  }
  if (opts.manifest) writeFileSync(join(snap, MANIFEST_NAME), JSON.stringify({ version: 1, complete: false, commit, files: [] }));
  return snap;
}

const isCheckpoint = (d: string) => validateWeights(d).then(() => true, () => false);

test('an existing snapshot in a Hub cache is found from the disk alone (both repository names), main first', async () => {
  const cache = tmp();
  const older = cliSnapshot(cache, 'models--zai-org--chatglm3-6b', 'b'.repeat(40));
  const main = cliSnapshot(cache, 'models--THUDM--chatglm3-6b', 'a'.repeat(40));
  cliSnapshot(cache, 'models--THUDM--chatglm3-6b', 'c'.repeat(40), { dropShard: true });
  cliSnapshot(cache, 'models--THUDM--chatglm3-6b', 'd'.repeat(40), { manifest: 'incomplete' });
  writeFileSync(join(cache, 'models--THUDM--chatglm3-6b', 'refs', 'main'), 'a'.repeat(40));
  const found = await findCachedSnapshots([cache, join(cache, 'nowhere')], isCheckpoint);
  assert.deepEqual(found.map((f) => f.snapshotDir).sort(), [main, older].sort(), 'the half and the unfinished ones are not offered');
  assert.equal(found[0]!.snapshotDir, main);
  assert.deepEqual(found[0]!.refs, ['main']);
});

test('the weights check: a folder without a manifest is accepted as before, but its index must find its shards', async () => {
  const cache = tmp();
  await validateWeights(cliSnapshot(cache, 'models--THUDM--chatglm3-6b', 'a'.repeat(40)));
  await assert.rejects(validateWeights(cliSnapshot(cache, 'models--THUDM--chatglm3-6b', 'c'.repeat(40), { dropShard: true })), /files its weight index/);
  const plain = join(tmp(), 'my-weights');
  mkdirSync(plain);
  writeFileSync(join(plain, 'config.json'), CONFIG);
  writeFileSync(join(plain, 'tokenizer.model'), 'x');
  writeFileSync(join(plain, 'model.safetensors'), 'x');
  await validateWeights(plain);
});

test('the weights check: our folder needs its manifest complete, and every file it lists at its size', async () => {
  const cache = tmp();
  const snap = cliSnapshot(cache, 'models--THUDM--chatglm3-6b', 'a'.repeat(40), { manifest: 'incomplete' });
  await assert.rejects(validateWeights(snap), /not finished/);
  const base = { version: 1 as const, repo: 'THUDM/chatglm3-6b', revision: 'main', commit: 'a'.repeat(40), endpoint: 'https://huggingface.co', format: 'safetensors' as const, startedAt: '' };
  await writeManifest(snap, { ...base, complete: true, files: [{ path: 'config.json', size: CONFIG.length, sha256: sha('0') }] });
  await validateWeights(snap);
  await writeManifest(snap, { ...base, complete: true, files: [{ path: 'config.json', size: 9999, sha256: sha('0') }] });
  await assert.rejects(validateWeights(snap), /files its weight index or download manifest/);
  writeFileSync(join(snap, MANIFEST_NAME), '{ not json');
  await assert.rejects(validateWeights(snap), /not finished/);
  assert.ok(existsSync(snap));
});

test('a cache snapshot path names its repository folder (mounted whole); other folders do not', () => {
  assert.deepEqual(cacheRepoOf('/h/.cache/huggingface/hub/models--THUDM--chatglm3-6b/snapshots/abc'), {
    repoDir: '/h/.cache/huggingface/hub/models--THUDM--chatglm3-6b', snapshotRel: 'snapshots/abc',
  });
  assert.equal(cacheRepoOf('/data/chatglm3-6b'), undefined);
  assert.equal(cacheRepoOf('/data/snapshots/abc'), undefined);
});

test('a token over plain http: refused for another host, taken by loopback and by https', () => {
  for (const host of ['localhost', '127.0.0.1', '127.8.9.10', '[::1]', 'hub.localhost']) {
    assert.ok(isLoopbackHost(new URL(`http://${host}:8080`).hostname), host);
    checkTokenTransport(new URL(`http://${host}:8080`), 'hf_x');
  }
  for (const host of ['hub.example', '10.0.0.5', '127.0.0.1.nip.io', '[::2]']) {
    assert.throws(() => checkTokenTransport(new URL(`http://${host}`), 'hf_x'), /plain http/, host);
    checkTokenTransport(new URL(`http://${host}`), undefined);
    checkTokenTransport(new URL(`https://${host}`), 'hf_x');
  }
});

test('the scheme rule for pages and redirects: https always, http only from an http endpoint; data: shown as "data:"', () => {
  const https = new URL('https://huggingface.co');
  assert.throws(() => checkScheme(new URL('http://x.example/p'), https, 'The next page'), /The next page to http:\/\/x\.example was refused/);
  assert.throws(() => checkScheme(new URL('data:text/plain,x'), https, 'A redirect'), /A redirect to data: was refused/);
  assert.equal(checkScheme(new URL('http://127.0.0.1:1/p'), new URL('http://127.0.0.1:2'), 'x').href, 'http://127.0.0.1:1/p');
});

test('listing limits grow with the files the model info counts', () => {
  assert.deepEqual(listingLimits(10, { attempts: 8, baseDelayMs: 1, maxDelayMs: 1 }), { pages: 3, requests: 22 });
  assert.equal(listingLimits(10_000).pages, 202);
  assert.equal(listingLimits(0).pages, 3);
});
