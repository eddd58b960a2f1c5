// installRepository + model (re)loading against the REAL tritonserver. A reload creates a new model object,
// which restarts the statistics (only the warmup's 2 inferences remain), so the inference count tells whether
// a load reloaded the model.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { installRepository, type InstallResult } from '../../src/core/repository/install';
import type { ModelSettings } from '../../src/core/repository/renderConfig';
import { streamChat } from '../../src/core/triton/chatglm';
import { TestTritonClient } from '../support/testTritonClient';

interface RunningTriton { url: string; stop(): Promise<void> }
interface TritonProcessModule {
  startTritonServer(options: { repository: string }): Promise<RunningTriton>;
  modelRepositorySource: string;
  snapshotRepositorySource(work: string): string;
  tinyEngine: string;
}

const M = 'chatglm3-6b';
let tp: TritonProcessModule;
let server: RunningTriton | undefined;
let client: TestTritonClient;
let work: string;
let repository: string;
let source: string;

/** Installs like the extension does, with the settings this CPU-only machine needs (CPU instances, tiny engine). */
async function install(settings: Partial<ModelSettings>): Promise<InstallResult> {
  return installRepository({ source, destination: repository, settings: { engine: tp.tinyEngine, instanceKind: 'cpu', ...settings } });
}

async function inferenceCount(): Promise<number> {
  return (await client.modelStatistics(M))[0]!.inference_count;
}

/** One request; returns once Triton has counted it (statistics are updated after execute() returns, which can be
 * a moment after the client received the final response). */
async function ask(): Promise<void> {
  const before = await inferenceCount();
  let final = false;
  for await (const ev of streamChat(client, M, { prompt: 'hi', history: [], maxNewTokens: 2 })) final ||= ev.type === 'final';
  assert.ok(final, 'no final event');
  for (let i = 0; i < 200 && (await inferenceCount()) === before; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(await inferenceCount(), before + 1);
}

describe('installed repository on tritonserver', { timeout: 300_000 }, () => {
  before(async () => {
    tp = (await import(pathToFileURL(join(__dirname, '../support/triton-process.mjs')).href)) as TritonProcessModule;
    work = mkdtempSync(join(tmpdir(), 'repository-it-'));
    repository = join(work, 'model_repository');
    source = tp.snapshotRepositorySource(work);
    await install({});
    server = await tp.startTritonServer({ repository });
    client = new TestTritonClient({ baseUrl: server.url });
  });

  after(async () => {
    await client?.destroy();
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the installed repository loads (rendered config + generated warmup) and answers', async () => {
    await client.loadModel(M);
    assert.equal(await inferenceCount(), 2, 'only the warmup batch of 2 ran');
    await ask();
    assert.equal(await inferenceCount(), 3);
  });

  test('reinstalling unchanged settings rewrites nothing; ensureModelLoaded leaves a READY model alone', async () => {
    const res = await install({});
    assert.deepEqual(res.changed, []);
    assert.equal(await client.ensureModelLoaded(M), 'already-ready');
    assert.equal(await inferenceCount(), 3, 'same model object: statistics kept');
  });

  test('Triton 2.51 reloads a READY model on every explicit load, even with unchanged files', async () => {
    // This is why callers use ensureModelLoaded (or check modelState) instead of calling loadModel blindly:
    // a reload builds a second copy of the model before swapping (twice the GPU memory for a moment).
    await client.loadModel(M);
    assert.equal(await inferenceCount(), 2, 'new model object: only its warmup');
    await ask();
  });

  test('a changed setting rewrites config.pbtxt and the next load really reloads', async () => {
    const res = await install({ maxQueueSize: 16 });
    // Every entry is rendered from the same settings (only the chosen one is loaded).
    assert.deepEqual(res.changed, [`${M}/config.pbtxt`, `codegeex4-all-9b/config.pbtxt`, `glm-4-9b-chat/config.pbtxt`]);
    await client.loadModel(M);
    assert.equal(await inferenceCount(), 2, 'reloaded: only the new warmup');
    const cfg = await client.modelConfig(M);
    assert.equal((cfg.dynamic_batching as { default_queue_policy: { max_queue_size: number } }).default_queue_policy.max_queue_size, 16 + 1024);
    await ask();
  });
});
