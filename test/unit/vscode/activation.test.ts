// The real extension code activated against a fake `vscode` module and a stub Triton (external mode): commands
// and views registered as package.json declares, the chat webview protocol end to end (validation, streaming,
// Stop closing the connection, persistence), Explain Selection fan-out into comment threads, and a clean dispose.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createFakeVscode, installVscodeModule, Position, Selection, Uri } from './support/fakeVscode';
import { startStubTriton, type StubTriton } from './support/stubTriton';

const root = join(__dirname, '../../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { contributes: { commands: { command: string }[] } };

async function waitFor<T>(probe: () => T | undefined | false, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let stub: StubTriton;
let storage: string;
let fake: ReturnType<typeof createFakeVscode>;
let uninstall: () => void;
type ExtensionModule = typeof import('../../../src/vscode/extension');
let ext: ExtensionModule;
const posted: Record<string, unknown>[] = [];
let receive: ((m: unknown) => void) | undefined;
let webviewHtml = '';

before(async () => {
  stub = await startStubTriton();
  storage = mkdtempSync(join(tmpdir(), 'tcg-ext-'));
  fake = createFakeVscode({
    'tritonChatglm.serverMode': 'external',
    'tritonChatglm.externalUrl': stub.url,
    'tritonChatglm.explainMaxConcurrency': 8,
    'tritonChatglm.explainMaxSelectionChars': 200,
  });
  uninstall = installVscodeModule(fake.vscode);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  ext = require('../../../src/vscode/extension') as ExtensionModule;
  const memento = new Map<string, unknown>();
  const context = {
    subscriptions: [] as unknown[],
    extensionUri: Uri.file(root),
    extensionPath: root,
    globalStorageUri: Uri.file(storage),
    globalState: { get: (k: string) => memento.get(k), update: async (k: string, v: unknown) => { memento.set(k, v); }, keys: () => [...memento.keys()] },
  };
  await ext.activate(context as never);
});

after(async () => {
  await ext?.deactivate();
  uninstall?.();
  await stub?.close();
  rmSync(storage, { recursive: true, force: true });
});

test('activation registers every contributed command and the chat view, and attaches to the server', async () => {
  const contributed = pkg.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual([...fake.rec.commands.keys()].sort(), contributed);
  assert.ok(fake.rec.viewProviders.has('tritonChatglm.chat'));
  await waitFor(() => fake.rec.context.get('tritonChatglm.modelState') === 'ready', 'the model state to be adopted from the server');
  assert.equal(fake.rec.context.get('tritonChatglm.serverState'), 'running');
  assert.equal(fake.rec.context.get('tritonChatglm.serverMode'), 'external');
  assert.match(fake.rec.statusBar[0]!.text, /ChatGLM: ready/);
});

test('the chat view: strict CSP, l10n and state on ready, malformed messages dropped', async () => {
  const provider = fake.rec.viewProviders.get('tritonChatglm.chat')!;
  const view = {
    webview: {
      options: {} as { localResourceRoots?: Uri[]; enableScripts?: boolean },
      cspSource: 'vscode-resource:',
      html: '',
      asWebviewUri: (u: Uri) => u,
      onDidReceiveMessage: (l: (m: unknown) => void) => { receive = l; return { dispose() {} }; },
      postMessage: async (m: Record<string, unknown>) => { posted.push(m); return true; },
    },
    onDidDispose: () => ({ dispose() {} }),
  };
  provider.resolveWebviewView(view);
  webviewHtml = view.webview.html;
  assert.match(webviewHtml, /default-src 'none'; script-src 'nonce-[A-Za-z0-9+/=]{16,}'; style-src vscode-resource:/);
  assert.doesNotMatch(webviewHtml, /unsafe-inline|unsafe-eval/);
  assert.deepEqual(view.webview.options.localResourceRoots?.map((u) => u.path).sort(), [join(root, 'dist'), join(root, 'media')]);

  receive!({ type: 'ready' });
  await waitFor(() => posted.find((m) => m.type === 'state'), 'a state message');
  const l10n = posted.find((m) => m.type === 'l10n') as { strings: Record<string, string> } | undefined;
  assert.equal(l10n?.strings.send, 'Send');

  const before = posted.length;
  const logBefore = fake.rec.log.length;
  receive!({ type: 'send', text: 42 });
  receive!({ type: 'runCommand', command: 'workbench.action.terminal.new' });
  receive!('not even an object');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(posted.length, before, 'nothing happens for malformed messages');
  assert.equal(stub.requests.filter((r) => r.path.endsWith('generate_stream')).length, 0);
  assert.equal(fake.rec.log.slice(logBefore).filter((l) => l.includes('dropped a message')).length, 3);
});

test('send: deltas are forwarded, the answer completes and the conversation is saved', async () => {
  posted.length = 0;
  receive!({ type: 'send', text: 'Hello there' });
  const done = await waitFor(() => posted.find((m) => m.type === 'messageDone'), 'messageDone') as { status: string; completionTokens: number };
  assert.equal(done.status, 'complete');
  assert.equal(done.completionTokens, 2);
  const deltas = posted.filter((m) => m.type === 'delta').map((m) => m.text).join('');
  assert.equal(deltas, 'Echo: Hello there');
  const request = stub.requests.find((r) => r.path.endsWith('generate_stream'))!;
  assert.equal(request.body.prompt, 'Hello there');
  assert.equal(request.body.temperature, 0.8);
  assert.equal(request.body.max_new_tokens, 512);
  const file = join(storage, 'conversations.json');
  await waitFor(() => existsSync(file) && readFileSync(file, 'utf8').includes('Echo: Hello there'), 'the answer on disk');
});

test('stop aborts the request: the connection is closed and the partial answer kept as stopped', async () => {
  posted.length = 0;
  const closedBefore = stub.closedEarly;
  receive!({ type: 'send', text: 'tell me something slow' });
  await waitFor(() => posted.find((m) => m.type === 'delta'), 'the first delta');
  receive!({ type: 'stop' });
  const done = await waitFor(() => posted.find((m) => m.type === 'messageDone'), 'messageDone') as { status: string };
  assert.equal(done.status, 'stopped');
  await waitFor(() => stub.closedEarly > closedBefore, 'the server to see the connection closed');
  const state = [...posted].reverse().find((m) => m.type === 'state') as { messages: { status: string; content: string }[]; busy: boolean };
  const last = state.messages.at(-1)!;
  assert.equal(last.status, 'stopped');
  assert.match(last.content, /^w0 /);
  assert.equal(state.busy, false);
});

test('explain: each selection is its own concurrent request, answers stream into comment threads', async () => {
  const text = ['def a():', '    return 1', '', 'def b():', '    return 2', '', 'x = "' + 'y'.repeat(400) + '"'].join('\n');
  const lines = text.split('\n');
  const offsetAt = (p: Position) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  const getText = (r: Selection) => text.slice(offsetAt(r.start), offsetAt(r.end));
  const sel = (l1: number, l2: number) => new Selection(new Position(l1, 0), new Position(l2, lines[l2]!.length));
  fake.vscode.window.activeTextEditor = {
    document: { uri: Uri.file('/w/geometry.py'), fileName: '/w/geometry.py', languageId: 'python', getText, offsetAt, lineAt: (n: number) => ({ text: lines[n]! }) },
    selections: [sel(3, 4), sel(0, 1), sel(6, 6), sel(0, 1)],
  };
  const before = stub.requests.filter((r) => r.path.endsWith('generate_stream')).length;
  await fake.vscode.commands.executeCommand('tritonChatglm.explainSelection');
  const explains = stub.requests.filter((r) => r.path.endsWith('generate_stream')).slice(before);
  assert.equal(explains.length, 3, 'duplicate selection dropped, the other three each get a request');
  assert.ok(stub.maxConcurrent >= 2, `requests were concurrent (max ${stub.maxConcurrent})`);
  for (const r of explains) {
    assert.match(String(r.body.prompt), /python code from geometry\.py/);
    assert.deepEqual(JSON.parse(String(r.body.history)), []);
  }
  assert.ok(explains.some((r) => String(r.body.prompt).includes('def a():')));
  const threads = fake.rec.threads.slice(-3);
  assert.deepEqual(threads.map((t) => t.range.start.line), [0, 3, 6], 'one thread per selection, in document order');
  for (const t of threads) assert.match(t.comments[0]!.body.value, /^Explains \d+ chars\./);
  assert.equal(threads[2]!.comments[0]!.label, 'The selection was trimmed.');
  assert.ok(fake.rec.messages.some((m) => m.level === 'warning' && /1 of 3 selections were longer than 200/.test(m.text)));
  for (const t of threads) assert.equal(t.comments[0]!.body.isTrusted, false, 'model output is untrusted markdown');
});

test('server status panel: strict CSP, polled statistics posted as data', async () => {
  await fake.vscode.commands.executeCommand('tritonChatglm.showServerStatus');
  const panel = fake.rec.panels.at(-1)!;
  assert.equal(panel.viewType, 'tritonChatglm.status');
  assert.match(panel.webview.html, /default-src 'none'; script-src 'nonce-/);
  const inline = [...panel.webview.html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]);
  assert.ok(inline.length === 1 && /nonce="/.test(inline[0]!));
  const update = await waitFor(() => panel.webview.posted.find((m) => (m as { figures?: { requests?: string } }).figures?.requests), 'a status update') as {
    figures: Record<string, string>; series: Record<string, { d: string }>; hidden: string[]; note: string;
  };
  assert.equal(update.figures.requests, '4');
  assert.equal(update.figures.batch, '2');
  assert.equal(update.figures.queue, '1');
  assert.ok(Object.keys(update.series).includes('activeRows') && Object.keys(update.series).includes('requestsPerSecond'));
  // No metrics address for this external server: nothing live, and neither the scheduler's nor the GPU cards.
  assert.deepEqual(update.hidden, ['scheduler', 'gpu']);
  assert.match(update.note, /No metrics address is set/);
});

test('a setting that needs a model reload says so and offers Reload Model; generation settings apply at once', async () => {
  const before = fake.rec.messages.length;
  fake.updateConfig({ 'tritonChatglm.maxBatchSize': 4 });
  const m = await waitFor(() => fake.rec.messages.slice(before).find((x) => /take effect when the model is reloaded/.test(x.text)), 'the reload offer');
  assert.deepEqual(m.buttons, ['Reload Model']);
  assert.match(m.text, /maxBatchSize/);
  const count = fake.rec.messages.length;
  fake.updateConfig({ 'tritonChatglm.temperature': 0.3 });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(fake.rec.messages.length, count, 'no prompt for a per-request setting');
  posted.length = 0;
  receive!({ type: 'newChat' });
  receive!({ type: 'send', text: 'Temperature check' });
  await waitFor(() => posted.find((x) => x.type === 'messageDone'), 'messageDone');
  const last = stub.requests.filter((r) => r.path.endsWith('generate_stream')).at(-1)!;
  assert.equal(last.body.temperature, 0.3);
  assert.equal(last.body.history, '[]', 'a new chat starts without history');
});

test('deactivate disposes everything it created and keeps the conversations', async () => {
  await ext.deactivate();
  const alive = fake.rec.disposables.filter((d) => !d.disposed).map((d) => d.kind);
  assert.deepEqual(alive, []);
  assert.equal(fake.rec.commands.size, 0);
  assert.ok(fake.rec.threads.every((t) => t.disposed));
  const saved = JSON.parse(readFileSync(join(storage, 'conversations.json'), 'utf8')) as unknown;
  assert.ok(JSON.stringify(saved).includes('Echo: Hello there'));
  assert.ok(JSON.stringify(saved).includes('python code from geometry.py'), 'explanations are conversations too');
});
