// Explanations that leave the code readable, and destructive actions that ask first, through the real extension
// against the fake `vscode` module and the stub Triton (an external server with the model ready): one explanation
// expanded, Dismiss All (threads and the run still going), threads of a closed editor removed; the status bar menu's
// order; Unload asking while the model is loaded, with the remembered last load time and "Don't Ask Again".
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { activateExtension, resolveChatView, waitFor, type ExtensionModule } from './support/activate';
import { createFakeVscode, fakeDocument, installVscodeModule, Position, Selection, Uri } from './support/fakeVscode';
import { startStubTriton, type StubTriton } from './support/stubTriton';

const SAMPLE = ['def a():', '    return 1', '', 'def b():', '    return 2', ''].join('\n');

let stub: StubTriton;
let storage: string;
let fake: ReturnType<typeof createFakeVscode>;
let uninstall: () => void;
let ext: ExtensionModule;
const memento = new Map<string, unknown>();

const run = (command: string, ...args: unknown[]) => fake.vscode.commands.executeCommand(command, ...args) as Promise<void>;
const live = () => fake.rec.threads.filter((t) => !t.disposed);

function editorOn(path: string, ...selections: [number, number][]) {
  const document = fakeDocument(Uri.file(path), SAMPLE, 'python');
  fake.setActiveEditor({ document, selections: selections.map(([a, b]) => new Selection(new Position(a, 0), new Position(b, SAMPLE.split('\n')[b]!.length))) });
  return fake.openTab(document.uri);
}

describe('explanations and destructive actions (host side)', () => {
  before(async () => {
    stub = await startStubTriton();
    storage = mkdtempSync(join(tmpdir(), 'tcg-explain-'));
    fake = createFakeVscode({ 'tritonChatglm.serverMode': 'external', 'tritonChatglm.externalUrl': stub.url });
    uninstall = installVscodeModule(fake.vscode);
    ext = await activateExtension(storage, memento);
    resolveChatView(fake, []);
    await waitFor(() => fake.rec.statusBar[0]?.text.includes('ready'), 'the external server to be ready');
  });

  after(async () => {
    await ext?.deactivate();
    uninstall?.();
    await stub?.close();
    if (storage) rmSync(storage, { recursive: true, force: true });
  });

  beforeEach(() => {
    fake.rec.messages.length = 0; fake.rec.modals.length = 0; fake.rec.answer = undefined; fake.rec.quickPickCalls.length = 0;
  });

  it('one explanation opens brief like several (no comment: nothing for VS Code to open its Comments panel for)', async () => {
    const tab = editorOn('/w/one.py', [0, 1]);
    await run('tritonChatglm.explainSelection');
    const [thread] = live();
    assert.equal(thread!.collapsibleState, 1);
    assert.equal(thread!.contextValue, 'tritonChatglm.explanation.brief');
    assert.match(thread!.label ?? '', /^Explanation of one\.py:1–2: Explains \d+ chars\.$/);
    assert.equal(thread!.comments.length, 0);
    assert.equal(fake.rec.context.get('tritonChatglm.hasExplanations'), true);
    // Show Full Explanation: the whole answer in its comment, the title back to the place only.
    await run('tritonChatglm.showFullExplanation', thread);
    assert.equal(thread!.contextValue, 'tritonChatglm.explanation.full');
    assert.equal(thread!.label, 'Explanation of one.py:1–2');
    assert.match(thread!.comments[0]!.body.value, /^Explains \d+ chars\./);
    assert.equal(thread!.comments[0]!.author?.name, 'ChatGLM3-6B', 'by the model that explains (the served one)');
    await fake.vscode.window.tabGroups.close([tab]);
  });

  it('closing the editor removes its threads; Dismiss All removes every thread and stops the run', async () => {
    assert.deepEqual(live(), [], 'the tab of one.py closed: its thread went');
    assert.equal(fake.rec.context.get('tritonChatglm.hasExplanations'), false);
    // Two files explained; one of them closed: only its threads go.
    const first = editorOn('/w/first.py', [0, 1], [3, 4]);
    await run('tritonChatglm.explainSelection');
    editorOn('/w/second.py', [0, 1]);
    await run('tritonChatglm.explainSelection');
    assert.equal(live().length, 3);
    await fake.vscode.window.tabGroups.close([first]);
    assert.deepEqual(live().map((t) => t.uri.path), ['/w/second.py']);
    // A run still going: Dismiss All takes the threads away and closes its stream (the server cancels it).
    fake.vscode.window.activeTextEditor = undefined;
    editorOn('/w/slow.py', [0, 1], [3, 4]);
    const doc = (fake.vscode.window.activeTextEditor as { document: { getText(r?: unknown): string } }).document;
    const getText = doc.getText.bind(doc);
    doc.getText = (r?: unknown) => (r ? `slow ${getText(r)}` : getText()); // the stub streams "slow" prompts until closed
    const closed = stub.closedEarly;
    const explaining = run('tritonChatglm.explainSelection');
    await waitFor(() => stub.active >= 1, 'the slow explanation to stream');
    await run('tritonChatglm.dismissAllExplanations');
    await explaining;
    await waitFor(() => stub.closedEarly > closed, 'the stream to be closed');
    assert.deepEqual(live(), []);
    assert.equal(fake.rec.context.get('tritonChatglm.hasExplanations'), false);
  });

  it('Dismiss All offers Undo: the threads come back where they were, saying what they said', async () => {
    const tab = editorOn('/w/undo.py', [0, 1], [3, 4]);
    await run('tritonChatglm.explainSelection');
    const before = live().map((t) => ({ path: t.uri.path, line: t.range?.start.line, label: t.label, context: t.contextValue }));
    assert.equal(before.length, 2);
    assert.ok(before.every((t) => /: Explains \d+ chars\.$/.test(t.label ?? '')), JSON.stringify(before));
    // Ignored, the notification leaves them dismissed.
    await run('tritonChatglm.dismissAllExplanations');
    assert.deepEqual(live(), []);
    assert.deepEqual(fake.rec.messages.map((m) => [m.text, m.buttons]), [['Dismissed 2 explanations.', ['Undo']]]);
    // Again, with Undo picked: both back.
    await run('tritonChatglm.explainSelection');
    const again = live().map((t) => ({ path: t.uri.path, line: t.range?.start.line, label: t.label, context: t.contextValue }));
    fake.rec.answer = 'Undo';
    await run('tritonChatglm.dismissAllExplanations');
    const restored = live().map((t) => ({ path: t.uri.path, line: t.range?.start.line, label: t.label, context: t.contextValue }));
    assert.deepEqual(restored, again);
    assert.equal(fake.rec.context.get('tritonChatglm.hasExplanations'), true);
    // A restored thread still continues in the chat (its conversation is known).
    const messages = fake.rec.messages.length;
    await run('tritonChatglm.continueInChat', live()[0]);
    assert.ok(!fake.rec.messages.slice(messages).some((m) => /still being written/.test(m.text)));
    fake.rec.answer = undefined;
    await fake.vscode.window.tabGroups.close([tab]);
  });

  it('explain.target = chat: a new chat, one question per selection, each with its selection as the chip', async () => {
    fake.updateConfig({ 'tritonChatglm.explain.target': 'chat' });
    try {
      editorOn('/w/chat.py', [0, 1], [3, 4]);
      const sent = stub.requests.length;
      await run('tritonChatglm.explainSelection');
      const asked = stub.requests.slice(sent).filter((r) => r.path.endsWith('/generate_stream')).map((r) => String(r.body.prompt));
      assert.equal(asked.length, 2);
      // Each question carries its own selection's chip, never the other's (whether the current file goes too is
      // the chat's own rule, tritonChatglm.chat.currentFile).
      assert.match(asked[0]!, /File: chat\.py \(lines 1-2\)\n```python\ndef a\(\):\n {4}return 1\n```/);
      assert.doesNotMatch(asked[0]!, /lines 4-5/);
      assert.match(asked[1]!, /File: chat\.py \(lines 4-5\)\n```python\ndef b\(\):\n {4}return 2\n```/);
      assert.doesNotMatch(asked[1]!, /lines 1-2/);
      for (const p of asked) assert.match(p, /Explain what this python code from chat\.py does\./);
      // The second question is a follow-up in the same chat: the first exchange is its history.
      const histories = stub.requests.slice(sent).filter((r) => r.path.endsWith('/generate_stream')).map((r) => JSON.parse(String(r.body.history)) as unknown[]);
      assert.deepEqual(histories.map((h) => h.length), [0, 2]);
      assert.deepEqual(live().filter((t) => t.uri.path === '/w/chat.py'), [], 'no comment threads');
    } finally {
      fake.updateConfig({ 'tritonChatglm.explain.target': 'comments' });
    }
  });

  it('the status bar menu: the chat and Server Status first; Reload and Unload last, under the label Model', async () => {
    fake.rec.pick = undefined;
    await run('tritonChatglm.showActions');
    const labels = fake.rec.quickPickCalls[0]!.labels;
    assert.deepEqual(labels, [
      '$(comment-discussion) Open Chat', '$(pulse) Show Server Status',
      'Logs and settings', '$(output) Show Server Logs', '$(gear) Open Settings',
      'Model', '$(cloud-download) Reload Model', '$(cloud-upload) Unload Model',
    ]);
  });

  it('Unload asks while the model is loaded; Cancel keeps it, with the last load time when one is known', async () => {
    const unloads = () => stub.requests.filter((r) => r.path.includes('/unload')).length;
    const before = unloads();
    await run('tritonChatglm.unloadModel');
    assert.deepEqual(fake.rec.modals, [{ text: 'Unload ChatGLM3-6B?', detail: 'The model leaves the GPU. Loading it again takes minutes.', buttons: ['Unload Model', "Don't Ask Again"] }]);
    assert.equal(unloads(), before, 'cancelled: nothing sent');
    memento.set('tritonChatglm.lastLoadMs', 130_000);
    await run('tritonChatglm.unloadModel');
    assert.equal(fake.rec.modals[1]!.detail, 'The model leaves the GPU. Loading it again took 2 min 10 s last time.');
    assert.equal(unloads(), before);
  });

  it('"Don\'t Ask Again" goes ahead and turns the setting off: the next time nothing is asked', async () => {
    const unloads = () => stub.requests.filter((r) => r.path.includes('/unload')).length;
    const before = unloads();
    fake.rec.answer = "Don't Ask Again";
    await run('tritonChatglm.unloadModel');
    assert.deepEqual(fake.rec.updates.at(-1), { key: 'tritonChatglm.askBeforeUnload', value: false, target: 1 });
    await waitFor(() => fake.rec.statusBar[0]?.text.includes('not loaded'), 'the model unloaded');
    assert.equal(unloads(), before + 1);
    // Loaded again: the load is timed from "loading" to "ready", and remembered for the next question.
    memento.delete('tritonChatglm.lastLoadMs');
    await run('tritonChatglm.loadModel');
    await waitFor(() => fake.rec.statusBar[0]?.text.includes('ready'), 'the model ready again');
    const measured = memento.get('tritonChatglm.lastLoadMs');
    assert.ok(typeof measured === 'number' && measured > 0, `the load time remembered: ${String(measured)}`);
    fake.rec.modals.length = 0;
    fake.rec.answer = undefined;
    await run('tritonChatglm.unloadModel');
    assert.deepEqual(fake.rec.modals, []);
    await waitFor(() => unloads() === before + 2, 'unloaded without asking');
  });
});
