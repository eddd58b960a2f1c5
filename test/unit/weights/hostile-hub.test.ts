// The downloader against the fake Hub's hostile modes (#31, items 1-5, 7 and 8): empty files, no Python file ever
// fetched (#29), a file named
// like our manifest, names we would or would not download (escaped when refused), endless pagination, metadata requests that fail, stall or ask to wait (Retry-After), a 403 with
// its reason, another commit's file, a `data:` redirect and a token over plain http; and the acceptance case (empty
// files, non-ASCII names in other folders and 10,000 entries). Item 6 (https → http next page): cli-download.test.ts.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { escapeForMessage } from '../../../src/core/text/escapeForMessage';
import {
  checkCompleteness, CHATGLM_REPO, downloadWeights, listingLimits, MANIFEST_NAME, parseRetryAfter, readManifest, retryDelayMs, snapshotPaths,
  type DownloadEvent, type DownloadOptions,
} from '../../../src/core/weights';
import { fakeHubSuite } from './support/fakeHubSuite';

interface FakeHub {
  endpoint: string;
  files: { path: string; size: number; sha256: string; oid: string; lfs: boolean }[];
  knobs: Record<string, unknown>;
  stats: { bytes: number; byFile: Record<string, number> };
  log: { server: string; url: string; authorization?: string }[];
  reset(): void;
  close(): Promise<void>;
}
interface FakeHubModule {
  FAKE_COMMIT: string;
  startFakeHub(o?: object): Promise<FakeHub>;
  tinyRepositoryFiles(): { path: string; data: Buffer; lfs: boolean }[];
}
let fakeHub: FakeHubModule;
let hub: FakeHub;
const FAST_RETRY = { attempts: 4, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 5_000 };
const PLENTY = async () => 1e15;
const IGNORED_BY_SELECTION = ['README.md', '.gitattributes', 'images/logo.png', 'tokenization_chatglm.py'];
/** Requests for a page of the file list (after the rename's redirect: the old name's first request is not counted). */
const treePages = (h: FakeHub) => h.log.filter((l) => l.url.startsWith('/api/models/zai-org/chatglm3-6b/tree/')).length;

const suite = fakeHubSuite<FakeHubModule, FakeHub>('hostile-hub-', (m, h) => {
  fakeHub = m;
  hub = h;
});

const cacheDir = (): string => suite.tmp();

function options(cache: string, extra: Partial<DownloadOptions> = {}): DownloadOptions & { events: DownloadEvent[] } {
  const events: DownloadEvent[] = [];
  return { cacheDir: cache, endpoint: hub.endpoint, retry: FAST_RETRY, freeBytes: PLENTY, onEvent: (e) => events.push(e), events, ...extra };
}

async function withHub<T>(o: object, run: (h: FakeHub) => Promise<T>): Promise<T> {
  const h = await fakeHub.startFakeHub(o);
  try {
    return await run(h);
  } finally {
    await h.close();
  }
}

const rejectsWith = (code: string, check: (e: Error & { facts: Record<string, unknown> }) => void = () => undefined) => (e: Error & { code?: string; facts: Record<string, unknown> }) => {
  assert.equal(e.code, code, e.message);
  check(e);
  return true;
};

test('1: empty files in the listing are downloaded (no request needed), verified and linked; a second run passes too', async () => {
  const files = [...fakeHub.tinyRepositoryFiles(), { path: 'special_tokens_map.json', data: Buffer.alloc(0), lfs: false }, { path: 'generation_config.json', data: Buffer.alloc(0), lfs: false }];
  await withHub({ files }, async (h) => {
    const cache = cacheDir();
    const result = await downloadWeights({ ...options(cache), endpoint: h.endpoint });
    for (const name of ['special_tokens_map.json', 'generation_config.json']) {
      assert.equal(statSync(join(result.snapshotDir, name)).size, 0, name);
      assert.ok(lstatSync(join(result.snapshotDir, name)).isSymbolicLink());
    }
    const { blobsDir } = snapshotPaths(cache, CHATGLM_REPO, result.commit);
    assert.ok(readdirSync(blobsDir).includes('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'), 'the empty blob is stored under its git object id');
    const manifest = await readManifest(result.snapshotDir);
    assert.ok(manifest && manifest !== 'invalid' && manifest.complete);
    assert.equal(manifest.files.find((f) => f.path === 'special_tokens_map.json')?.sha256, createHash('sha256').update('').digest('hex'));
    assert.equal((await checkCompleteness(result.snapshotDir)).complete, true);
    await downloadWeights({ ...options(cache), endpoint: h.endpoint });
  });
});

test('no Python file is ever downloaded: the remote code of a listing (top level, any name) is ignored, never fetched', async () => {
  const code = (path: string) => ({ path, data: Buffer.from('raise SystemExit("remote code ran")\n'), lfs: false });
  const files = [...fakeHub.tinyRepositoryFiles(), code('modeling_chatglm.py'), code('configuration_chatglm.py'), code('quantization.py'), code('__init__.py')];
  await withHub({ files }, async (h) => {
    const o = { ...options(cacheDir()), endpoint: h.endpoint };
    const result = await downloadWeights(o);
    const python = h.files.filter((f) => f.path.endsWith('.py')).map((f) => f.path);
    assert.equal(python.length, 5, 'the listing has the tokenizer\'s and four more Python files');
    const resolved = o.events.find((e) => e.type === 'resolved');
    assert.ok(resolved && resolved.type === 'resolved');
    assert.deepEqual(resolved.plan.files.filter((f) => f.path.endsWith('.py')), [], 'none is planned');
    assert.equal(resolved.plan.ignored, IGNORED_BY_SELECTION.length + 4, 'each is counted as ignored');
    assert.deepEqual(h.log.filter((l) => /\.py(?:$|\?)/.test(l.url)).map((l) => l.url), [], 'none is requested');
    assert.deepEqual(readdirSync(result.snapshotDir).filter((n) => n.endsWith('.py')), [], 'none is in the snapshot');
    assert.equal((await checkCompleteness(result.snapshotDir)).complete, true);
  });
});

test('2: a listed file named like our manifest (old or new name) is never downloaded; our manifest is ours and complete', async () => {
  const fake = JSON.stringify({ version: 1, complete: true, repo: CHATGLM_REPO, revision: 'main', commit: 'f'.repeat(40), endpoint: 'x', format: 'safetensors', files: [], startedAt: '' });
  const files = [...fakeHub.tinyRepositoryFiles(), { path: '.triton-chatglm-download.json', data: Buffer.from(fake), lfs: false }, { path: MANIFEST_NAME, data: Buffer.from(fake), lfs: false }];
  await withHub({ files }, async (h) => {
    const cache = cacheDir();
    const { snapshotDir } = snapshotPaths(cache, CHATGLM_REPO, fakeHub.FAKE_COMMIT);
    const during: boolean[] = [];
    const o = options(cache, {
      endpoint: h.endpoint,
      onEvent: (e) => {
        if (e.type === 'file-done') during.push((JSON.parse(readFileSync(join(snapshotDir, MANIFEST_NAME), 'utf8')) as { complete: boolean }).complete);
      },
    });
    await downloadWeights(o);
    assert.ok(during.length > 0 && during.every((c) => c === false), 'while it runs, the manifest path holds ours, incomplete');
    assert.ok(!h.log.some((l) => l.url.includes('triton-chatglm-download')), 'neither name was requested');
    assert.ok(lstatSync(join(snapshotDir, MANIFEST_NAME)).isFile());
    const manifest = await readManifest(snapshotDir);
    assert.ok(manifest && manifest !== 'invalid' && manifest.complete);
    assert.equal(manifest.commit, fakeHub.FAKE_COMMIT);
    assert.ok(!manifest.files.some((f) => f.path.includes('triton-chatglm-download')));
    assert.equal((await checkCompleteness(snapshotDir)).complete, true);
    h.reset();
    await downloadWeights({ ...options(cache), endpoint: h.endpoint });
    assert.equal(h.stats.bytes, 0, 'a second run finds it complete');
  });
});

test('2: the completeness check is not satisfied by a link (a served file) in the manifest\'s place', async () => {
  const dir = cacheDir();
  const blob = join(dir, 'blob.json');
  writeFileSync(blob, JSON.stringify({ version: 1, complete: true, commit: 'f'.repeat(40), files: [] }));
  mkdirSync(join(dir, 'snap'));
  symlinkSync(blob, join(dir, 'snap', MANIFEST_NAME));
  assert.equal(await readManifest(join(dir, 'snap')), 'invalid');
  assert.deepEqual(await checkCompleteness(join(dir, 'snap')), { complete: false, problem: 'download-incomplete' });
});

test('3, 4: a file we would download with a backslash, a drive letter or a control character refuses the listing, named escaped', async () => {
  for (const path of ['dir\\..\\evil.json', 'C:evil.json', '..\\evil.json', 'new\nerror: fake line.json', 'x\u001b[2Jy.json', 'a\u202Egnp.json']) {
    const bad = await fakeHub.startFakeHub({ extraListing: [{ type: 'file', oid: 'a'.repeat(40), size: 10, path }] });
    const cache = cacheDir();
    try {
      await assert.rejects(downloadWeights({ ...options(cache), endpoint: bad.endpoint }), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'listing-refused', path);
        assert.ok(e.message.includes(escapeForMessage(path)), e.message);
        assert.ok(![...e.message].some((c) => c.charCodeAt(0) < 0x20 || c === '\u202e'), 'no control or bidi character reaches the message');
        return true;
      });
      assert.deepEqual(readdirSync(cache), [], `nothing written for ${JSON.stringify(path)}`);
      assert.ok(!bad.log.some((l: { url: string }) => l.url.includes('/resolve/')));
    } finally {
      await bad.close();
    }
  }
});

test('3: names we would never download are ignored, not fatal: other folders, non-ASCII, spaces, parent segments, controls', async () => {
  const hostile = ['../evil', 'a/../../evil.json', '/etc/passwd.json', 'docs/说明.md', 'images/logo (1).png', '说明.md', 'sub/\u0001x.json', 'x\ny/z.bin', 'README 2.md'];
  const bad = await fakeHub.startFakeHub({ extraListing: hostile.map((path) => ({ type: 'file', oid: 'b'.repeat(40), size: 3, path })) });
  const cache = cacheDir();
  try {
    const o = { ...options(cache), endpoint: bad.endpoint };
    const result = await downloadWeights(o);
    const resolved = o.events.find((e) => e.type === 'resolved');
    assert.ok(resolved && resolved.type === 'resolved');
    assert.equal(resolved.plan.ignored, hostile.length + IGNORED_BY_SELECTION.length, 'the hostile entries, README, .gitattributes, the image and the tokenizer\'s Python file are counted as ignored');
    assert.deepEqual(readdirSync(result.snapshotDir).filter((n) => n !== MANIFEST_NAME).sort(), bad.files.filter((f) => !IGNORED_BY_SELECTION.includes(f.path)).map((f) => f.path).sort());
    assert.deepEqual(readdirSync(cache), ['models--THUDM--chatglm3-6b'], 'nothing beside the repository folder');
    assert.equal((await checkCompleteness(result.snapshotDir)).complete, true);
  } finally {
    await bad.close();
  }
});

test('5: a listing whose next page never ends stops at its page limit, with an error naming it; nothing written', async () => {
  await withHub({ pageSize: 5 }, async (h) => {
    h.knobs.endlessPages = true;
    const cache = cacheDir();
    const { pages } = listingLimits(h.files.length);
    await assert.rejects(downloadWeights({ ...options(cache), endpoint: h.endpoint }), rejectsWith('listing-too-long', (e) => {
      assert.match(e.message, new RegExp(`did not end within ${pages} pages \\(the limit for the ${h.files.length} files`));
      assert.equal(e.facts.limit, pages);
    }));
    assert.equal(treePages(h), pages, 'exactly the page limit of requests');
    assert.deepEqual(readdirSync(cache), []);
  });
});

test('5: a paginated listing (the Hub\'s Link: rel="next") is followed to its end', async () => {
  await withHub({ pageSize: 4 }, async (h) => {
    const o = { ...options(cacheDir()), endpoint: h.endpoint };
    await downloadWeights(o);
    assert.equal(treePages(h), Math.ceil(h.files.length / 4));
  });
});

test('7: metadata requests are retried: 429 with Retry-After on the model info, 500 on the file list', async () => {
  hub.knobs.failMetadata = { route: 'revision', status: 429, times: 1, retryAfter: 1 };
  const o = options(cacheDir());
  await downloadWeights(o);
  const retries = o.events.filter((e) => e.type === 'retry');
  assert.equal(retries.length, 1);
  assert.ok(retries[0]!.type === 'retry' && retries[0]!.delayMs === 1000, 'Retry-After: 1 is honoured over the 1 ms backoff');
  hub.reset();
  hub.knobs.failMetadata = { route: 'tree', status: 500, times: 2 };
  const again = options(cacheDir());
  await downloadWeights(again);
  assert.equal(again.events.filter((e) => e.type === 'retry').length, 2);
});

test('7: a metadata request that keeps failing ends with what failed and how often', async () => {
  hub.knobs.failMetadata = { route: 'revision', status: 503, times: 100 };
  await assert.rejects(downloadWeights(options(cacheDir())), rejectsWith('hub-error', (e) => {
    assert.match(e.message, /HTTP 503 \(4 tries in a row\)/);
    assert.equal(e.facts.status, 503);
  }));
});

test('7: a stalled metadata request times out, is retried, and the error says what timed out and after how long', async () => {
  hub.knobs.stallMetadata = { route: 'tree', times: 100 };
  await assert.rejects(downloadWeights(options(cacheDir(), { retry: { ...FAST_RETRY, attempts: 2, timeoutMs: 1500 } })), rejectsWith('network', (e) => {
    assert.match(e.message, /^The file list of .+ from http:\/\/127\.0\.0\.1:\d+: no answer within 1\.5 s \(2 tries in a row\)\.$/);
    assert.equal(e.facts.timeoutMs, 1500);
  }));
  assert.equal(treePages(hub), 2);
});

test('7: a file request honours Retry-After (seconds); an HTTP date and a cap are read the same way', async () => {
  hub.knobs.failFile = { file: 'config.json', status: 503, times: 1, retryAfter: 1 };
  const o = options(cacheDir());
  await downloadWeights(o);
  const retry = o.events.find((e) => e.type === 'retry');
  assert.ok(retry && retry.type === 'retry' && retry.file === 'config.json' && retry.delayMs === 1000);
  const now = Date.parse('Sat, 05 Dec 2026 10:00:00 GMT');
  assert.equal(parseRetryAfter('3', now), 3000);
  assert.equal(parseRetryAfter('Sat, 05 Dec 2026 10:00:07 GMT', now), 7000);
  assert.equal(parseRetryAfter('Sat, 05 Dec 2026 09:59:00 GMT', now), 0);
  assert.equal(parseRetryAfter('soon', now), undefined);
  assert.equal(retryDelayMs({ attempts: 8, baseDelayMs: 1000, maxDelayMs: 30_000, retryAfterMaxMs: 120_000 }, 1, 3_600_000), 120_000, 'capped');
  assert.equal(retryDelayMs({ attempts: 8, baseDelayMs: 1000, maxDelayMs: 30_000 }, 3, 1000), 4000, 'never shorter than the backoff');
});

test('8: a 403 with a token keeps the server\'s reason and does not say "set a token"; without one it does', async () => {
  const reason = 'You are not in the authorized list of zai-org/chatglm3-6b.\u001b[31m';
  hub.knobs.failMetadata = { route: 'revision', status: 403, times: 1, body: { error: reason } };
  await assert.rejects(downloadWeights(options(cacheDir(), { token: 'hf_wrong_token_0123' })), rejectsWith('hub-unauthorized', (e) => {
    assert.ok(e.message.includes('You are not in the authorized list of zai-org/chatglm3-6b.\\u{1B}[31m'), e.message);
    assert.doesNotMatch(e.message, /Set a Hugging Face token/);
    assert.equal(e.facts.tokenSent, true);
    assert.ok(!e.message.includes('hf_wrong_token_0123'));
  }));
  hub.knobs.failMetadata = { route: 'revision', status: 403, times: 1, body: { error: reason } };
  await assert.rejects(downloadWeights(options(cacheDir())), rejectsWith('hub-unauthorized', (e) => {
    assert.match(e.message, /Set a Hugging Face token/);
    assert.equal(e.facts.tokenSent, false);
  }));
  hub.knobs.failFile = { file: 'config.json', status: 403, times: 1, body: { error: 'Your token has expired' } };
  await assert.rejects(downloadWeights(options(cacheDir(), { token: 'hf_expired_0123' })), rejectsWith('hub-unauthorized', (e) => {
    assert.match(e.message, /config\.json .*although a Hugging Face token was sent.*The server said: "Your token has expired"/);
  }));
});

test('8: a checksum mismatch names the other commit the server said the file came from (X-Repo-Commit)', async () => {
  hub.knobs.corrupt = { file: 'config.json', atByte: 3, times: 2 };
  hub.knobs.repoCommit = 'd'.repeat(40);
  await assert.rejects(downloadWeights(options(cacheDir())), rejectsWith('checksum-mismatch', (e) => {
    assert.match(e.message, new RegExp(`comes from commit ${'d'.repeat(40)}, not ${fakeHub.FAKE_COMMIT}`));
    assert.equal(e.facts.servedCommit, 'd'.repeat(40));
  }));
  hub.reset();
  hub.knobs.corrupt = { file: 'config.json', atByte: 3, times: 2 };
  await assert.rejects(downloadWeights(options(cacheDir())), rejectsWith('checksum-mismatch', (e) => assert.doesNotMatch(e.message, /comes from commit/)));
});

test('8: a redirect to data: is refused and shown as "data:", not "data://"', async () => {
  hub.knobs.redirectTo = 'data:text/plain,hello';
  await assert.rejects(downloadWeights(options(cacheDir())), rejectsWith('redirect-refused', (e) => {
    assert.match(e.message, /A redirect to data: was refused/);
    assert.doesNotMatch(e.message, /data:\/\//);
  }));
});

test('8: a token is never sent over plain http to a host that is not this machine (refused before any request)', async () => {
  const cache = cacheDir();
  await assert.rejects(downloadWeights(options(cache, { endpoint: 'http://hub.example.invalid', token: 'hf_secret_0123' })), rejectsWith('token-insecure', (e) => {
    assert.match(e.message, /plain http: the Hugging Face token would travel in cleartext, so nothing was sent/);
    assert.ok(!e.message.includes('hf_secret_0123'));
  }));
  assert.deepEqual(readdirSync(cache), []);
  // Without a token the same endpoint is only a network question (it does not exist); loopback http takes a token.
  await assert.rejects(downloadWeights(options(cacheDir(), { endpoint: 'http://hub.example.invalid', retry: { ...FAST_RETRY, attempts: 1 } })), rejectsWith('network'));
  await downloadWeights(options(cacheDir(), { token: 'hf_loopback_0123' }));
});

test('acceptance: empty files, non-ASCII names in other folders and 10,000 entries: the download completes', async () => {
  const extraListing = Array.from({ length: 10_000 }, (_, i) => ({ type: 'file', oid: createHash('sha1').update(String(i)).digest('hex'), size: i, path: `docs/说明 ${i}/页面-${i}.md` }));
  const files = [...fakeHub.tinyRepositoryFiles(), { path: 'special_tokens_map.json', data: Buffer.alloc(0), lfs: false }];
  await withHub({ files, extraListing }, async (h) => {
    const o = { ...options(cacheDir()), endpoint: h.endpoint };
    const result = await downloadWeights(o);
    const resolved = o.events.find((e) => e.type === 'resolved');
    assert.ok(resolved && resolved.type === 'resolved');
    assert.equal(resolved.plan.ignored, 10_000 + IGNORED_BY_SELECTION.length);
    assert.ok(resolved.plan.files.some((f) => f.path === 'special_tokens_map.json'));
    assert.equal(treePages(h), Math.ceil((h.files.length + 10_000) / 1000), 'every page of 1,000 asked once');
    assert.equal((await checkCompleteness(result.snapshotDir)).complete, true);
  });
});
