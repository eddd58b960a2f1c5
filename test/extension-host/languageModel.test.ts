// The language model chat provider in the real VS Code (issue #28): what another extension, or VS Code's Chat view,
// sees through `vscode.lm`. Runs after extension.test.ts (which stops its server): starts ChatGLM, finds the model by
// vendor, streams a two-turn answer, cancels a long one (Triton's row freed), and follows Unload and Load.
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';

const VENDOR = 'triton-chatglm';
const httpPort = Number(process.env.E2E_HTTP_PORT);
const metricsPort = Number(process.env.E2E_METRICS_PORT);
const config = () => vscode.workspace.getConfiguration('tritonChatglm');

/** The extension's log channel files: the lifecycle lines say when an operation has ended (see extension.test.ts). */
function extensionLog(): string {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.log') && p.includes('triton-chatglm.triton-chatglm')) files.push(p);
    }
  };
  walk(join(String(process.env.E2E_USER_DATA_DIR), 'logs'));
  return files.map((f) => readFileSync(f, 'utf8')).join('\n');
}

async function waitFor<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 180_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v as NonNullable<T>;
    } catch (e) { last = e; }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const ready = async () => (await fetch(`http://127.0.0.1:${httpPort}/v2/models/chatglm3-6b/ready`).catch(() => undefined))?.status === 200;
/** Our models in vscode.lm; a call that does not come back within 20 s fails naming itself (a probe must not hang). */
async function ours(): Promise<vscode.LanguageModelChat[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('vscode.lm.selectChatModels did not answer within 20 s')), 20_000); });
  try {
    return await Promise.race([vscode.lm.selectChatModels({ vendor: VENDOR }), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A Prometheus figure of the model's scheduler, summed over its label sets. */
async function metric(name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `)).reduce((s, l) => s + Number(l.split(/\s+/).at(-1)), 0);
}

/** Runs a command without awaiting it (a command that ends in a notification waits for it to be closed). */
function fire(command: string): void {
  vscode.commands.executeCommand(command).then(undefined, (e: unknown) => console.log(`[languageModel.test] ${command} failed: ${String(e)}`));
}

describe('language model provider (vscode.lm)', function () {
  before(async () => {
    await config().update('askBeforeUnload', false, vscode.ConfigurationTarget.Global);
    fire('tritonChatglm.startChatglm');
    await waitFor(ready, 'ChatGLM to be started and loaded', 300_000);
  });

  after(async () => {
    // Unload first: Stop asks before it throws a loaded model away, and no one answers a dialog here.
    const mark = extensionLog().length;
    fire('tritonChatglm.unloadModel');
    await waitFor(() => /lifecycle: modelUnloaded/.test(extensionLog().slice(mark)), 'the unload to end', 60_000).catch(() => undefined);
    await config().update('askBeforeUnload', undefined, vscode.ConfigurationTarget.Global);
    fire('tritonChatglm.stopServer');
    await waitFor(async () => !(await ready()), 'the server to stop', 60_000).catch(() => undefined);
  });

  it('offers the loaded model by vendor, with the served limits and no tool calling', async () => {
    const [model, ...more] = await waitFor(async () => ((await ours()).length ? ours() : undefined), 'the model in vscode.lm');
    assert.equal(more.length, 0);
    assert.equal(model!.id, 'chatglm3-6b');
    assert.equal(model!.vendor, VENDOR);
    assert.equal(model!.maxInputTokens, 6144);
  });

  it('answers a two-turn request, streamed', async () => {
    const [model] = await ours();
    const response = await model!.sendRequest([
      vscode.LanguageModelChatMessage.User('What is 2 + 2?'),
      vscode.LanguageModelChatMessage.Assistant('4.'),
      vscode.LanguageModelChatMessage.User('And 3 + 3?'),
    ], { modelOptions: { maxTokens: 32 } }, new vscode.CancellationTokenSource().token);
    const chunks: string[] = [];
    for await (const text of response.text) chunks.push(text);
    assert.ok(chunks.length >= 2, `the answer came in ${chunks.length} piece(s), not streamed`);
    assert.ok(chunks.join('').trim().length > 0, 'an empty answer');
    const counted = await model!.countTokens(vscode.LanguageModelChatMessage.User('What is 2 + 2?'));
    assert.ok(counted >= 5, `counted ${counted} tokens for a short message and its role`);
  });

  it('cancelling a long answer stops it on the server: the row is freed', async () => {
    const [model] = await ours();
    const cancelled = await metric('chatglm3_cancelled_requests_total');
    const cts = new vscode.CancellationTokenSource();
    const response = await model!.sendRequest([vscode.LanguageModelChatMessage.User('Tell a long story.')], { modelOptions: { maxTokens: 2048 } }, cts.token);
    let pieces = 0;
    try {
      for await (const _ of response.text) {
        pieces += 1;
        if (pieces === 2) cts.cancel();
      }
    } catch (e) {
      assert.ok(e instanceof vscode.CancellationError || /cancel/i.test(String(e)), `the stream ended with ${String(e)}`);
    }
    assert.ok(pieces >= 2);
    await waitFor(async () => (await metric('chatglm3_cancelled_requests_total')) > cancelled, 'Triton to count the cancelled request', 30_000);
    await waitFor(async () => (await metric('chatglm3_active_rows')) === 0, 'no active row left', 30_000);
  });

  it('the model disappears on Unload and comes back on Load, without a reload', async () => {
    let changes = 0;
    const sub = vscode.lm.onDidChangeChatModels(() => { changes += 1; });
    try {
      const mark = extensionLog().length;
      fire('tritonChatglm.unloadModel');
      await waitFor(async () => (await ours()).length === 0, 'the model to leave vscode.lm', 60_000);
      const afterUnload = changes;
      assert.ok(afterUnload >= 1, 'onDidChangeChatModels did not fire on Unload');
      // Load is refused while the unload is still under way (as its enablement says): wait for its end.
      await waitFor(() => /lifecycle: modelUnloaded/.test(extensionLog().slice(mark)), 'the extension to finish the unload', 60_000);
      assert.equal((await ours()).length, 0, 'the unloaded model is offered');
      fire('tritonChatglm.loadModel');
      await waitFor(ready, 'the model to be loaded again', 240_000);
      await waitFor(async () => (await ours()).length === 1, 'the model back in vscode.lm', 30_000);
      assert.ok(changes > afterUnload, 'onDidChangeChatModels did not fire on Load');
    } finally {
      sub.dispose();
    }
  });
});
