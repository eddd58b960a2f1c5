// The built CLI's `download` against the fake Hub (test/support/fake-hub.mjs): HF_ENDPOINT and HF_TOKEN honoured,
// one line per file when stderr is not a terminal, --json events, the weights folder printed last, Ctrl+C keeping
// what was received and the next run resuming it, and a gated repository's error with its fix; a https Hub whose
// next page of the file list is plain http (refused, never asked), and a hostile name escaped in the error (#31).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { projectRoot } from '../fake-docker/harness';

const cliPath = join(projectRoot, 'dist/cli.js');

interface FakeHub {
  endpoint: string;
  commit: string;
  files: { path: string; size: number; lfs: boolean }[];
  knobs: { bytesPerSecond: number; nextPageOrigin?: string };
  stats: { bytes: number; byFile: Record<string, number> };
  log: { server: string; url: string; authorization?: string }[];
  reset(): void;
  close(): Promise<void>;
}
type StartHub = (o?: object) => Promise<FakeHub>;
let startFakeHub: StartHub;
let testTls: () => object;
let TEST_CA_PATH = '';
let hub: FakeHub;
const work = mkdtempSync(join(tmpdir(), 'cli-download-'));

before(async () => {
  await esbuild.build({
    entryPoints: { cli: join(projectRoot, 'src/cli/main.ts') },
    outdir: join(projectRoot, 'dist'),
    bundle: true, platform: 'node', format: 'cjs', target: 'node20', sourcemap: 'linked', legalComments: 'none',
    banner: { js: '#!/usr/bin/env node' }, logLevel: 'warning',
  });
  ({ startFakeHub, testTls, TEST_CA_PATH } = (await import(pathToFileURL(join(projectRoot, 'test/support/fake-hub.mjs')).href)) as { startFakeHub: StartHub; testTls: () => object; TEST_CA_PATH: string });
  hub = await startFakeHub();
});
after(async () => {
  await hub.close();
  rmSync(work, { recursive: true, force: true });
});

interface Run { code: number; stdout: string; stderr: string }

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cliPath, ...args], { env: { PATH: process.env.PATH, HOME: work, ...env }, cwd: work, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

// Never fetched: README, .gitattributes, a file in a folder and any Python file (remote code).
const selected = () => hub.files.filter((f) => !['README.md', '.gitattributes', 'images/logo.png'].includes(f.path) && !f.path.endsWith('.py'));

test('download: a licence not yet accepted is refused before anything is asked of the Hub, naming the licence and the flag', async () => {
  hub.reset();
  const r = await cli(['download', '--dir', join(work, 'unaccepted')], { HF_ENDPOINT: hub.endpoint, XDG_DATA_HOME: join(work, 'fresh-data') });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /ChatGLM3-6B Model License \(https:\/\/huggingface\.co\/THUDM\/chatglm3-6b\/blob\/main\/MODEL_LICENSE\)/);
  assert.match(r.stderr, /--accept-license/);
  assert.equal(hub.log.length, 0, 'no request reached the Hub');
  assert.ok(!existsSync(join(work, 'unaccepted')), 'nothing written');
});

test('download: HF_ENDPOINT honoured, one line per file, the weights folder printed last', async () => {
  const dir = join(work, 'plain');
  const r = await cli(['download', '--accept-license', '--dir', dir], { HF_ENDPOINT: hub.endpoint });
  assert.equal(r.code, 0, r.stderr);
  const snapshot = join(dir, 'models--THUDM--chatglm3-6b', 'snapshots', hub.commit);
  assert.equal(r.stdout.trim(), snapshot);
  for (const f of selected()) assert.match(r.stderr, new RegExp(`^${f.path.replace(/\./g, '\\.')} verified$`, 'm'));
  assert.ok(!r.stderr.includes('.py'), 'no Python file is fetched');
  assert.match(r.stderr, /a newer snapshot than the one tested/);
  assert.match(r.stderr, /start with: triton-chatglm start --model chatglm3-6b .*or pass --weights /);
  assert.ok(!r.stderr.includes('\r'), 'no progress bar when stderr is not a terminal');
  assert.ok(existsSync(join(snapshot, '~triton-chatglm-download.json')));
  // Run again (the licence is remembered: no flag needed): nothing is fetched.
  hub.reset();
  const again = await cli(['download', '--dir', dir], { HF_ENDPOINT: hub.endpoint });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(hub.stats.bytes, 0);
  assert.match(again.stderr, /resuming: .* already here/);
});

test('download --json: one event a line, resolved first and done last', async () => {
  const r = await cli(['download', '--accept-license', '--json', '--endpoint', hub.endpoint, '--dir', join(work, 'json')], {});
  assert.equal(r.code, 0, r.stderr);
  const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; commit?: string; files?: string[] });
  assert.equal(events[0]!.type, 'resolved');
  assert.deepEqual(events[0]!.files!.slice().sort(), selected().map((f) => f.path).sort());
  assert.equal(events.at(-1)!.type, 'done');
  assert.equal(events.filter((e) => e.type === 'file-done').length, selected().length);
  assert.ok(events.some((e) => e.type === 'progress'));
});

test('download: Ctrl+C keeps what was received; the next run resumes and fetches only the rest', async () => {
  const dir = join(work, 'interrupted');
  hub.reset();
  hub.knobs.bytesPerSecond = 100_000;
  const child = spawn(process.execPath, [cliPath, 'download', '--accept-license', '--json', '--dir', dir], { env: { PATH: process.env.PATH, HOME: work, HF_ENDPOINT: hub.endpoint }, cwd: work });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  let interrupted = false;
  const code = await new Promise<number | null>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      // Interrupt once a shard is under way (once: a second Ctrl+C quits at once).
      if (!interrupted && /"type":"file","file":"model-00001/.test(out) && /"type":"progress"/.test(out.split('model-00001')[1] ?? '')) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    child.on('exit', (c) => resolve(c));
  });
  assert.equal(code, 130, err);
  assert.match(err, /what was received is kept/);
  const servedFirst = hub.stats.bytes;
  hub.knobs.bytesPerSecond = 0;
  const r = await cli(['download', '--accept-license', '--dir', dir], { HF_ENDPOINT: hub.endpoint });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /resuming: .* already here/);
  const total = selected().reduce((n, f) => n + f.size, 0);
  assert.ok(servedFirst > 0);
  assert.equal(hub.stats.bytes, total, 'both runs together served each byte once');
});

test('download from a gated repository: HF_TOKEN is sent to the endpoint only; without it the error says what to do', async () => {
  const token = 'hf_cli_test_token_0123456789';
  const gated = await startFakeHub({ gated: true, token });
  try {
    const denied = await cli(['download', '--accept-license', '--dir', join(work, 'gated')], { HF_ENDPOINT: gated.endpoint });
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /gated or private/);
    assert.match(denied.stderr, /fix: .*HF_TOKEN/);
    const ok = await cli(['download', '--accept-license', '--dir', join(work, 'gated')], { HF_ENDPOINT: gated.endpoint, HF_TOKEN: token });
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(!ok.stderr.includes(token) && !ok.stdout.includes(token), 'the token is never printed');
    assert.ok(gated.log.filter((l) => l.server === 'cdn').every((l) => l.authorization === undefined));
    assert.ok(!readFileSync(join(ok.stdout.trim(), '~triton-chatglm-download.json'), 'utf8').includes(token));
  } finally {
    await gated.close();
  }
});

test('download with an endpoint that is not http(s): the error and its fix, nothing fetched', async () => {
  const r = await cli(['download', '--accept-license', '--endpoint', 'ftp://example.org', '--dir', join(work, 'bad')], {});
  assert.equal(r.code, 1);
  assert.match(r.stderr, /error: The Hub endpoint "ftp:\/\/example.org" must be an http or https URL/);
  assert.match(r.stderr, /fix: Give --endpoint/);
});

test('an https Hub whose next page of the file list is plain http: refused and never asked; the token not sent', async () => {
  const secure = await startFakeHub({ tls: testTls(), pageSize: 4 });
  const cleartext = await startFakeHub();
  try {
    secure.knobs.nextPageOrigin = cleartext.endpoint;
    const env = { HF_ENDPOINT: secure.endpoint, NODE_EXTRA_CA_CERTS: TEST_CA_PATH, HF_TOKEN: 'hf_page_token_0123' };
    const r = await cli(['download', '--accept-license', '--dir', join(work, 'pages')], env);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /error: The next page of the file list to http:\/\/127\.0\.0\.1:\d+ was refused: only https \(or the endpoint's own scheme\) is followed\./);
    assert.match(r.stderr, /fix: The endpoint redirected to an insecure address/);
    assert.ok(secure.log.some((l) => l.url.includes('/tree/')), 'the first page came from the https Hub');
    assert.deepEqual(cleartext.log, [], 'the http server was never asked');
    assert.ok(!existsSync(join(work, 'pages', 'models--THUDM--chatglm3-6b', 'blobs')), 'nothing fetched');
    // The same Hub with its pages on https completes (the certificate is trusted: the refusal above is the rule's).
    secure.knobs.nextPageOrigin = undefined;
    const ok = await cli(['download', '--accept-license', '--dir', join(work, 'pages')], env);
    assert.equal(ok.code, 0, ok.stderr);
  } finally {
    await secure.close();
    await cleartext.close();
  }
});

test('a file name with control characters reaches the terminal escaped (no escape sequence, no fake line)', async () => {
  const path = 'x\u001b[2J\nerror: all good\u202e.json';
  const bad = await startFakeHub({ extraListing: [{ type: 'file', oid: 'a'.repeat(40), size: 1, path }] });
  try {
    const r = await cli(['download', '--accept-license', '--dir', join(work, 'escaped')], { HF_ENDPOINT: bad.endpoint });
    assert.equal(r.code, 1);
    assert.ok(r.stderr.includes('"x\\u{1B}[2J\\u{A}error: all good\\u{202E}.json" has characters a file name here cannot have'), r.stderr);
    assert.ok(![...r.stderr].some((c) => c === '\u001b' || c === '\u202e'), 'no escape or bidi character printed');
    assert.equal(r.stderr.split('\n').filter((l) => l.startsWith('error:')).length, 1, 'one error line');
  } finally {
    await bad.close();
  }
});
