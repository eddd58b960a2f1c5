import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  adminKeyFromArgs, buildRunArgs, DockerCli, formatCommand, gpusArg, newAdminKey, resolveSettings, ServerError,
} from '../../../src/core/server';

const base = { weightsPath: '/data/chatglm3-6b', repositoryPath: '/home/u/.storage/model_repository' };

/** The value following each occurrence of `flag`. */
function valuesOf(args: string[], flag: string): string[] {
  return args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []));
}

test('ports are published on 127.0.0.1 only by default', () => {
  const args = buildRunArgs(resolveSettings(base), 'k');
  assert.deepEqual(valuesOf(args, '-p'), ['127.0.0.1:8000:8000', '127.0.0.1:8001:8001', '127.0.0.1:8002:8002']);
});

test('custom host ports map to the fixed container ports; an opted-in address is used as given', () => {
  const args = buildRunArgs(resolveSettings({ ...base, httpPort: 18000, grpcPort: 18001, metricsPort: 18002, bindAddress: '0.0.0.0' }), 'k');
  assert.deepEqual(valuesOf(args, '-p'), ['0.0.0.0:18000:8000', '0.0.0.0:18001:8001', '0.0.0.0:18002:8002']);
  const v6 = buildRunArgs(resolveSettings({ ...base, bindAddress: '::1' }), 'k');
  assert.equal(valuesOf(v6, '-p')[0], '[::1]:8000:8000');
});

test('--gpus: all, a single id unquoted, a list with literal inner double quotes', () => {
  assert.equal(gpusArg('all'), 'all');
  assert.equal(gpusArg(['1']), 'device=1');
  assert.equal(gpusArg(['1', '2']), '"device=1,2"');
  const args = buildRunArgs(resolveSettings({ ...base, gpuIds: ['0', '3'] }), 'k');
  assert.deepEqual(valuesOf(args, '--gpus'), ['"device=0,3"']);
});

test('repository and weights are mounted read-only; offline env is set', () => {
  const args = buildRunArgs(resolveSettings(base), 'k');
  assert.deepEqual(valuesOf(args, '-v'), [
    '/home/u/.storage/model_repository:/models:ro',
    '/data/chatglm3-6b:/weights/chatglm3-6b:ro',
  ]);
  const env = valuesOf(args, '-e');
  for (const e of ['HF_HUB_OFFLINE=1', 'TRANSFORMERS_OFFLINE=1', 'HF_HOME=/tmp/hf']) assert.ok(env.includes(e), e);
  assert.deepEqual(valuesOf(args, '--ulimit'), ['memlock=-1', 'stack=67108864']);
  assert.deepEqual(valuesOf(args, '--shm-size'), ['2g']);
});

test('labels mark the container as ours and record ports and paths', () => {
  const labels = valuesOf(buildRunArgs(resolveSettings({ ...base, httpPort: 9000 }), 'k'), '--label');
  assert.ok(labels.includes('triton-chatglm.managed=1'));
  assert.ok(labels.includes('triton-chatglm.http-port=9000'));
  assert.ok(labels.includes('triton-chatglm.weights=/data/chatglm3-6b'));
});

test('tritonserver starts empty in explicit mode with HTTP and gRPC admin APIs locked by the key', () => {
  const key = newAdminKey();
  const args = buildRunArgs(resolveSettings(base), key);
  const cmd = args.slice(args.indexOf('triton-chatglm:24.10') + 1);
  assert.equal(cmd[0], 'tritonserver');
  assert.ok(cmd.includes('--model-repository=/models'));
  assert.ok(cmd.includes('--model-control-mode=explicit'));
  assert.ok(!cmd.some((a) => a.startsWith('--load-model')), 'no startup model');
  assert.ok(cmd.includes(`--http-restricted-api=model-repository,model-config,shared-memory,trace,logging:x-triton-admin=${key}`));
  assert.ok(cmd.includes(`--grpc-restricted-protocol=model-repository,model-config,shared-memory,trace,logging:x-triton-admin=${key}`));
  assert.equal(adminKeyFromArgs(cmd), key);
});

test('admin keys are random and long', () => {
  const a = newAdminKey();
  const b = newAdminKey();
  assert.notEqual(a, b);
  assert.match(a, /^[0-9a-f]{48}$/);
});

test('the logged command line never contains the key', () => {
  const key = newAdminKey();
  const line = formatCommand('docker', buildRunArgs(resolveSettings(base), key), key);
  assert.ok(!line.includes(key));
  assert.match(line, /x-triton-admin=<redacted>/);
  assert.match(line, /^docker run -d --name triton-chatglm3 /);
});

test('extra env is passed as separate -e values; a bad variable name is a settings error', () => {
  const args = buildRunArgs(resolveSettings({ ...base, extraEnv: { CUDA_MODULE_LOADING: 'LAZY' } }), 'k');
  assert.ok(valuesOf(args, '-e').includes('CUDA_MODULE_LOADING=LAZY'));
  assert.throws(() => resolveSettings({ ...base, extraEnv: { 'A B': 'x' } }), (e: ServerError) => e.code === 'settings-invalid');
});

test('docker receives each argument verbatim: no shell ever parses paths with spaces, quotes or $()', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'argv-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const dump = join(dir, 'argv.json');
  const fakeDocker = join(dir, 'docker');
  writeFileSync(fakeDocker, `#!/usr/bin/env node\nrequire('fs').writeFileSync(${JSON.stringify(dump)}, JSON.stringify(process.argv.slice(2)));\n`);
  chmodSync(fakeDocker, 0o755);
  const pwned = join(dir, 'pwned');
  const weights = `/data/my weights/$(touch ${pwned}); echo "x" 'y' \`id\``;
  const args = buildRunArgs(resolveSettings({ ...base, weightsPath: weights, gpuIds: ['1', '2'] }), 'k');
  const r = await new DockerCli(fakeDocker).run(args);
  assert.equal(r.exitCode, 0);
  assert.deepEqual(JSON.parse(readFileSync(dump, 'utf8')), args);
  assert.ok(args.includes(`${weights}:/weights/chatglm3-6b:ro`));
  assert.ok(args.includes('"device=1,2"'));
  assert.equal(existsSync(pwned), false);
});

test('settings validation names the bad field', () => {
  const bad = (over: object, field: string) =>
    assert.throws(() => resolveSettings({ ...base, ...over }), (e: ServerError) => e.code === 'settings-invalid' && e.message.includes(field));
  bad({ httpPort: 0 }, 'httpPort');
  bad({ grpcPort: 70000 }, 'grpcPort');
  bad({ httpPort: 9000, grpcPort: 9000 }, 'httpPort');
  bad({ bindAddress: 'example.com' }, 'bindAddress');
  bad({ gpuIds: [] }, 'gpuIds');
  bad({ gpuIds: ['0,1'] }, 'gpuIds');
  bad({ shmSize: 'lots' }, 'shmSize');
  bad({ weightsPath: 'relative/path' }, 'weightsPath');
  bad({ containerName: '-x' }, 'containerName');
  bad({ image: 'bad image' }, 'image');
  const ok = resolveSettings({ ...base, gpuIds: ['GPU-8f6e2d1c-aaaa-bbbb-cccc-0123456789ab'] });
  assert.equal(gpusArg(ok.gpuIds), 'device=GPU-8f6e2d1c-aaaa-bbbb-cccc-0123456789ab');
});
