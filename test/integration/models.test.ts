// Choosing a model against the REAL tritonserver (CPU): the installed repository has one entry per catalog model,
// only the chosen one is loaded, and switching unloads it and loads the other under its own name. ChatGLM3's entry
// runs the tiny test engine; GLM-4's runs the native engine over ../shared/fixtures/glm4-tiny (GLM-4's
// architecture and tokenizer), so its prompt is tokenized in GLM-4's layout ([gMASK]<sop><|role|>\n...): the
// prompt token count and THUDM's greedy tokens (golden.json) say so.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { ChatMessage } from '../../src/core/chat/messages';
import { installRepository } from '../../src/core/repository/install';
import type { ModelSettings } from '../../src/core/repository/renderConfig';
import { streamChat, type ChatFinalEvent } from '../../src/core/triton/chatglm';
import { TestTritonClient } from '../support/testTritonClient';

interface RunningTriton { url: string; stop(): Promise<void> }
interface TritonProcessModule {
  startTritonServer(options: { repository: string; env?: Record<string, string> }): Promise<RunningTriton>;
  modelRepositorySource: string;
  snapshotRepositorySource(work: string): string;
  testingPythonPath: string;
  projectRoot: string;
  tinyEngine: string;
}
interface GoldenCase { messages: ChatMessage[]; input_ids: number[]; generate_tokens: number[] }

const GLM4_FIXTURE = join(__dirname, '../../../shared/fixtures/glm4-tiny');
const golden = JSON.parse(readFileSync(join(GLM4_FIXTURE, 'golden.json'), 'utf8')) as { generate_max_new_tokens: number; cases: GoldenCase[] };

let tp: TritonProcessModule;
let server: RunningTriton | undefined;
let client: TestTritonClient;
let work: string;
let repository: string;
let source: string;

async function install(settings: Partial<ModelSettings>) {
  return installRepository({ source, destination: repository, settings: { instanceKind: 'cpu', ...settings } });
}

async function states(): Promise<Record<string, string>> {
  const rows = await client.repositoryIndex();
  return Object.fromEntries(rows.map((r) => [r.name, r.state ?? 'NOT LOADED']));
}

async function answer(model: string, messages: ChatMessage[], maxNewTokens: number): Promise<ChatFinalEvent> {
  const history = messages.slice(0, -1);
  const prompt = messages.at(-1)!.content;
  let final: ChatFinalEvent | undefined;
  for await (const ev of streamChat(client, model, { prompt, history, maxNewTokens, temperature: 0 })) if (ev.type === 'final') final = ev;
  assert.ok(final, 'no final event');
  return final;
}

describe('one repository entry per catalog model on tritonserver', { timeout: 600_000 }, () => {
  before(async () => {
    tp = (await import(pathToFileURL(join(__dirname, '../support/triton-process.mjs')).href)) as TritonProcessModule;
    work = mkdtempSync(join(tmpdir(), 'models-it-'));
    repository = join(work, 'model_repository');
    source = tp.snapshotRepositorySource(work);
    await install({ model: 'chatglm3-6b', engine: tp.tinyEngine });
    // The stub embeds Debian's Python, which sees the virtual environment's packages (tiktoken, safetensors) only
    // through PYTHONPATH, as triton/tests/test_glm4_server.py runs it.
    const site = execFileSync(join(tp.projectRoot, '.venv/bin/python'), ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], { encoding: 'utf8' }).trim();
    server = await tp.startTritonServer({ repository, env: { PYTHONPATH: [tp.testingPythonPath, site].join(':') } });
    client = new TestTritonClient({ baseUrl: server.url });
  });

  after(async () => {
    await client?.destroy();
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('every catalog model has an entry; only the chosen one (ChatGLM3) is loaded, and it answers under its name', async () => {
    await client.loadModel('chatglm3-6b', { timeoutMs: 240_000 });
    assert.deepEqual(await states(), { 'chatglm3-6b': 'READY', 'codegeex4-all-9b': 'NOT LOADED', 'glm-4-9b-chat': 'NOT LOADED' });
    const final = await answer('chatglm3-6b', [{ role: 'user', content: 'hi' }], 2);
    assert.equal(final.completionTokens, 2);
  });

  test('switching: GLM-4 is rendered as the chosen entry, ChatGLM3 unloaded, GLM-4 loaded; its prompt uses GLM-4\'s layout', async () => {
    const res = await install({ model: 'glm-4-9b-chat', engine: 'native', dtype: 'float32', weightsPath: GLM4_FIXTURE });
    assert.ok(res.changed.includes('glm-4-9b-chat/config.pbtxt'));
    await client.unloadModel('chatglm3-6b');
    await client.waitForState('chatglm3-6b', 'UNAVAILABLE', { timeoutMs: 120_000, intervalMs: 250 });
    await client.loadModel('glm-4-9b-chat', { timeoutMs: 240_000 });
    const now = await states();
    assert.equal(now['glm-4-9b-chat'], 'READY');
    assert.notEqual(now['chatglm3-6b'], 'READY');
    assert.equal((await client.modelConfig('glm-4-9b-chat')).name, 'glm-4-9b-chat');
    for (const c of golden.cases.slice(0, 2)) {
      const final = await answer('glm-4-9b-chat', c.messages, golden.generate_max_new_tokens);
      // The prompt's token count is the one of THUDM's GLM-4 chat template; greedy decoding gives THUDM's tokens.
      assert.equal(final.promptTokens, c.input_ids.length);
      assert.equal(final.completionTokens, c.generate_tokens.length);
    }
  });
});
