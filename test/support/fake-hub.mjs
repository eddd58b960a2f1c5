// A fake Hugging Face Hub for tests and the bench (node http on 127.0.0.1). It speaks what @huggingface/hub and our
// downloader call: model info at a revision (with siblings and the commit sha), the recursive tree listing (sizes,
// git oids, LFS sha256), resolve/<rev>/<file> with Range, LFS files redirected to a second server on another port
// (the "CDN": another origin, so a token must never reach it), 401 for a gated repository without the token, 404
// for unknown repositories, revisions and files, and THUDM/chatglm3-6b answering as a redirect to
// zai-org/chatglm3-6b (the rename). It serves ../shared/fixtures/chatglm3-tiny laid out as a repository: the
// checkpoint split into two safetensors shards with their index, the config, tokenizer stand-ins and remote code;
// and, beside it, ../shared/fixtures/glm4-tiny (GLM-4's layout: its tiktoken rank file, config, shards, licence) as
// THUDM/glm-4-9b-chat at the catalog's pinned commit and as THUDM/codegeex4-all-9b at main (`extraRepos`).
// Knobs (hub.knobs, changeable between requests): cut a response at a byte, corrupt a byte, be slow; and the
// hostile modes of #31: endless pagination, next-page links to another origin, metadata and file requests that fail
// (429/5xx with Retry-After, 403 with a reason) or stall, another X-Repo-Commit. The tree listing is paginated as
// the Hub's is (Link: <…>; rel="next"). With `tls` it speaks https (test/support/tls: a self-signed 127.0.0.1
// certificate, trusted by a child process through NODE_EXTRA_CA_CERTS). It counts the bytes it served per file and
// keeps a log of every request.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { setImmediate } from 'node:timers';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const projectRoot = resolve(here, '..', '..');

/** The tiny checkpoint (CI has ../shared beside the clone; TRITON_CHATGLM_SHARED names another place). */
export function tinyFixtureDir(name = 'chatglm3-tiny') {
  const shared = process.env.TRITON_CHATGLM_SHARED ?? resolve(projectRoot, '..', 'shared');
  const dir = join(shared, 'fixtures', name);
  if (!existsSync(join(dir, 'model.safetensors'))) throw new Error(`the tiny checkpoint is missing: ${dir} (../shared/fixtures/${name} beside the repository)`);
  return dir;
}

/** GLM-4-9B-Chat's pinned revision in the catalog (the download asks for it), and CodeGeeX4's fake main commit. */
export const GLM4_REPO = 'THUDM/glm-4-9b-chat';
export const GLM4_COMMIT = JSON.parse(readFileSync(join(projectRoot, 'triton/model_repository/chatglm3-6b/1/chatglm/catalog.json'), 'utf8'))
  .models.find((m) => m.id === 'glm-4-9b-chat').hub.revision;
export const CODEGEEX4_REPO = 'THUDM/codegeex4-all-9b';
export const CODEGEEX4_COMMIT = 'c0de9e0400000000000000000000000000000004';

/** glm4-tiny laid out as GLM-4's repository: the real tokenizer files, the shards, its index, licence and remote-code stand-ins. */
export function glm4RepositoryFiles({ fixtureDir = tinyFixtureDir('glm4-tiny'), shards = 2 } = {}) {
  const { shards: parts, index } = splitSafetensors(readFileSync(join(fixtureDir, 'model.safetensors')), shards, (i, n) => `model-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`);
  const text = (s) => Buffer.from(s);
  return [
    { path: '.gitattributes', data: text('*.safetensors filter=lfs diff=lfs merge=lfs -text\ntokenizer.model filter=lfs diff=lfs merge=lfs -text\n'), lfs: false },
    { path: 'README.md', data: text('# glm4-tiny (test repository)\n'), lfs: false },
    { path: 'LICENSE', data: text('The GLM-4 License (test stand-in)\n'), lfs: false },
    { path: 'config.json', data: readFileSync(join(fixtureDir, 'config.json')), lfs: false },
    { path: 'tokenizer_config.json', data: readFileSync(join(fixtureDir, 'tokenizer_config.json')), lfs: false },
    { path: 'tokenization_chatglm.py', data: text('# stand-in for the tokenizer remote code (tests)\n'), lfs: false },
    { path: 'modeling_chatglm.py', data: text('# stand-in for the model remote code (tests)\n'), lfs: false },
    { path: 'tokenizer.model', data: readFileSync(join(fixtureDir, 'tokenizer.model')), lfs: true },
    { path: 'model.safetensors.index.json', data: text(JSON.stringify(index, null, 2)), lfs: false },
    ...parts.map((p) => ({ ...p, lfs: true })),
  ];
}

export const CANONICAL_REPO = 'zai-org/chatglm3-6b';
export const RENAMED_REPO = 'THUDM/chatglm3-6b';
export const FAKE_COMMIT = 'c0ffee00000000000000000000000000000000aa';

/** Splits a safetensors file into `parts` valid safetensors files (tensors dealt round-robin) and their index. */
export function splitSafetensors(buffer, parts, name = (i, n) => `model-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`) {
  const headerLen = Number(buffer.readBigUInt64LE(0));
  const header = JSON.parse(buffer.subarray(8, 8 + headerLen).toString('utf8'));
  const data = buffer.subarray(8 + headerLen);
  const names = Object.keys(header).filter((k) => k !== '__metadata__').sort((a, b) => header[a].data_offsets[0] - header[b].data_offsets[0]);
  const groups = Array.from({ length: parts }, () => []);
  names.forEach((n, i) => groups[i % parts].push(n));
  const files = [];
  const weightMap = {};
  let totalSize = 0;
  groups.forEach((group, i) => {
    const fileName = name(i, parts);
    const h = { __metadata__: { format: 'pt' } };
    const chunks = [];
    let offset = 0;
    for (const n of group) {
      const [s, e] = header[n].data_offsets;
      h[n] = { dtype: header[n].dtype, shape: header[n].shape, data_offsets: [offset, offset + (e - s)] };
      chunks.push(data.subarray(s, e));
      offset += e - s;
      weightMap[n] = fileName;
      totalSize += e - s;
    }
    let json = JSON.stringify(h);
    json += ' '.repeat((8 - (json.length % 8)) % 8);
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
    files.push({ path: fileName, data: Buffer.concat([len, Buffer.from(json), ...chunks]) });
  });
  const index = { metadata: { total_size: totalSize }, weight_map: weightMap };
  return { shards: files, index };
}

/** The repository's files: { path, data, lfs }. `bigFile` adds one LFS file of that many bytes (the bench). */
export function tinyRepositoryFiles({ fixtureDir = tinyFixtureDir(), shards = 2, bigFileBytes = 0 } = {}) {
  const { shards: parts, index } = splitSafetensors(readFileSync(join(fixtureDir, 'model.safetensors')), shards);
  const text = (s) => Buffer.from(s);
  const files = [
    { path: '.gitattributes', data: text('*.safetensors filter=lfs diff=lfs merge=lfs -text\ntokenizer.model filter=lfs diff=lfs merge=lfs -text\n'), lfs: false },
    { path: 'README.md', data: text('# chatglm3-tiny (test repository)\n'), lfs: false },
    { path: 'config.json', data: readFileSync(join(fixtureDir, 'config.json')), lfs: false },
    { path: 'tokenizer_config.json', data: text(JSON.stringify({ tokenizer_class: 'ChatGLMTokenizer', auto_map: { AutoTokenizer: ['tokenization_chatglm.ChatGLMTokenizer', null] } })), lfs: false },
    { path: 'tokenization_chatglm.py', data: text('# stand-in for the tokenizer remote code (tests)\n'), lfs: false },
    // A sentencepiece stand-in, kept in LFS as the real one is.
    { path: 'tokenizer.model', data: createHash('sha512').update('tokenizer').digest(), lfs: true },
    { path: 'model.safetensors.index.json', data: text(JSON.stringify(index, null, 2)), lfs: false },
    ...parts.map((p) => ({ ...p, lfs: true })),
    { path: 'images/logo.png', data: text('not selected: not at the top level'), lfs: false },
  ];
  if (bigFileBytes > 0) {
    const big = Buffer.alloc(bigFileBytes);
    for (let i = 0; i < bigFileBytes; i += 4096) big.writeUInt32LE((i * 2654435761) >>> 0, i);
    files.push({ path: 'model-99999-of-99999.safetensors', data: big, lfs: true });
  }
  return files;
}

function gitOid(data) {
  return createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
}
function sha256(data) {
  return createHash('sha256').update(data).digest('hex');
}

function listen(server) {
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok(server.address().port));
  });
}

/** The test certificate for 127.0.0.1 (`tls` option; NODE_EXTRA_CA_CERTS=TEST_CA_PATH trusts it in a child). */
export const TEST_CA_PATH = join(here, 'tls', 'cert.pem');
export function testTls() {
  return { key: readFileSync(join(here, 'tls', 'key.pem')), cert: readFileSync(TEST_CA_PATH) };
}

/**
 * Starts the fake Hub and its CDN. Options: files (default: the tiny repository), commit, extraRepos ([{ repo,
 * commit, files }] served beside it; default GLM-4-9B-Chat and CodeGeeX4 from glm4-tiny), gated (401 without
 * `Bearer <token>`), token, extraListing (entries added to the tree listing as is: hostile names), pageSize (tree
 * entries per page, 1000 as the Hub), tls ({ key, cert }: both servers speak https), noSiblings (the model info
 * does not count the files, as some mirrors).
 * Returns { endpoint, cdnOrigin, files, knobs, stats, log, reset(), close() }.
 *   knobs.cut = { file, atByte, times }: the response carrying byte `atByte` of `file` ends there (socket destroyed)
 *   knobs.corrupt = { file, atByte, times }: that byte is served flipped
 *   knobs.bytesPerSecond: throttle every file response
 *   knobs.ignoreRange: answer 200 with the whole file to a Range request
 *   knobs.redirectTo: an absolute URL LFS files are redirected to instead of the CDN (e.g. http://… from https)
 *   knobs.endlessPages: every tree page links a next one (empty pages past the end), without end
 *   knobs.nextPageOrigin: the origin the next-page links name (e.g. http://… from an https Hub)
 *   knobs.failMetadata = { route: 'revision'|'tree', status, times, retryAfter?, body? }: answer that instead
 *   knobs.stallMetadata = { route, times }: take the request and never answer
 *   knobs.failFile = { file, status, times, retryAfter?, body? }: the resolve route answers that instead
 *   knobs.repoCommit: the X-Repo-Commit the resolve route names (another commit than the listing's)
 *   stats.bytes (all files), stats.byFile[path], stats.requests[path]
 *   log: { server: 'hub'|'cdn', method, url, range, authorization }
 */
export async function startFakeHub(options = {}) {
  const commit = options.commit ?? FAKE_COMMIT;
  const prepare = (files) => files.map((f) => ({ ...f, size: f.data.length, oid: gitOid(f.data), sha256: sha256(f.data) }));
  const repoFiles = prepare(options.files ?? tinyRepositoryFiles());
  const extraRepos = options.extraRepos ?? [
    { repo: GLM4_REPO, commit: GLM4_COMMIT, files: glm4RepositoryFiles() },
    { repo: CODEGEEX4_REPO, commit: CODEGEEX4_COMMIT, files: glm4RepositoryFiles() },
  ];
  /** Every repository served: its commit (also answered to as main), its files by path; the first is ChatGLM3's. */
  const repos = new Map([[CANONICAL_REPO, { commit, files: repoFiles }], ...extraRepos.map((r) => [r.repo, { commit: r.commit, files: prepare(r.files) }])]);
  for (const r of repos.values()) r.byPath = new Map(r.files.map((f) => [f.path, f]));
  const bySha = new Map([...repos.values()].flatMap((r) => r.files.filter((f) => f.lfs).map((f) => [f.sha256, f])));
  const fresh = () => ({
    cut: undefined, corrupt: undefined, bytesPerSecond: 0, ignoreRange: false, redirectTo: undefined,
    endlessPages: false, nextPageOrigin: undefined, failMetadata: undefined, stallMetadata: undefined, failFile: undefined, repoCommit: undefined,
  });
  const knobs = fresh();
  const pageSize = options.pageSize ?? 1000;
  const createServer = options.tls ? (handler) => createHttpsServer(options.tls, handler) : (handler) => createHttpServer(handler);
  const scheme = options.tls ? 'https' : 'http';
  const stats = { bytes: 0, byFile: {}, requests: {} };
  const log = [];
  let cdnOrigin = '';

  const json = (res, status, body, headers = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const authorized = (req) => !options.gated || req.headers.authorization === `Bearer ${options.token}`;
  /** A failure knob that applies to this request (and uses one of its times), or undefined. */
  const take = (knob, matches) => {
    if (!knob || !matches || (knob.times ?? 1) <= 0) return undefined;
    knob.times = (knob.times ?? 1) - 1;
    return knob;
  };
  const fail = (res, f) => {
    res.writeHead(f.status, { 'content-type': 'application/json', ...(f.retryAfter !== undefined ? { 'retry-after': String(f.retryAfter) } : {}) });
    res.end(JSON.stringify(f.body ?? { error: `failing on purpose (HTTP ${f.status})` }));
  };

  function serveFile(req, res, f, headers = {}) {
    stats.requests[f.path] = (stats.requests[f.path] ?? 0) + 1;
    let start = 0;
    let end = f.size - 1;
    let status = 200;
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (range && !knobs.ignoreRange) {
      start = Number(range[1]);
      if (range[2]) end = Math.min(end, Number(range[2]));
      if (start >= f.size) {
        res.writeHead(416, { 'content-range': `bytes */${f.size}` });
        res.end();
        return;
      }
      status = 206;
    }
    const h = {
      'content-type': 'application/octet-stream', 'content-length': String(end - start + 1), 'accept-ranges': 'bytes',
      etag: `"${f.lfs ? f.sha256 : f.oid}"`, ...headers,
    };
    if (status === 206) h['content-range'] = `bytes ${start}-${end}/${f.size}`;
    res.writeHead(status, h);
    if (req.method === 'HEAD') return void res.end();
    let body = f.data.subarray(start, end + 1);
    const corrupt = knobs.corrupt;
    if (corrupt && corrupt.file === f.path && corrupt.times > 0 && corrupt.atByte >= start && corrupt.atByte <= end) {
      corrupt.times -= 1;
      body = Buffer.from(body);
      body[corrupt.atByte - start] ^= 0xff;
    }
    let stopAt = body.length;
    const cut = knobs.cut;
    let cutting = false;
    if (cut && cut.file === f.path && (cut.times ?? 1) > 0 && cut.atByte >= start && cut.atByte <= end) {
      cut.times = (cut.times ?? 1) - 1;
      stopAt = cut.atByte - start;
      cutting = true;
    }
    const chunk = 64 * 1024;
    let pos = 0;
    const count = (n) => {
      stats.bytes += n;
      stats.byFile[f.path] = (stats.byFile[f.path] ?? 0) + n;
    };
    const step = () => {
      if (res.destroyed) return;
      if (pos >= stopAt) {
        if (cutting) {
          // Let what was written reach the client, then drop the connection (a cut mid-file).
          res.socket?.end();
          setTimeout(() => res.destroy(), 20);
        } else res.end();
        return;
      }
      const n = Math.min(chunk, stopAt - pos);
      const ok = res.write(body.subarray(pos, pos + n));
      count(n);
      pos += n;
      const next = () => (knobs.bytesPerSecond > 0 ? setTimeout(step, Math.ceil((n / knobs.bytesPerSecond) * 1000)) : setImmediate(step));
      if (ok) next();
      else res.once('drain', next);
    };
    step();
  }

  const cdn = createServer((req, res) => {
    log.push({ server: 'cdn', method: req.method, url: req.url, range: req.headers.range, authorization: req.headers.authorization });
    const m = /^\/cdn\/([0-9a-f]{64})(?:\?.*)?$/.exec(req.url ?? '');
    const f = m && bySha.get(m[1]);
    if (!f) return json(res, 404, { error: 'not found' });
    serveFile(req, res, f);
  });

  const hub = createServer((req, res) => {
    log.push({ server: 'hub', method: req.method, url: req.url, range: req.headers.range, authorization: req.headers.authorization });
    const url = new URL(req.url ?? '/', 'http://hub');
    const path = decodeURIComponent(url.pathname);
    // The rename: the old name answers with a redirect to the new one, on every route.
    for (const prefix of [`/api/models/${RENAMED_REPO}/`, `/${RENAMED_REPO}/`]) {
      if (path.startsWith(prefix)) {
        res.writeHead(307, { location: url.pathname.replace(RENAMED_REPO, CANONICAL_REPO) + url.search });
        return void res.end();
      }
    }
    const api = /^\/api\/models\/([^/]+\/[^/]+)\/(revision|tree)\/([^/]+)(?:\/.*)?$/.exec(path);
    const resolveRoute = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    const repo = api?.[1] ?? resolveRoute?.[1];
    if (!repo) return json(res, 404, { error: 'not found' });
    const served = repos.get(repo);
    if (!served) return json(res, 404, { error: 'Repository not found' }, { 'x-error-code': 'RepoNotFound' });
    if (!authorized(req)) return json(res, 401, { error: `Access to model ${repo} is restricted. You must have access to it and be authenticated to access it.` }, { 'x-error-code': 'GatedRepo' });
    const rev = api?.[3] ?? resolveRoute?.[2];
    const extraListing = repo === CANONICAL_REPO ? (options.extraListing ?? []) : [];
    if (rev !== 'main' && rev !== served.commit) return json(res, 404, { error: `Invalid rev id: ${rev}` }, { 'x-error-code': 'RevisionNotFound' });
    if (api) {
      if (take(knobs.stallMetadata, knobs.stallMetadata?.route === api[2])) return; // never answered (closed with the server)
      const failure = take(knobs.failMetadata, knobs.failMetadata?.route === api[2]);
      if (failure) return fail(res, failure);
    }
    if (api?.[2] === 'revision') {
      return json(res, 200, {
        _id: '6540ab12cd34ef5678901234', id: repo, private: false, pipeline_tag: 'text-generation', gated: options.gated ? 'manual' : false,
        downloads: 1, likes: 1, lastModified: '2024-01-01T00:00:00.000Z', sha: served.commit,
        ...(options.noSiblings ? {} : { siblings: [...served.files.map((f) => ({ rfilename: f.path })), ...extraListing.map((e) => ({ rfilename: e.path }))] }),
      });
    }
    if (api?.[2] === 'tree') {
      const entries = [...served.files.map((f) => ({
        type: 'file', oid: f.oid, size: f.size, path: f.path,
        ...(f.lfs ? { lfs: { oid: f.sha256, size: f.size, pointerSize: 134 } } : {}),
      })), ...extraListing];
      const cursor = Number(url.searchParams.get('cursor') ?? 0);
      const page = entries.slice(cursor, cursor + pageSize);
      const more = knobs.endlessPages || cursor + pageSize < entries.length;
      const next = new URL(url.pathname + url.search, knobs.nextPageOrigin ?? `${scheme}://${req.headers.host}`);
      next.searchParams.set('cursor', String(cursor + pageSize));
      return json(res, 200, page, more ? { link: `<${next.href}>; rel="next"` } : {});
    }
    const f = served.byPath.get(resolveRoute[3]);
    if (!f) return json(res, 404, { error: 'Entry not found' }, { 'x-error-code': 'EntryNotFound' });
    const failure = take(knobs.failFile, knobs.failFile?.file === f.path);
    if (failure) return fail(res, failure);
    const linked = { 'x-repo-commit': knobs.repoCommit ?? served.commit, 'x-linked-size': String(f.size), 'x-linked-etag': `"${f.lfs ? f.sha256 : f.oid}"` };
    if (f.lfs) {
      const target = knobs.redirectTo ?? `${cdnOrigin}/cdn/${f.sha256}?expires=1`;
      res.writeHead(302, { location: target, ...linked });
      return void res.end();
    }
    serveFile(req, res, f, linked);
  });

  const [hubPort, cdnPort] = [await listen(hub), await listen(cdn)];
  cdnOrigin = `${scheme}://127.0.0.1:${cdnPort}`;
  return {
    endpoint: `${scheme}://127.0.0.1:${hubPort}`,
    cdnOrigin,
    commit,
    files: repoFiles,
    /** Every repository served by name: { commit, files }. */
    repos: Object.fromEntries([...repos].map(([name, r]) => [name, { commit: r.commit, files: r.files }])),
    knobs,
    stats,
    log,
    reset() {
      Object.assign(knobs, fresh());
      stats.bytes = 0;
      stats.byFile = {};
      stats.requests = {};
      log.length = 0;
    },
    close() {
      hub.closeAllConnections?.();
      cdn.closeAllConnections?.();
      return Promise.all([new Promise((r) => hub.close(r)), new Promise((r) => cdn.close(r))]);
    },
  };
}

// `node test/support/fake-hub.mjs` serves the tiny repository until killed (prints the endpoint).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  void startFakeHub().then((hub) => process.stdout.write(`${hub.endpoint}\n`));
}
