// The real extension code activated against a fake `vscode` module and a stub Triton (external mode): commands
// and views registered as package.json declares, the chat webview protocol end to end (validation, streaming,
// Stop closing the connection, persistence), Explain Selection fan-out into comment threads, and a clean dispose.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { activateExtension, waitFor, type ExtensionModule } from './support/activate';
import { createFakeVscode, installVscodeModule, Position, Selection, Uri } from './support/fakeVscode';
import { startStubTriton, type StubTriton } from './support/stubTriton';

const root = join(__dirname, '../../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { contributes: { commands: { command: string }[] } };

let stub: StubTriton;
let storage: string;
let fake: ReturnType<typeof createFakeVscode>;
let uninstall: () => void;
let ext: ExtensionModule;
const posted: Record<string, unknown>[] = [];
let receive: ((m: unknown) => void) | undefined;
let webviewHtml = '';
/** The chat view as resolved (its title shows the active conversation's). */
let chatView: { title?: string; visible?: boolean } = {};
let visibilityChanged: (() => void) | undefined;

type MessageViewLike = { id: string; role: string; content: string; status: string; finishReason?: string };
type StateLike = { activeId: string | null; messages: MessageViewLike[]; busy: boolean; previousQuestion?: string };
const lastState = () => [...posted].reverse().find((m) => m.type === 'state') as StateLike | undefined;
/** Waits for the answer started after `mark` (an index into `posted`) to end; returns the state after it. */
async function answered(mark: number): Promise<StateLike> {
  await waitFor(() => posted.slice(mark).find((m) => m.type === 'messageDone'), 'messageDone');
  return waitFor(() => { const st = lastState(); return st && !st.busy && st; }, 'a state that is not busy');
}
const streamRequests = () => stub.requests.filter((r) => r.path.endsWith('generate_stream'));

before(async () => {
  stub = await startStubTriton();
  storage = mkdtempSync(join(tmpdir(), 'tcg-ext-'));
  fake = createFakeVscode({
    'tritonChatglm.serverMode': 'external',
    'tritonChatglm.externalUrl': stub.url,
    'tritonChatglm.explainMaxConcurrency': 8,
    'tritonChatglm.explainMaxSelectionChars': 200,
    // An old configuration: still honoured, and the user is told what replaces it.
    'tritonChatglm.gpuIds': ['1'],
  });
  uninstall = installVscodeModule(fake.vscode);
  ext = await activateExtension(storage);
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

test('a deprecated setting the user set is reported once with its replacement, and nothing else is', () => {
  const deprecated = fake.rec.messages.filter((m) => /deprecated/.test(m.text));
  assert.deepEqual(deprecated.map((m) => [m.level, m.text, m.buttons]), [['info',
    'The setting tritonChatglm.gpuIds is deprecated and still used: list the GPUs in tritonChatglm.gpus instead (one model instance per GPU).',
    ['Open Settings']]]);
  assert.ok(!fake.rec.messages.some((m) => /Invalid ChatGLM settings/.test(m.text)), 'a deprecated value is valid');
});

test('the chat view: strict CSP, l10n and state on ready, malformed messages dropped', async () => {
  const provider = fake.rec.viewProviders.get('tritonChatglm.chat')!;
  const view = {
    title: 'Chat', // VS Code sets it from package.json's view name
    webview: {
      options: {} as { localResourceRoots?: Uri[]; enableScripts?: boolean },
      cspSource: 'vscode-resource:',
      html: '',
      asWebviewUri: (u: Uri) => u,
      onDidReceiveMessage: (l: (m: unknown) => void) => { receive = l; return { dispose() {} }; },
      postMessage: async (m: Record<string, unknown>) => { posted.push(m); return true; },
    },
    onDidDispose: () => ({ dispose() {} }),
    visible: true,
    onDidChangeVisibility: (l: () => void) => { visibilityChanged = l; return { dispose() {} }; },
  };
  provider.resolveWebviewView(view);
  chatView = view as typeof chatView;
  webviewHtml = view.webview.html;
  assert.match(webviewHtml, /default-src 'none'; script-src 'nonce-[A-Za-z0-9+/=]{16,}'; style-src vscode-resource:/);
  assert.doesNotMatch(webviewHtml, /unsafe-inline|unsafe-eval/);
  assert.deepEqual(view.webview.options.localResourceRoots?.map((u) => u.path).sort(), [join(root, 'dist'), join(root, 'media')]);

  receive!({ type: 'ready' });
  await waitFor(() => posted.find((m) => m.type === 'state'), 'a state message');
  const l10n = posted.find((m) => m.type === 'l10n') as { strings: Record<string, string> } | undefined;
  assert.equal(l10n?.strings.send, 'Send');
  // The keys the empty chat names, as package.json binds them.
  assert.deepEqual(posted.find((m) => m.type === 'keybindings'),
    { type: 'keybindings', explain: { key: 'ctrl+alt+e', mac: 'cmd+alt+e' }, edit: { key: 'ctrl+alt+u', mac: 'cmd+alt+u' } });

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

test('message actions: editing an earlier question or regenerating an earlier answer replaces the later turns', async () => {
  await fake.vscode.commands.executeCommand('tritonChatglm.newChat');
  let mark = posted.length;
  receive!({ type: 'send', text: 'first question' });
  await answered(mark);
  mark = posted.length;
  receive!({ type: 'send', text: 'second question' });
  const two = await answered(mark);
  assert.deepEqual(two.messages.map((m) => m.content), ['first question', 'Echo: first question', 'second question', 'Echo: second question']);
  assert.equal(chatView.title, 'first question', 'the view title shows the conversation');
  const [q1, a1] = two.messages;

  mark = posted.length;
  receive!({ type: 'editQuestion', messageId: q1!.id, text: 'first, edited' });
  const edited = await answered(mark);
  assert.deepEqual(edited.messages.map((m) => m.content), ['first, edited', 'Echo: first, edited']);
  assert.equal(edited.messages[0]!.id, q1!.id);
  assert.deepEqual([streamRequests().at(-1)!.body.prompt, streamRequests().at(-1)!.body.history], ['first, edited', '[]']);
  assert.equal(chatView.title, 'first, edited', 'an automatic title follows the edited first question');

  mark = posted.length;
  receive!({ type: 'send', text: 'and a follow-up' });
  await answered(mark);
  mark = posted.length;
  receive!({ type: 'regenerate', messageId: edited.messages[1]!.id });
  const regenerated = await answered(mark);
  assert.deepEqual(regenerated.messages.map((m) => m.content), ['first, edited', 'Echo: first, edited']);
  assert.notEqual(regenerated.messages[1]!.id, edited.messages[1]!.id, 'a new answer');

  // an id that is not in the conversation (or of the wrong kind) changes nothing and says why
  mark = posted.length;
  receive!({ type: 'regenerate', messageId: a1!.id });
  receive!({ type: 'editQuestion', messageId: regenerated.messages[1]!.id, text: 'not a question' });
  const errors = await waitFor(() => { const e = posted.slice(mark).filter((m) => m.type === 'error'); return e.length === 2 && e; }, 'two errors');
  assert.deepEqual(errors.map((e) => e.message), ['There is no question to answer again.', 'There is no question to answer again.']);
  assert.equal(lastState()!.messages.length, 2);
});

test('Continue appends to an answer cut at the length limit; Copy copies the stored Markdown of a message', async () => {
  let mark = posted.length;
  receive!({ type: 'send', text: 'a long answer, please' });
  const cut = await answered(mark);
  const answer = cut.messages.at(-1)!;
  assert.deepEqual([answer.finishReason, answer.content], ['length', 'Echo: a long answer, please']);
  const requestsBefore = streamRequests().length;
  mark = posted.length;
  receive!({ type: 'continueAnswer', messageId: answer.id });
  const continued = await answered(mark);
  const request = streamRequests()[requestsBefore]!;
  assert.match(String(request.body.prompt), /^Continue your last answer/);
  assert.deepEqual(JSON.parse(String(request.body.history)).slice(-2), [{ role: 'user', content: 'a long answer, please' }, { role: 'assistant', content: 'Echo: a long answer, please' }]);
  const after = continued.messages.at(-1)!;
  assert.equal(continued.messages.length, cut.messages.length, 'the same answer, not a new one');
  assert.equal(after.id, answer.id);
  assert.equal(after.content, `Echo: a long answer, please${'Echo: '}${String(request.body.prompt)}`);
  assert.equal(after.finishReason, 'stop');
  // Continue on an answer that did not stop at the limit is refused
  mark = posted.length;
  receive!({ type: 'continueAnswer', messageId: answer.id });
  const refusal = await waitFor(() => posted.slice(mark).find((m) => m.type === 'error'), 'an error');
  assert.match(String(refusal.message), /Only the last answer, cut at the maximum length, can be continued/);

  receive!({ type: 'copyMessage', messageId: continued.messages[0]!.id });
  await waitFor(() => (fake.vscode.env.clipboard as { text: string }).text === 'first, edited', 'the question on the clipboard');
});

test('the panel reports its focus: the context key of its keybindings follows', async () => {
  receive!({ type: 'focusChanged', focused: true });
  await waitFor(() => fake.rec.context.get('tritonChatglm.chatFocus') === true, 'chatFocus true');
  receive!({ type: 'focusChanged', focused: false });
  await waitFor(() => fake.rec.context.get('tritonChatglm.chatFocus') === false, 'chatFocus false');
  // hidden while focused: the panel may never report its blur, the view does
  receive!({ type: 'focusChanged', focused: true });
  await waitFor(() => fake.rec.context.get('tritonChatglm.chatFocus') === true, 'chatFocus true again');
  chatView.visible = false;
  visibilityChanged!();
  await waitFor(() => fake.rec.context.get('tritonChatglm.chatFocus') === false, 'chatFocus false once hidden');
  chatView.visible = true;
  const keys = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { contributes: { keybindings: { command: string; when?: string }[] } }).contributes.keybindings;
  // only in the panel: a stale context key must not take Ctrl+L (Expand Line Selection) from an editor or a terminal
  assert.equal(keys.find((k) => k.command === 'tritonChatglm.newChat')?.when, 'tritonChatglm.chatFocus && !textInputFocus && !terminalFocus');
});

test('New Chat creates nothing until its first question; ArrowUp there gets the last question asked', async () => {
  const file = join(storage, 'conversations.json');
  const count = () => (JSON.parse(readFileSync(file, 'utf8')) as { conversations: unknown[] }).conversations.length;
  const before = count();
  const mark = posted.length;
  await fake.vscode.commands.executeCommand('tritonChatglm.newChat');
  await fake.vscode.commands.executeCommand('tritonChatglm.newChat');
  const state = await waitFor(() => posted.slice(mark).find((m) => m.type === 'state') as StateLike | undefined, 'a state');
  assert.deepEqual([state.activeId, state.messages.length], [null, 0]);
  assert.equal(state.previousQuestion, 'a long answer, please');
  assert.ok(posted.slice(mark).some((m) => m.type === 'focusInput'), 'the input gets the focus');
  assert.equal(chatView.title, 'Chat', 'the view\'s own name for a new chat');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(count(), before, 'no empty conversation is saved');
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
  // Three threads: each brief, one line (its title, with the answer's first sentence) and no comment; no
  // notification for the run or for the trimmed selection.
  assert.deepEqual(threads.map((t) => [t.collapsibleState, t.contextValue]), Array(3).fill([1, 'tritonChatglm.explanation.brief']));
  for (const t of threads) assert.match(t.label ?? '', /^Explanation of geometry\.py:\d(–\d)?: Explains \d+ chars\.$/);
  await new Promise((r) => setTimeout(r, 1_600)); // past the moment a comment would be attached
  assert.deepEqual(threads.map((t) => t.comments.length), [0, 0, 0]);
  assert.deepEqual(fake.rec.progress.filter((p) => /Explaining/.test(p.title)), []);
  assert.deepEqual(fake.rec.messages.filter((m) => /selections were longer/.test(m.text)), []);
  // Show Full Explanation (the thread's toolbar): the whole answer in its comment; and back.
  for (const t of threads) await fake.vscode.commands.executeCommand('tritonChatglm.showFullExplanation', t);
  assert.deepEqual(threads.map((t) => [t.comments.length, t.contextValue]), Array(3).fill([1, 'tritonChatglm.explanation.full']));
  for (const t of threads) assert.match(t.comments[0]!.body.value, /^Explains \d+ chars\./);
  for (const t of threads) assert.equal(t.label?.includes(': Explains'), false, 'full: the title is the place only');
  assert.equal(threads[2]!.comments[0]!.label, 'The selection was trimmed.');
  for (const t of threads) assert.equal(t.comments[0]!.body.isTrusted, false, 'model output is untrusted markdown');
  await fake.vscode.commands.executeCommand('tritonChatglm.showExplanationBrief', threads[0]);
  assert.equal(threads[0]!.comments.length, 0);
  assert.equal(threads[0]!.contextValue, 'tritonChatglm.explanation.brief');
});

test('chat history: a quick pick grouped by day with Explanations apart; rename, delete with Undo, export as Markdown, open', async () => {
  await fake.vscode.commands.executeCommand('tritonChatglm.showChatHistory');
  let pick = fake.rec.quickPicks.at(-1)!;
  assert.equal(pick.visible, true);
  const separators = () => pick.items.filter((i) => i.kind === -1).map((i) => i.label);
  const labels = () => pick.items.filter((i) => i.kind !== -1).map((i) => i.label);
  assert.deepEqual(separators(), ['Today', 'Explanations']);
  const explanations = pick.items.slice(pick.items.findIndex((i) => i.label === 'Explanations') + 1).map((i) => i.label);
  assert.deepEqual(explanations.sort(), ['Explain geometry.py:1–2', 'Explain geometry.py:4–5', 'Explain geometry.py:7']);
  assert.ok(labels().includes('first, edited'));
  assert.ok(!labels().includes('New conversation'), 'no empty conversation is listed');
  assert.equal(pick.items.find((i) => i.label === 'first, edited')!.description, 'now');
  assert.deepEqual(pick.items.find((i) => i.label === 'first, edited')!.buttons!.map((b) => b.tooltip), ['Rename', 'Export as Markdown', 'Delete']);

  // Escape in the rename box cancels: the title stays, the history closes.
  fake.rec.inputAnswer = undefined;
  await pick.triggerButton('first, edited', 'Rename');
  await waitFor(() => pick.disposed, 'Escape in the rename box to close the history');
  assert.ok(labels().includes('first, edited'));
  await fake.vscode.commands.executeCommand('tritonChatglm.showChatHistory');
  pick = fake.rec.quickPicks.at(-1)!;

  fake.rec.inputAnswer = 'Renamed chat';
  const closedBefore = fake.rec.quickInputClosed;
  await pick.triggerButton('first, edited', 'Rename');
  await waitFor(() => pick.visible, 'the list to come back after the rename box');
  assert.ok(labels().includes('Renamed chat') && !labels().includes('first, edited'));
  // Back in the box's place: had the quick input closed in between, VS Code would give the editor the focus and the
  // list would close again as it came back.
  assert.equal(fake.rec.quickInputClosed, closedBefore, 'the quick input stayed open from the list to the box and back');
  assert.equal(pick.disposed, false);
  // The search covers the messages too: a chat whose answer holds the words shows them as its detail.
  pick.type('echo: first');
  assert.equal(pick.items.find((i) => i.label === 'Renamed chat')!.detail, 'Echo: first, edited', 'the answer that holds the words');
  assert.ok(pick.items.filter((i) => i.kind !== -1 && i.label !== 'Renamed chat').every((i) => i.detail === undefined), 'no detail where no message holds it');
  pick.type('renamed');
  assert.equal(pick.items.find((i) => i.label === 'Renamed chat')!.detail, undefined, 'the title matches: no detail needed');
  pick.type('');
  assert.ok(pick.items.every((i) => i.detail === undefined));

  fake.rec.answer = 'Undo';
  await pick.triggerButton('Renamed chat', 'Delete');
  assert.ok(fake.rec.messages.some((m) => m.text === 'Deleted "Renamed chat".' && m.buttons.join() === 'Undo'));
  await waitFor(() => labels().includes('Renamed chat'), 'Undo to bring it back');
  fake.rec.answer = undefined;
  await pick.triggerButton('Explain geometry.py:7', 'Delete');
  assert.ok(!labels().includes('Explain geometry.py:7'));
  const saved = readFileSync(join(storage, 'conversations.json'), 'utf8');
  assert.ok(saved.includes('Renamed chat') && !saved.includes('Explain geometry.py:7'));
  assert.match(saved, /"kind": "explain"/);

  fake.rec.saveAnswer = Uri.file('/exports/renamed.md');
  await pick.triggerButton('Renamed chat', 'Export as Markdown');
  const markdown = fake.rec.written.get('/exports/renamed.md') ?? '';
  assert.match(markdown, /^# Renamed chat\n\n> Exported from the ChatGLM chat\. Raw HTML in the messages is shown as text[^\n]*\n\n## You\n\nfirst, edited\n\n## ChatGLM3-6B\n\nEcho: first, edited\n/);
  assert.ok(fake.rec.messages.some((m) => m.text === 'Exported the chat to /exports/renamed.md.'));

  await fake.vscode.commands.executeCommand('tritonChatglm.showChatHistory');
  const again = fake.rec.quickPicks.at(-1)!;
  const mark = posted.length;
  again.accept('Explain geometry.py:4–5');
  const shown = await waitFor(() => posted.slice(mark).find((m) => m.type === 'state') as StateLike | undefined, 'the picked conversation');
  assert.match(shown.messages[0]!.content, /python code from geometry\.py/);
  assert.equal(chatView.title, 'Explain geometry.py:4–5');
  assert.equal(again.disposed, true);
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
  // No metrics address for this external server: nothing live, and neither the scheduler's nor the GPU cards, nor
  // per-instance rows, nor a team's replicas (this stub is a plain Triton, not a team proxy).
  assert.deepEqual(update.hidden, ['scheduler', 'gpu', 'instances', 'replicas']);
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
  await fake.vscode.commands.executeCommand('tritonChatglm.newChat');
  receive!({ type: 'send', text: 'Temperature check' });
  await waitFor(() => posted.find((x) => x.type === 'messageDone'), 'messageDone');
  const last = stub.requests.filter((r) => r.path.endsWith('generate_stream')).at(-1)!;
  assert.equal(last.body.temperature, 0.3);
  assert.equal(last.body.history, '[]', 'a new chat starts without history');
});

// (In external mode the health poll's state change posts too; the settings listener is what does it while stopped.)
test('another model chosen: the chat panel is told its name; back to the default, the default\'s', async () => {
  const named = (name: string, from: number) => posted.slice(from).find((m) => m.type === 'state' && m.modelName === name);
  let mark = posted.length;
  fake.updateConfig({ 'tritonChatglm.model': 'glm-4-9b-chat' });
  await waitFor(() => named('GLM-4-9B-Chat', mark), 'a state naming GLM-4-9B-Chat');
  mark = posted.length;
  fake.updateConfig({ 'tritonChatglm.model': undefined });
  await waitFor(() => named('ChatGLM3-6B', mark), 'a state naming ChatGLM3-6B again');
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
