// Runs inside VS Code's extension host (see index.ts): the extension's commands, settings and server life cycle
// through the `vscode` API, observed from outside the extension (the fake docker's state, Triton's HTTP API).
// test/e2e/extension-host.mjs provides the environment: FAKE_DOCKER_STATE, E2E_HTTP_PORT, E2E_WEIGHTS_PATH...
import * as assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';

const EXTENSION_ID = 'triton-chatglm.triton-chatglm';
const MODEL = 'chatglm3-6b';
const stateDir = required('FAKE_DOCKER_STATE');
const httpPort = Number(required('E2E_HTTP_PORT'));
const weightsPath = required('E2E_WEIGHTS_PATH');
const fakeDocker = required('E2E_FAKE_DOCKER');
const userDataDir = required('E2E_USER_DATA_DIR');

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this suite through test/e2e/run.mjs`);
  return v;
}

interface Container {
  Id: string;
  State: { Running: boolean; Status: string };
  Config: { Image: string; Labels: Record<string, string>; Cmd: string[] };
  HostConfig: { PortBindings: Record<string, Array<{ HostIp: string; HostPort: string }>> };
  Mounts: Array<{ Source: string; Destination: string; RW: boolean }>;
}

function containers(): Container[] {
  const dir = join(stateDir, 'containers');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Container);
}

async function waitFor<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 120_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v as NonNullable<T>;
    } catch (e) { last = e; }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Everything the extension's log channels wrote so far (VS Code keeps each channel in a file under logs/). */
function extensionLogText(): string {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.log') && p.includes(EXTENSION_ID)) files.push(p);
    }
  };
  walk(join(userDataDir, 'logs'));
  return files.map((f) => readFileSync(f, 'utf8')).join('\n');
}

/** Position in the extension's log now, so that later waits only look at what is written after it. */
const logMark = () => extensionLogText().length;
/** The extension reports every state change in its log ("lifecycle: serverUp: ..."): the only outside view of it. */
function waitForLog(re: RegExp, mark: number, what: string, timeoutMs = 120_000) {
  return waitFor(() => re.test(extensionLogText().slice(mark)), what, timeoutMs);
}

async function httpStatus(path: string): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${httpPort}${path}`)).status;
  } catch {
    return 0;
  }
}

/**
 * Runs a command without awaiting it: commands that end in an error notification wait for the user to close it.
 * Resolves at once; a rejection is remembered and reported by the caller.
 */
function fire(command: string): { error: () => unknown } {
  let error: unknown;
  vscode.commands.executeCommand(command).then(undefined, (e: unknown) => { error = e; });
  return { error: () => error };
}

const config = () => vscode.workspace.getConfiguration('tritonChatglm');

describe('commands, settings and life cycle', function () {
  let extension: vscode.Extension<unknown>;

  before(async () => {
    const found = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(found, `${EXTENSION_ID} is not loaded`);
    extension = found;
    await extension.activate();
  });

  after(async () => {
    rmSync(join(stateDir, 'fail'), { force: true });
    await config().update('maxBatchSize', undefined, vscode.ConfigurationTarget.Global);
    await config().update('askBeforeUnload', undefined, vscode.ConfigurationTarget.Global);
    if (containers().length) {
      await vscode.commands.executeCommand('tritonChatglm.stopServer');
      await waitFor(() => containers().length === 0, 'the container to be removed after the suite', 60_000).catch(() => undefined);
    }
  });

  it('activates and registers every contributed command', async () => {
    assert.equal(extension.isActive, true);
    const contributed = (extension.packageJSON.contributes.commands as Array<{ command: string }>).map((c) => c.command);
    assert.ok(contributed.length >= 11, `only ${contributed.length} commands contributed`);
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = contributed.filter((c) => !registered.has(c));
    assert.deepEqual(missing, [], `contributed but not registered: ${missing.join(', ')}`);
  });

  it('declares its settings with defaults and reads the user settings', () => {
    const docker = config().inspect<string>('dockerPath');
    assert.equal(docker?.defaultValue, 'docker');
    assert.equal(docker?.globalValue, fakeDocker);
    assert.equal(config().inspect<string>('bindAddress')?.defaultValue, '127.0.0.1');
    assert.equal(config().get('httpPort'), httpPort);
  });

  it('Start Server runs the container as configured: image, loopback ports, weights read-only', async () => {
    assert.equal(containers().length, 0, 'a container exists before Start');
    // Rendered into the mounted config.pbtxt at start; checked once the model is loaded (next test).
    await config().update('maxBatchSize', 4, vscode.ConfigurationTarget.Global);
    const mark = logMark();
    const run = fire('tritonChatglm.startServer');
    const c = await waitFor(() => containers().find((x) => x.State.Running), 'a running container', 180_000);
    assert.equal(run.error(), undefined);
    assert.equal(c.Config.Image, config().get('image'));
    const http = c.HostConfig.PortBindings['8000/tcp']?.[0];
    assert.deepEqual(http, { HostIp: '127.0.0.1', HostPort: String(httpPort) });
    const weights = c.Mounts.find((m) => m.Source === weightsPath);
    assert.ok(weights, `the weights ${weightsPath} are not mounted: ${JSON.stringify(c.Mounts)}`);
    assert.equal(weights.RW, false, 'the weights must be mounted read-only');
    await waitFor(async () => (await httpStatus('/v2/health/live')) === 200, 'Triton to be live on the configured port');
    await waitForLog(/lifecycle: serverUp/, mark, 'the extension to see the server up');
  });

  it('Load Model makes the model ready with the configured batching', async () => {
    const mark = logMark();
    const run = fire('tritonChatglm.loadModel');
    await waitFor(async () => (await httpStatus(`/v2/models/${MODEL}/ready`)) === 200, 'the model to be ready', 240_000);
    await waitForLog(/lifecycle: modelReady/, mark, 'the extension to see the model ready');
    assert.equal(run.error(), undefined);
    // The model-config API is locked with the container's admin key, which `docker inspect` shows (as here).
    const c = containers().find((x) => x.State.Running);
    const key = c?.Config.Cmd.join(' ').match(/x-triton-admin=(\S+)/)?.[1];
    assert.ok(key, 'the container command has no admin key for the restricted APIs');
    const anonymous = await fetch(`http://127.0.0.1:${httpPort}/v2/models/${MODEL}/config`);
    assert.notEqual(anonymous.status, 200, 'the model-config API answers without the admin key');
    const res = await fetch(`http://127.0.0.1:${httpPort}/v2/models/${MODEL}/config`, { headers: { 'x-triton-admin': key } });
    assert.equal(res.status, 200);
    const cfg = await res.json() as { max_batch_size: number };
    assert.equal(cfg.max_batch_size, 4, 'the maxBatchSize setting did not reach config.pbtxt');
  });

  it('Unload Model unloads it; Stop Server removes the container', async () => {
    // The modal confirmation of a loaded model's Unload would wait for a click that nobody makes here (the e2e
    // journey 7 and test/unit/vscode/explainAndServer.test.ts answer it): this suite drives the commands only.
    await config().update('askBeforeUnload', false, vscode.ConfigurationTarget.Global);
    let mark = logMark();
    fire('tritonChatglm.unloadModel');
    await waitFor(async () => (await httpStatus(`/v2/models/${MODEL}/ready`)) !== 200, 'the model to be unloaded');
    await waitForLog(/lifecycle: modelUnloaded/, mark, 'the extension to see the model unloaded');
    assert.ok(containers().length === 1 && containers().every((c) => c.State.Running), 'the server must keep running after Unload');
    mark = logMark();
    fire('tritonChatglm.stopServer');
    await waitFor(() => containers().length === 0, 'no container after Stop');
    await waitFor(async () => (await httpStatus('/v2/health/live')) === 0, 'the server port to close');
    await waitForLog(/lifecycle: serverStopped/, mark, 'the extension to see the server stopped');
  });

  it('a failed start (daemon down) is logged with its cause, runs nothing, and Start works once docker is back', async () => {
    writeFileSync(join(stateDir, 'fail'), 'daemon-down');
    const mark = logMark();
    fire('tritonChatglm.startServer');
    await waitForLog(/Start \[daemon-unreachable\]/, mark, 'the failure in the ChatGLM log channel', 60_000);
    assert.equal(containers().filter((c) => c.State.Running).length, 0, 'a container runs although docker failed');
    rmSync(join(stateDir, 'fail'), { force: true });
    const restart = logMark();
    const run = fire('tritonChatglm.startServer');
    await waitFor(() => containers().some((c) => c.State.Running), 'a start to succeed after the daemon is back', 180_000);
    await waitForLog(/lifecycle: serverUp/, restart, 'the extension to see the server up');
    assert.equal(run.error(), undefined);
    const stop = logMark();
    fire('tritonChatglm.stopServer');
    await waitFor(() => containers().length === 0, 'no container after Stop');
    await waitForLog(/lifecycle: serverStopped/, stop, 'the extension to see the server stopped');
  });
});
