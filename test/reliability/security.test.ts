// Security checks that need no server: no code execution of request data in the model (Python AST scan), no
// shell in the extension (source scan), the webview CSP and its nonce, loopback-only docker arguments, settings
// that become process arguments or paths ignored from an untrusted workspace, and the load request our client
// sends (never `config` or `file:` overrides). Each scanner is first shown to catch a planted example.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { buildRunArgs, newAdminKey, resolveSettings } from '../../src/core/server';
import { TestTritonClient } from '../support/testTritonClient';
import { parseSettings, type InspectedValue } from '../../src/core/settings/settingsParser';
import { SETTINGS, SECTION, type SettingKey } from '../../src/core/settings/settingsSchema';
import { toServerSettings } from '../../src/core/settings/settingsMapping';
import { buildWebviewHtml, contentSecurityPolicy, makeNonce } from '../../src/vscode/webviewHtml';

const root = join(__dirname, '../..');

function filesUnder(dir: string, ext: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      if (name === '__pycache__' || name === 'node_modules') continue;
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith(ext)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

// Calls that run or deserialize code. ast.literal_eval is the one allowed evaluator; `obj.eval()` (torch's
// eval mode) is a method of an object, not the builtin, and is not flagged.
const PY_SCANNER = String.raw`
import ast, json, sys
BUILTINS = {"eval", "exec", "compile", "__import__", "execfile", "input"}
BAD_ATTRS = {("pickle", "loads"), ("pickle", "load"), ("marshal", "loads"), ("os", "system"), ("os", "popen"),
             ("builtins", "eval"), ("builtins", "exec"), ("builtins", "compile"), ("dill", "loads"), ("cloudpickle", "loads")}
findings = []
for path in sys.argv[1:]:
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        where = f"{path}:{node.lineno}"
        if isinstance(f, ast.Name) and f.id in BUILTINS:
            findings.append(f"{where}: {f.id}()")
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and (f.value.id, f.attr) in BAD_ATTRS:
            findings.append(f"{where}: {f.value.id}.{f.attr}()")
        elif isinstance(f, ast.Attribute) and f.attr == "load" and isinstance(f.value, ast.Name) and f.value.id == "yaml" \
                and not any(k.arg == "Loader" for k in node.keywords):
            findings.append(f"{where}: yaml.load without Loader")
        for k in node.keywords:
            if k.arg == "shell" and not (isinstance(k.value, ast.Constant) and k.value.value is False):
                findings.append(f"{where}: shell=")
        if isinstance(f, ast.Name) and f.id == "getattr" and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and node.args[1].value in BUILTINS:
            findings.append(f"{where}: getattr(..., {node.args[1].value!r})")
print(json.dumps(findings))
`;

function scanPython(files: string[]): string[] {
  const r = spawnSync('python3', ['-c', PY_SCANNER, ...files], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as string[];
}

test('no eval/exec/compile (or other code execution) of request data anywhere in triton/ (Python AST scan)', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'reliability-scan-'));
  try {
    const planted = join(tmp, 'planted.py');
    writeFileSync(planted, 'import ast, pickle, subprocess\nx = eval(s)\nexec(s)\ny = compile(s, "f", "exec")\nz = ast.literal_eval(s)\nm.eval()\npickle.loads(b)\nsubprocess.run(s, shell=True)\n');
    const caught = scanPython([planted]).map((f) => f.slice(planted.length + 1));
    assert.deepEqual(caught, ['2: eval()', '3: exec()', '4: compile()', '7: pickle.loads()', '8: shell='], 'the scanner catches planted code execution and allows literal_eval / .eval()');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const files = filesUnder(join(root, 'triton'), '.py');
  assert.ok(files.length >= 10, `scanned ${files.length} Python files`);
  assert.deepEqual(scanPython(files).map((f) => relative(root, f)), []);
  // The one evaluator the served model uses is literal_eval, behind size and depth checks (its request parser).
  const literal = files.filter((f) => !f.includes('/triton/tests/') && readFileSync(f, 'utf8').includes('literal_eval('));
  assert.deepEqual(literal.map((f) => relative(root, f)), ['triton/model_repository/chatglm3-6b/1/chatglm/serving/request.py']);
});

const SHELL = /\bshell\s*:\s*(true|['"`]|[A-Za-z_$])|\bexecSync\s*\(|\bexec\s*\(\s*['"`]|child_process['"]\)\.exec\b|\bnew\s+Function\s*\(|(^|[^.\w])eval\s*\(/m;

test('no shell: true (or exec/eval/new Function) anywhere in src/', () => {
  for (const planted of ["execa('docker', args, { shell: true })", 'spawn(cmd, { shell : true })', 'const f = new Function(code)', 'eval(text)', "execSync('docker ps')"]) {
    assert.match(planted, SHELL, `the pattern catches: ${planted}`);
  }
  for (const fine of ['model.eval()', "const shellQuoted = 'x'", 'await execa(this.dockerPath, [...args], { reject: false })']) {
    assert.doesNotMatch(fine, SHELL, `no false alarm on: ${fine}`);
  }
  const files = filesUnder(join(root, 'src'), '.ts');
  assert.ok(files.length >= 30);
  const hits = files.flatMap((f) => readFileSync(f, 'utf8').split('\n').map((line, i) => ({ f, i, line })))
    .filter(({ line }) => !/^\s*(\/\/|\*)/.test(line) && SHELL.test(line))
    .map(({ f, i, line }) => `${relative(root, f)}:${i + 1}: ${line.trim()}`);
  assert.deepEqual(hits, []);
});

test('webview CSP: no unsafe-inline/unsafe-eval; the nonce comes from crypto, carries ≥128 bits and differs per page', () => {
  const nonces = new Set(Array.from({ length: 2000 }, () => makeNonce()));
  assert.equal(nonces.size, 2000, 'no repeated nonce in 2000 pages');
  for (const n of [...nonces].slice(0, 50)) {
    assert.match(n, /^[A-Za-z0-9+/]+={0,2}$/);
    assert.ok(Buffer.from(n, 'base64').length >= 16, 'at least 128 bits');
  }
  const source = readFileSync(join(root, 'src/vscode/webviewHtml.ts'), 'utf8');
  assert.match(source, /import \{[^}]*randomBytes[^}]*\} from 'node:crypto'/);
  assert.match(source, /export function makeNonce\(\): string \{\s*return randomBytes\(16\)/);
  const htmlFiles = filesUnder(join(root, 'src/vscode'), '.ts');
  for (const f of htmlFiles) assert.doesNotMatch(readFileSync(f, 'utf8'), /Math\.random/, `${relative(root, f)} uses no Math.random`);
  const csp = contentSecurityPolicy('vscode-resource:', makeNonce());
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|unsafe-hashes|\*|https?:/);
  assert.match(csp, /^default-src 'none';/);
  const nonce = makeNonce();
  const html = buildWebviewHtml({ cspSource: 'vscode-resource:', nonce, title: 't', lang: 'en', styles: [], scripts: ['vscode-resource:/dist/webview.js'] });
  assert.equal([...html.matchAll(/<script\b/g)].length, [...html.matchAll(new RegExp(`<script nonce="${nonce.replace(/[+/=]/g, '\\$&')}"`, 'g'))].length, 'every script carries the nonce');
  assert.throws(() => buildWebviewHtml({ cspSource: 'x', nonce: 'short', title: 't', lang: 'en', styles: [], scripts: [] }), 'a weak nonce is refused');
});

test('docker arguments publish every port on 127.0.0.1 unless the user chose another address', () => {
  const base = { weightsPath: '/w/chatglm3-6b', repositoryPath: '/r/model_repository' };
  const published = (args: string[]) => args.flatMap((a, i) => (a === '-p' ? [args[i + 1]!] : []));
  const def = published(buildRunArgs(resolveSettings(base), newAdminKey()));
  assert.deepEqual(def, ['127.0.0.1:8000:8000', '127.0.0.1:8001:8001', '127.0.0.1:8002:8002']);
  const opted = published(buildRunArgs(resolveSettings({ ...base, bindAddress: '0.0.0.0' }), newAdminKey()));
  assert.ok(opted.every((p) => p.startsWith('0.0.0.0:')), 'an explicit choice is honoured');
  assert.equal(SETTINGS.bindAddress.default, '127.0.0.1');
});

test('settings that become process arguments or paths are ignored from an untrusted workspace', () => {
  // Everything that ends up in the docker command line, a mounted path, a URL we send requests (and headers) to,
  // or the model configuration the container loads.
  const dangerous: SettingKey[] = ['serverMode', 'externalUrl', 'externalHeaders', 'externalMetricsUrl', 'dockerPath', 'image',
    'containerName', 'httpPort', 'grpcPort', 'metricsPort', 'bindAddress', 'gpus', 'gpuIds', 'shmSize', 'weightsPath',
    'maxBatchSize', 'queueDelayMs', 'maxQueueSize', 'instanceCount', 'streaming'];
  const hostile: Partial<Record<SettingKey, unknown>> = {
    serverMode: 'external', externalUrl: 'http://attacker.example:8000', externalHeaders: { authorization: 'x' },
    externalMetricsUrl: 'http://attacker.example/metrics', dockerPath: '/tmp/evil/docker', image: 'evil/image:latest',
    containerName: 'evil', httpPort: 9000, grpcPort: 9001, metricsPort: 9002, bindAddress: '0.0.0.0', gpus: ['0', '1'], gpuIds: ['0'],
    shmSize: '64g', weightsPath: '/home/victim/.ssh', maxBatchSize: 64, queueDelayMs: 9999, maxQueueSize: 4096,
    instanceCount: 8, streaming: false,
  };
  const user: Partial<Record<SettingKey, unknown>> = { weightsPath: '/models/chatglm3-6b', dockerPath: '/usr/bin/docker' };
  const inspect = (key: SettingKey): InspectedValue => ({ defaultValue: SETTINGS[key].default, globalValue: user[key], workspaceValue: hostile[key] });
  const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } } };
  for (const trusted of [false, true]) {
    const { settings, problems } = parseSettings(inspect, trusted);
    for (const key of dangerous) {
      assert.deepEqual(settings[key], user[key] ?? SETTINGS[key].default, `${key}: the workspace value is not used (trusted=${trusted})`);
      assert.ok(problems.some((p) => p.key === key && p.kind === 'ignoredWorkspaceValue'), `${key}: reported as ignored`);
      assert.ok(SETTINGS[key].restricted, `${key} is restricted`);
      assert.ok(packageJson.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(`${SECTION}.${key}`), `${key} is declared restricted in package.json`);
    }
    if (!trusted) assert.ok(problems.filter((p) => p.kind === 'ignoredWorkspaceValue').every((p) => p.kind !== 'ignoredWorkspaceValue' || p.untrusted));
    // End to end to the docker command line: none of the workspace's values reach it.
    const args = buildRunArgs(resolveSettings(toServerSettings(settings, '/r/model_repository')), newAdminKey());
    const line = args.join(' ');
    for (const v of ['/tmp/evil', 'evil/image', '0.0.0.0', '.ssh', '9000', '64g']) assert.ok(!line.includes(v), `${v} not in docker args`);
    assert.ok(line.includes('/models/chatglm3-6b:/weights/chatglm3-6b:ro'), 'the user\'s own weights path is used');
  }
  // A harmless per-window setting is still taken from the workspace.
  const sampling = parseSettings((key) => (key === 'temperature' ? { workspaceValue: 0.2 } : {}), false);
  assert.equal(sampling.settings.temperature, 0.2);
});

test('our client never sends `config` or `file:` overrides with a load (request bodies intercepted)', async (t) => {
  const seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
  let loaded = false;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => { body += d.toString('utf8'); });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.setHeader('content-type', 'application/json');
      if (req.url === '/v2/repository/index') res.end(JSON.stringify(loaded ? [{ name: 'chatglm3-6b', version: '1', state: 'READY' }] : [{ name: 'chatglm3-6b' }]));
      else if (req.url?.endsWith('/load')) { loaded = true; res.end('{}'); } else res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const key = newAdminKey();
  const client = new TestTritonClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, adminKey: key });
  t.after(() => client.close());
  await client.ensureModelLoaded('chatglm3-6b', { onProgress: () => undefined, progressIntervalMs: 10 });
  await client.loadModel('chatglm3-6b');
  await client.unloadModel('chatglm3-6b');
  const loads = seen.filter((r) => r.url.endsWith('/load'));
  assert.equal(loads.length, 2);
  for (const r of seen.filter((x) => x.url.startsWith('/v2/repository/models/'))) {
    assert.doesNotMatch(r.body, /"config"|file:/, `${r.url} carries no config/file override: ${r.body}`);
    if (r.body.trim()) {
      const parsed = JSON.parse(r.body) as { parameters?: Record<string, unknown> };
      for (const k of Object.keys(parsed.parameters ?? {})) assert.ok(k !== 'config' && !k.startsWith('file:'), k);
    }
    assert.equal(r.headers['x-triton-admin'], key, 'the admin key travels on repository calls');
  }
  for (const r of seen.filter((x) => !x.url.startsWith('/v2/repository'))) assert.equal(r.headers['x-triton-admin'], undefined, 'and only there');
});
