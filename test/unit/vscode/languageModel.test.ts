// The language model chat provider on the host side, against the fake `vscode` module and a stub Triton (external
// mode): what it offers and when VS Code is told to ask again, how a request reaches Triton, that cancelling closes
// the stream (Triton's cancel), and that what ChatGLM3 cannot take is refused by name.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type * as vscode from 'vscode';
import { activateExtension, waitFor, type ExtensionModule } from './support/activate';
import { createFakeVscode, installVscodeModule } from './support/fakeVscode';
import { CancellationError, LanguageModelTextPart, LanguageModelToolCallPart } from './support/fakeLm';
import { startStubTriton, type StubTriton } from './support/stubTriton';

let stub: StubTriton;
let storage: string;
let fake: ReturnType<typeof createFakeVscode>;
let uninstall: (() => void) | undefined;
let ext: ExtensionModule | undefined;

type Provider = vscode.LanguageModelChatProvider & { onDidChangeLanguageModelChatInformation: vscode.Event<void> };
type Respond = (...args: Parameters<vscode.LanguageModelChatProvider['provideLanguageModelChatResponse']>) => Promise<void>;
/** provideLanguageModelChatResponse as the Promise it is (VS Code types it as a Thenable). */
const respond: Respond = (...args) => Promise.resolve(provider().provideLanguageModelChatResponse(...args));
const provider = () => fake.rec.lmProviders.get('triton-chatglm') as Provider;
const token = (cancelled = false) => {
  const listeners: (() => void)[] = [];
  return {
    isCancellationRequested: cancelled,
    onCancellationRequested: (l: () => void) => { listeners.push(l); return { dispose() {} }; },
    cancel() { this.isCancellationRequested = true; for (const l of listeners) l(); },
  };
};
const message = (role: 1 | 2 | 3, ...content: unknown[]) => ({ role, content, name: undefined }) as unknown as vscode.LanguageModelChatRequestMessage;
const options = { toolMode: 1, modelOptions: {} } as unknown as vscode.ProvideLanguageModelChatResponseOptions;
const streamRequests = () => stub.requests.filter((r) => r.path.endsWith('generate_stream'));

async function models(): Promise<vscode.LanguageModelChatInformation[]> {
  return (await provider().provideLanguageModelChatInformation({ silent: true }, token() as never)) ?? [];
}

before(async () => {
  stub = await startStubTriton();
  storage = mkdtempSync(join(tmpdir(), 'tcg-lm-'));
  fake = createFakeVscode({ 'tritonChatglm.serverMode': 'external', 'tritonChatglm.externalUrl': stub.url, 'tritonChatglm.askBeforeUnload': false });
  uninstall = installVscodeModule(fake.vscode);
  ext = await activateExtension(storage);
});

after(async () => {
  await ext?.deactivate();
  uninstall?.();
  await stub?.close();
  rmSync(storage, { recursive: true, force: true });
});

test('registers under the contributed vendor and offers the loaded model with the server\'s limits', async () => {
  assert.ok(provider(), 'no provider registered for triton-chatglm');
  await waitFor(() => fake.rec.context.get('tritonChatglm.modelState') === 'ready', 'the model state to be adopted from the server');
  const [model, ...more] = await models();
  assert.equal(more.length, 0);
  assert.ok(model);
  assert.equal(model.id, 'chatglm3-6b');
  assert.equal(model.maxInputTokens, 4096, 'max_input_tokens of the served config');
  assert.equal(model.maxOutputTokens, 1024, 'max_new_tokens_limit of the served config');
  assert.equal(model.capabilities.toolCalling, false);
  assert.match(model.tooltip ?? '', new RegExp(`Triton server at ${stub.url.replace(/[.]/g, '\\.')}`));
});

test('a two-turn request reaches Triton as ChatGLM3 history and streams text parts', async () => {
  const [model] = await models();
  const parts: unknown[] = [];
  const before = streamRequests().length;
  await respond(model!, [
    message(3, new LanguageModelTextPart('Be brief.')),
    message(1, new LanguageModelTextPart('first question')),
    message(2, new LanguageModelTextPart('first answer')),
    message(1, new LanguageModelTextPart('second question')),
  ], options, { report: (p) => parts.push(p) }, token() as never);
  const sent = streamRequests().slice(before);
  assert.equal(sent.length, 1);
  assert.equal(sent[0]!.body.prompt, 'second question');
  assert.deepEqual(JSON.parse(String(sent[0]!.body.history)).map((h: { role: string; content: string }) => `${h.role}:${h.content}`),
    ['system:Be brief.', 'user:first question', 'assistant:first answer']);
  assert.ok(parts.length > 0 && parts.every((p) => p instanceof LanguageModelTextPart));
  assert.equal(parts.map((p) => (p as LanguageModelTextPart).value).join(''), 'Echo: second question');
});

test('cancelling closes the stream, which is how Triton cancels the request', async () => {
  const [model] = await models();
  const t = token();
  const closed = stub.closedEarly;
  const parts: unknown[] = [];
  const answer = respond(model!, [message(1, new LanguageModelTextPart('a slow one'))], options, { report: (p) => parts.push(p) }, t as never);
  await waitFor(() => parts.length >= 2, 'the slow answer to stream');
  t.cancel();
  await assert.rejects(answer, (e: unknown) => e instanceof CancellationError);
  await waitFor(() => stub.closedEarly === closed + 1, 'the stub to see the stream closed early');
});

test('tool calls, over-budget requests and unknown roles are refused before anything is sent', async () => {
  const [model] = await models();
  const before = streamRequests().length;
  await assert.rejects(respond(model!, [
    message(1, new LanguageModelTextPart('hi')), message(2, new LanguageModelToolCallPart('c1', 'search', {})), message(1, new LanguageModelTextPart('go on')),
  ], options, { report() {} }, token() as never), /Message 2 holds a tool call/);
  await assert.rejects(respond(model!, [message(1, new LanguageModelTextPart('word '.repeat(5000)))], options, { report() {} }, token() as never),
    /more than the model's input budget of 4096 tokens/);
  // A role VS Code may add later: refused by the served model's name.
  await assert.rejects(respond(model!, [message(4 as never, new LanguageModelTextPart('hi'))], options, { report() {} }, token() as never),
    /^Error: Message 1 has a role ChatGLM3-6B does not take \(4\): only system, user and assistant messages\.$/);
  assert.equal(streamRequests().length, before);
});

test('token counts follow the token meter (a message counts its role overhead)', async () => {
  const [model] = await models();
  const text = await provider().provideTokenCount(model!, 'hello world', token() as never);
  const msg = await provider().provideTokenCount(model!, message(1, new LanguageModelTextPart('hello world')), token() as never);
  assert.ok(text >= 2);
  assert.equal(msg, text + 3);
});

test('Unload takes the model away and Load brings it back, each announced', async () => {
  let fired = 0;
  const sub = provider().onDidChangeLanguageModelChatInformation(() => { fired += 1; });
  await fake.rec.commands.get('tritonChatglm.unloadModel')!();
  await waitFor(() => fake.rec.context.get('tritonChatglm.modelState') === 'unloaded', 'the model to be unloaded');
  await waitFor(() => fired >= 1, 'the change to be announced');
  assert.deepEqual(await models(), []);
  const afterUnload = fired;
  await fake.rec.commands.get('tritonChatglm.loadModel')!();
  await waitFor(() => fake.rec.context.get('tritonChatglm.modelState') === 'ready', 'the model to be ready');
  await waitFor(() => fired > afterUnload, 'the load to be announced');
  assert.equal((await models()).length, 1);
  sub.dispose();
});
