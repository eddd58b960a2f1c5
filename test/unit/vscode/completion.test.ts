// Inline code completion through the real extension against the fake `vscode` module and a stub Triton that
// honours the `infill` contract (test/unit/vscode/support/stubTriton.ts): the status bar's toggle says why it is
// off for a model without infilling and switches the model; ghost text for a Python file; a keystroke (the editor
// cancelling the previous call) closes the previous stream; typing through reuses the suggestion; nothing is sent
// when off, for secret or excluded files, or from an untrusted workspace.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { activateExtension, waitFor, type ExtensionModule } from './support/activate';
import { CancellationTokenSource, createFakeVscode, fakeDocument, installVscodeModule, Position, Uri, type InlineCompletionItem } from './support/fakeVscode';
import { startStubTriton, type StubTriton } from './support/stubTriton';

let stub: StubTriton;
let storage: string;
let fake: ReturnType<typeof createFakeVscode>;
let uninstall: () => void;
let ext: ExtensionModule;

const infills = () => stub.requests.filter((r) => r.path.endsWith('/generate_stream') && typeof r.body.infill === 'string');
const toggleItem = () => fake.rec.statusBar.find((i) => i.text.includes('completions'))!;
const provider = () => fake.rec.inlineProviders[0]!.provider;

/** Asks the provider at the `|` of `text` in `file`, as the editor does after a pause in typing. */
function ask(file: string, text: string, token = new CancellationTokenSource().token) {
  const offset = text.indexOf('|');
  const doc = fakeDocument(Uri.file(file), text.replace('|', ''), file.endsWith('.py') ? 'python' : 'plaintext');
  const pos = doc.positionAt(offset);
  return provider().provideInlineCompletionItems(doc, new Position(pos.line, pos.character), { triggerKind: 1 }, token) as Promise<InlineCompletionItem[] | undefined>;
}

describe('code completion (host side)', () => {
  before(async () => {
    stub = await startStubTriton();
    storage = mkdtempSync(join(tmpdir(), 'tcg-complete-'));
    fake = createFakeVscode({ 'tritonChatglm.serverMode': 'external', 'tritonChatglm.externalUrl': stub.url, 'tritonChatglm.completions.debounceMs': 0 });
    uninstall = installVscodeModule(fake.vscode);
    ext = await activateExtension(storage);
    await waitFor(() => fake.rec.statusBar[0]?.text.includes('ready'), 'the external server to be ready');
  });

  after(async () => {
    await ext?.deactivate();
    uninstall?.();
    await stub?.close();
    if (storage) rmSync(storage, { recursive: true, force: true });
  });

  it('with ChatGLM3 (no infilling) completions are off, say why, and the menu switches to CodeGeeX4', async () => {
    assert.equal(fake.rec.inlineProviders.length, 1, 'one provider for every file');
    assert.deepEqual(fake.rec.inlineProviders[0]!.selector, { pattern: '**' });
    assert.match(toggleItem().text, /completions off/);
    assert.match(String((toggleItem().tooltip as { value: string }).value), /ChatGLM3-6B cannot fill in the middle.*CodeGeeX4-ALL-9B/);
    assert.equal(await ask('/w/a.py', 'x = |\n'), undefined);
    assert.equal(infills().length, 0, 'nothing sent');
    // The external server serves CodeGeeX4 too (a managed one restarts for the new setting).
    stub.model = 'codegeex4-all-9b';
    fake.rec.pick = 'Switch to CodeGeeX4-ALL-9B';
    await fake.vscode.commands.executeCommand('tritonChatglm.completionsMenu');
    assert.deepEqual(fake.rec.updates.at(-1), { key: 'tritonChatglm.model', value: 'codegeex4-all-9b', target: 1 });
    assert.match(toggleItem().text, /completions on/);
  });

  it('completions go to the served model: CodeGeeX4\'s entry after the switch', async () => {
    assert.ok(await ask('/w/src/m.py', 'm = |\n'));
    assert.equal(infills().at(-1)!.path, '/v2/models/codegeex4-all-9b/generate_stream');
  });

  it('ghost text: the infill request (prompt "", LINE mode, 64 tokens), its first line shown', async () => {
    const items = await ask('/w/src/calc.py', 'def total(xs):\n    return |\n');
    assert.equal(items?.length, 1);
    assert.equal(items[0]!.insertText, 'compute_total()');
    const sent = infills().at(-1)!.body;
    assert.equal(sent.prompt, '');
    assert.equal(sent.max_new_tokens, 64);
    assert.deepEqual(JSON.parse(String(sent.infill)), {
      prefix: 'def total(xs):\n    return ', suffix: '\n', path: 'src/calc.py', language: 'Python', mode: 'line', references: [],
    });
  });

  it('typing through the suggestion reuses it: no new request', async () => {
    const before = infills().length;
    const items = await ask('/w/src/calc.py', 'def total(xs):\n    return comp|\n');
    assert.equal(items?.[0]?.insertText, 'ute_total()');
    assert.equal(infills().length, before);
  });

  it('a keystroke cancels the request before it on the server: its stream is closed, not left running', async () => {
    const closed = stub.closedEarly;
    const first = new CancellationTokenSource();
    const pending = ask('/w/slow.py', 'slow = |\n', first.token);
    await waitFor(() => stub.active > 0, 'the slow completion to stream');
    first.cancel(); // VS Code cancels the previous call when the user types on
    const second = ask('/w/slow.py', 'slow = x|\n');
    assert.equal(await pending, undefined);
    await waitFor(() => stub.closedEarly > closed, 'the first stream to be closed');
    // The second is cancelled by turning completions off (the toggle): that closes its stream too.
    await waitFor(() => stub.active > 0, 'the second completion to stream');
    await fake.vscode.commands.executeCommand('tritonChatglm.toggleCompletions');
    assert.equal(await second, undefined);
    await waitFor(() => stub.closedEarly > closed + 1, 'the second stream to be closed');
    assert.match(toggleItem().text, /completions off/);
  });

  it('nothing is sent while off, for .env-like or excluded files, or from an untrusted workspace', async () => {
    const before = infills().length;
    assert.equal(await ask('/w/b.py', 'y = |\n'), undefined, 'turned off');
    await fake.vscode.commands.executeCommand('tritonChatglm.toggleCompletions');
    assert.match(toggleItem().text, /completions on/);
    assert.equal(await ask('/w/.env', 'TOKEN=|\n'), undefined);
    fake.updateConfig({ 'tritonChatglm.completions.exclude': ['**/secret/**'] });
    assert.equal(await ask('/w/secret/c.py', 'z = |\n'), undefined);
    fake.updateConfig({ 'tritonChatglm.completions.languages': { '*': true, python: false } });
    assert.equal(await ask('/w/d.py', 'z = |\n'), undefined);
    fake.updateConfig({ 'tritonChatglm.completions.languages': { '*': true } });
    fake.rec.trusted = false;
    assert.equal(await ask('/w/e.py', 'z = |\n'), undefined);
    assert.equal(infills().length, before, 'no request for any of them');
    fake.grantTrust();
    assert.equal((await ask('/w/e.py', 'z = |\n'))?.[0]?.insertText, 'compute_total()');
    assert.equal(infills().length, before + 1);
  });

  it('snoozing turns completions off for the minutes given (nothing sent), and the menu resumes them', async () => {
    const before = infills().length;
    await fake.vscode.commands.executeCommand('tritonChatglm.snoozeCompletions', 15);
    assert.match(toggleItem().text, /completions off/);
    assert.match(String((toggleItem().tooltip as { value: string }).value), /snoozed until/);
    assert.equal(await ask('/w/f.py', 'snoozed = |\n'), undefined);
    assert.equal(infills().length, before);
    fake.rec.pick = 'Resume code completions now';
    await fake.vscode.commands.executeCommand('tritonChatglm.completionsMenu');
    assert.match(toggleItem().text, /completions on/);
    assert.equal((await ask('/w/f.py', 'snoozed = |\n'))?.[0]?.insertText, 'compute_total()');
  });
});
