import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseInspect, runtimesIncludeNvidia, ServerError, validateWeights } from '../../../src/core/server';
import { catalogConfigJson } from '../../support/catalogConfig';

// Shape of real `docker container inspect` output for an NGC image (entrypoint script, so Args holds the command).
const realInspect = JSON.stringify([{
  Id: '9c2f4d0e5b7a1c3e',
  Created: '2026-11-30T07:00:00.000000000Z',
  Path: '/opt/nvidia/nvidia_entrypoint.sh',
  Args: ['tritonserver', '--model-repository=/models', '--model-control-mode=explicit',
    '--http-restricted-api=model-repository,model-config,shared-memory,trace,logging:x-triton-admin=abc123',
    '--log-verbose=0'],
  State: { Status: 'running', Running: true, Paused: false, Restarting: false, OOMKilled: false, Dead: false, Pid: 4242, ExitCode: 0 },
  Name: '/triton-chatglm3',
  HostConfig: { PortBindings: { '8000/tcp': [{ HostIp: '127.0.0.1', HostPort: '18000' }], '8001/tcp': [{ HostIp: '127.0.0.1', HostPort: '18001' }], '8002/tcp': [{ HostIp: '127.0.0.1', HostPort: '18002' }] } },
  Config: { Image: 'triton-chatglm:24.10', Labels: { 'triton-chatglm.managed': '1', 'com.nvidia.build.id': '1' }, Cmd: ['tritonserver'] },
}]);

test('parseInspect recovers ports, state and the admin key', () => {
  const [c] = parseInspect(realInspect);
  assert.equal(c.name, 'triton-chatglm3');
  assert.equal(c.running, true);
  assert.equal(c.state, 'running');
  assert.equal(c.pid, 4242);
  assert.equal(c.managed, true);
  assert.deepEqual(c.ports, { http: 18000, grpc: 18001, metrics: 18002 });
  assert.equal(c.bindAddress, '127.0.0.1');
  assert.equal(c.adminKey, 'abc123');
});

test('parseInspect: exited container, no label, ports from labels', () => {
  const [c] = parseInspect(JSON.stringify([{
    Id: 'x', Name: '/other', Args: [], State: { Status: 'exited', Running: false, ExitCode: 137, Pid: 0 },
    HostConfig: { PortBindings: {} }, Config: { Image: 'i', Labels: { 'triton-chatglm.http-port': '1', 'triton-chatglm.grpc-port': '2', 'triton-chatglm.metrics-port': '3' } },
  }]));
  assert.equal(c.running, false);
  assert.equal(c.exitCode, 137);
  assert.equal(c.managed, false);
  assert.deepEqual(c.ports, { http: 1, grpc: 2, metrics: 3 });
  assert.equal(c.adminKey, undefined);
  assert.throws(() => parseInspect('{"not":"an array"}'));
});

test('runtimesIncludeNvidia reads docker info --format {{json .Runtimes}}', () => {
  assert.equal(runtimesIncludeNvidia('{"io.containerd.runc.v2":{"path":"runc"},"nvidia":{"path":"nvidia-container-runtime"},"runc":{"path":"runc"}}'), true);
  assert.equal(runtimesIncludeNvidia('{"io.containerd.runc.v2":{"path":"runc"},"runc":{"path":"runc"}}'), false);
  assert.equal(runtimesIncludeNvidia('null'), false);
});

function checkpoint(t: { after(fn: () => void): void }, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'weights-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const goodConfig = JSON.stringify(catalogConfigJson('chatglm3-6b'));

test('a ChatGLM3 checkpoint passes (safetensors or bin)', async (t) => {
  await validateWeights(checkpoint(t, { 'config.json': goodConfig, 'tokenizer.model': 'x', 'model-00001-of-00007.safetensors': 'x' }));
  const { model_type: _type, ...byArchitecture } = catalogConfigJson('chatglm3-6b');
  await validateWeights(checkpoint(t, { 'config.json': JSON.stringify(byArchitecture), 'tokenizer.model': 'x', 'pytorch_model-00001-of-00007.bin': 'x' }));
});

test('weights: missing directory, a file, and each missing part are reported', async (t) => {
  const code = (c: string, part?: RegExp) => (e: unknown) => e instanceof ServerError && e.code === c && (!part || part.test(e.message)) && e.fix.length > 0;
  await assert.rejects(validateWeights('/definitely/not/here'), code('weights-missing'));
  const dir = checkpoint(t, { 'file.txt': 'x' });
  await assert.rejects(validateWeights(join(dir, 'file.txt')), code('weights-missing'));
  await assert.rejects(validateWeights(checkpoint(t, { 'tokenizer.model': 'x', 'a.safetensors': 'x' })), code('weights-invalid', /config\.json is missing/));
  await assert.rejects(validateWeights(checkpoint(t, { 'config.json': '{oops', 'tokenizer.model': 'x', 'a.safetensors': 'x' })), code('weights-invalid', /not valid JSON/));
  await assert.rejects(validateWeights(checkpoint(t, { 'config.json': JSON.stringify({ model_type: 'llama' }), 'tokenizer.model': 'x', 'a.safetensors': 'x' })), code('weights-invalid', /ChatGLM/));
  await assert.rejects(validateWeights(checkpoint(t, { 'config.json': goodConfig, 'a.safetensors': 'x' })), code('weights-invalid', /tokenizer\.model/));
  await assert.rejects(validateWeights(checkpoint(t, { 'config.json': goodConfig, 'tokenizer.model': 'x', 'training_args.bin': 'x' })), code('weights-invalid', /no weight files/));
  const nested = checkpoint(t, {});
  mkdirSync(join(nested, 'sub'));
  await assert.rejects(validateWeights(nested), code('weights-invalid', /config\.json is missing; tokenizer\.model is missing; no weight files/));
});
