// The download fetches the chosen model (#29): the catalog's repository, revision (GLM-4-9B-Chat's pinned commit),
// required files and weight format, never a .py; several models side by side in one Hub cache; "newer than tested"
// only against the catalog's tested commit; and the licence before it — shown always, accepted once per model where
// commercial use is not plainly allowed (the CLI refuses without --accept-license the first time, naming the URL).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { download } from '../../../src/cli/download';
import { parseCli } from '../../../src/cli/options';
import { catalogModel, licenseGate, licenseLanguage, licenseNotice, type CatalogModel } from '../../../src/core/models';
import { resolveModelWeights, validateWeights } from '../../../src/core/server';
import { downloadWeights, parseEndpoint, planDownload, selectFiles, type HubFile } from '../../../src/core/weights';
import { fakeHubSuite } from './support/fakeHubSuite';

interface FakeHub {
  endpoint: string;
  commit: string;
  log: { url: string }[];
  repos: Record<string, { commit: string; files: { path: string }[] }>;
  reset(): void;
  close(): Promise<unknown>;
}
interface FakeHubModule {
  GLM4_COMMIT: string;
  CODEGEEX4_COMMIT: string;
  startFakeHub(o?: object): Promise<FakeHub>;
}

const model = (id: string): CatalogModel => catalogModel(id)!;
const GLM4 = model('glm-4-9b-chat');
const CODEGEEX4 = model('codegeex4-all-9b');
const CHATGLM3 = model('chatglm3-6b');
let fakeHub: FakeHubModule;
let hub: FakeHub;
const suite = fakeHubSuite<FakeHubModule, FakeHub>('model-download-', (m, h) => {
  fakeHub = m;
  hub = h;
});
const tmp = () => suite.tmp();

const access = () => ({ endpoint: parseEndpoint(hub.endpoint) });

test('the plan for GLM-4-9B-Chat: its repository at the pinned commit, safetensors with the tokenizer and licence, no .py', async () => {
  const cacheDir = tmp();
  const plan = await planDownload({ model: GLM4, cacheDir }, access());
  assert.equal(plan.model, 'glm-4-9b-chat');
  assert.equal(plan.repo, 'THUDM/glm-4-9b-chat');
  assert.equal(plan.revision, GLM4.hub.revision);
  assert.equal(plan.commit, fakeHub.GLM4_COMMIT);
  assert.equal(plan.format, 'safetensors');
  assert.deepEqual(plan.files.map((f) => f.path), [
    'LICENSE', 'config.json', 'tokenizer.model', 'tokenizer_config.json', 'model.safetensors.index.json',
    'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors',
  ]);
  assert.equal(plan.newerThanTested, false, 'no tested commit in the catalog: no remark');
  assert.equal(plan.snapshotDir, join(cacheDir, 'models--THUDM--glm-4-9b-chat', 'snapshots', fakeHub.GLM4_COMMIT));
  // It asked GLM-4's repository at the pinned commit, never ChatGLM3's.
  assert.ok(hub.log.some((l) => l.url.includes(`/api/models/THUDM/glm-4-9b-chat/revision/${GLM4.hub.revision}`)));
  assert.ok(!hub.log.some((l) => /chatglm3-6b/.test(l.url)));
});

test('the plan for CodeGeeX4-ALL-9B: its own repository at main; ChatGLM3 still compares with its tested commit', async () => {
  const plan = await planDownload({ model: CODEGEEX4, cacheDir: tmp() }, access());
  assert.deepEqual([plan.repo, plan.revision, plan.commit, plan.newerThanTested], ['THUDM/codegeex4-all-9b', 'main', fakeHub.CODEGEEX4_COMMIT, false]);
  assert.ok(!plan.files.some((f) => f.path.endsWith('.py')));
  const chatglm3 = await planDownload({ model: CHATGLM3, cacheDir: tmp() }, access());
  assert.deepEqual([chatglm3.repo, chatglm3.newerThanTested], ['THUDM/chatglm3-6b', true]);
});

test('a revision without the model\'s weight format or a required file is refused before anything is fetched', () => {
  const file = (path: string): HubFile => ({ path, size: 1, gitOid: 'a'.repeat(40) });
  const spec = { repo: GLM4.hub.repo, required: GLM4.files.required, weights: GLM4.files.weights };
  assert.throws(() => selectFiles([file('config.json'), file('tokenizer.model'), file('pytorch_model.bin')], spec), /THUDM\/glm-4-9b-chat.*has no \*\.safetensors weight files/);
  assert.throws(() => selectFiles([file('config.json'), file('model.safetensors')], spec), /has no tokenizer\.model/);
  // ChatGLM3 takes .bin when a revision has no safetensors.
  assert.equal(selectFiles([file('config.json'), file('tokenizer.model'), file('pytorch_model.bin')], { repo: CHATGLM3.hub.repo, required: CHATGLM3.files.required, weights: CHATGLM3.files.weights }).format, 'bin');
});

test('GLM-4 and ChatGLM3 downloaded into one cache lie side by side, and each model resolves to its own', async () => {
  const cacheDir = tmp();
  const glm4 = await downloadWeights({ model: GLM4, cacheDir, endpoint: hub.endpoint, freeBytes: async () => 1e15 });
  const chatglm3 = await downloadWeights({ model: CHATGLM3, cacheDir, endpoint: hub.endpoint, freeBytes: async () => 1e15 });
  assert.notEqual(glm4.repoDir, chatglm3.repoDir);
  await validateWeights(glm4.snapshotDir, GLM4);
  await validateWeights(chatglm3.snapshotDir, CHATGLM3);
  await assert.rejects(validateWeights(glm4.snapshotDir, CHATGLM3), /it holds GLM-4-9B-Chat/);
  assert.equal((await resolveModelWeights(GLM4, chatglm3.snapshotDir, [cacheDir])).source === 'cache', true);
  const resolved = await resolveModelWeights(GLM4, chatglm3.snapshotDir, [cacheDir]);
  assert.equal(resolved.source === 'cache' && resolved.path, glm4.snapshotDir);
  assert.deepEqual(await resolveModelWeights(CHATGLM3, chatglm3.snapshotDir, [cacheDir]), { source: 'setting', path: chatglm3.snapshotDir });
});

test('the licence gate: shown in the front end\'s language; asked until accepted where commercial use is not plainly allowed', () => {
  assert.equal(licenseLanguage('zh-cn'), 'zh-cn');
  assert.equal(licenseLanguage('zh-CN'), 'zh-cn');
  assert.equal(licenseLanguage('en'), 'en');
  assert.equal(licenseLanguage(undefined), 'en');
  const zh = licenseNotice(CODEGEEX4, 'zh-cn');
  assert.deepEqual([zh.name, zh.url, zh.keyTerms], [CODEGEEX4.license.name, CODEGEEX4.license.url, CODEGEEX4.license.keyTerms['zh-cn']]);
  assert.equal(licenseGate(CODEGEEX4, false), 'ask');
  assert.equal(licenseGate(CODEGEEX4, true), 'proceed');
  const open = { ...CODEGEEX4, license: { ...CODEGEEX4.license, commercialUse: 'allowed' as const } };
  assert.equal(licenseGate(open, false), 'proceed');
});

test('CLI: download --model codegeex4-all-9b refuses without --accept-license (naming the URL, nothing fetched), then remembers it', async () => {
  const home = tmp();
  const env = { HOME: home, XDG_DATA_HOME: join(home, 'data') };
  const run = async (...args: string[]) => {
    let out = '';
    let err = '';
    const cfg = parseCli(['download', '--model', 'codegeex4-all-9b', '--endpoint', hub.endpoint, '--dir', join(home, 'hub'), ...args], env, home);
    const io = { out: (t: string) => { out += t; }, err: (t: string) => { err += t; }, signal: new AbortController().signal, packageRoot: home };
    const result = await download(cfg, io).then((code) => ({ code }), (e: unknown) => ({ error: e as Error }));
    return { ...result, out, err };
  };
  const refused = await run();
  assert.ok('error' in refused && refused.error.name === 'UsageError');
  assert.match(refused.error.message, /CodeGeeX4 License \(https:\/\/huggingface\.co\/THUDM\/codegeex4-all-9b\/blob\/main\/LICENSE\).*--accept-license/s);
  assert.equal(hub.log.length, 0, 'nothing asked of the Hub before the licence is accepted');
  const accepted = await run('--accept-license');
  assert.ok('code' in accepted && accepted.code === 0, accepted.err);
  assert.match(accepted.err, /licence: CodeGeeX4 License/);
  assert.match(accepted.out, /models--THUDM--codegeex4-all-9b\/snapshots\//);
  const again = await run();
  assert.ok('code' in again && again.code === 0, 'accepted once for this model');
  // Another model still asks.
  const other = await (async () => {
    const cfg = parseCli(['download', '--model', 'glm-4-9b-chat', '--endpoint', hub.endpoint, '--dir', join(home, 'hub')], env, home);
    return download(cfg, { out: () => undefined, err: () => undefined, signal: new AbortController().signal, packageRoot: home }).then(() => undefined, (e: unknown) => e as Error);
  })();
  assert.match(other?.message ?? '', /GLM-4 License/);
});
