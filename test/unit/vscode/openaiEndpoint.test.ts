// The extension's OpenAI endpoint (fake `vscode`, stub Triton in external mode): off by default; turning
// `tritonChatglm.openai.enabled` on serves it on 127.0.0.1 in front of the window's server, the status bar's menu
// shows its URL and copies it; turning it off closes it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { activateExtension, waitFor, type ExtensionModule } from './support/activate';
import { createFakeVscode, installVscodeModule } from './support/fakeVscode';
import { startStubTriton, type StubTriton } from './support/stubTriton';

let stub: StubTriton;
let storage: string;
let fake: ReturnType<typeof createFakeVscode>;
let uninstall: () => void;
let ext: ExtensionModule;

const freePort = () => new Promise<number>((resolve, reject) => {
  const srv = createServer();
  srv.on('error', reject);
  srv.listen(0, '127.0.0.1', () => {
    const { port } = srv.address() as { port: number };
    srv.close(() => resolve(port));
  });
});

const answers = async (url: string): Promise<boolean> => {
  try {
    return (await fetch(`${url}/models`)).status === 200;
  } catch {
    return false;
  }
};

/** Polls an async probe (waitFor takes sync ones). */
async function until(probe: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

before(async () => {
  stub = await startStubTriton();
  storage = mkdtempSync(join(tmpdir(), 'tcg-openai-'));
  fake = createFakeVscode({ 'tritonChatglm.serverMode': 'external', 'tritonChatglm.externalUrl': stub.url });
  uninstall = installVscodeModule(fake.vscode);
  ext = await activateExtension(storage);
  await waitFor(() => fake.rec.context.get('tritonChatglm.modelState') === 'ready', 'the model to be ready');
});

after(async () => {
  await ext?.deactivate();
  uninstall?.();
  await stub?.close();
  rmSync(storage, { recursive: true, force: true });
});

test('off by default; on, it answers on 127.0.0.1 through the window\'s server and the menu copies its URL; off again, it is closed', async () => {
  await fake.vscode.commands.executeCommand('tritonChatglm.showActions');
  assert.ok(!fake.rec.quickPickCalls.at(-1)!.labels.some((l) => l.includes('OpenAI')), 'no endpoint in the menu while it is off');

  const port = await freePort();
  assert.equal(await answers(`http://127.0.0.1:${port}/v1`), false, 'nothing listens before the setting is on');
  const url = `http://127.0.0.1:${port}/v1`;
  fake.updateConfig({ 'tritonChatglm.openai.enabled': true, 'tritonChatglm.openai.port': port });
  await until(() => answers(url), 'the endpoint to listen');
  const res = await fetch(`${url}/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chatglm3-6b', messages: [{ role: 'user', content: 'hello' }], max_tokens: 8 }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const body = await res.json() as { choices: { message: { content: string } }[] };
  assert.ok(body.choices[0]!.message.content.length > 0, 'the stub server answered through the endpoint');

  fake.rec.pick = '$(plug) OpenAI-compatible endpoint';
  await fake.vscode.commands.executeCommand('tritonChatglm.showActions');
  const menu = fake.rec.quickPickCalls.at(-1)!;
  assert.equal(menu.descriptions[menu.labels.indexOf('$(plug) OpenAI-compatible endpoint')], url);
  assert.equal(fake.vscode.env.clipboard.text, url, 'picking it copies the URL');
  fake.rec.pick = undefined;

  fake.updateConfig({ 'tritonChatglm.openai.enabled': false });
  await until(async () => !(await answers(url)), 'the endpoint to close');
});
