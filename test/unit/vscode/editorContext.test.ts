// Editor context in chat, through the real extension against the fake `vscode` module and a stub Triton, in an
// untrusted workspace first: chips posted to the panel, Add Selection / Add File (quick pick with search.exclude,
// binary and size refusals), the active file never attached by default until trusted or switched on, the prompt
// the server receives in the documented layout, the budget question (cancel puts the question back; drop the
// largest sends without it), transcript chips without content, and opening an attachment; then the current file
// suggested (the default) or never offered, two selections of one file sent without the file, #problems with /fix
// (the model gets the template, the transcript "/fix"), /new, and the meter's figures.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { formatUserMessage } from '../../../src/core/chat/attachmentsLayout';
import type { Attachment } from '../../../src/core/chat/attachments';
import { activateExtension, resolveChatView, waitFor, type ExtensionModule } from './support/activate';
import { createFakeVscode, fakeDocument, installVscodeModule, Position, Selection, Uri } from './support/fakeVscode';
import { startStubTriton, type StubTriton } from './support/stubTriton';

interface Chip { id: string; kind: string; path: string; fullPath: string; startLine?: number; endLine?: number; tokens?: number }
interface ChipsMessage { type: 'attachments'; items: Chip[]; activeFile: null | { path: string; fullPath: string; enabled: boolean; untrusted: boolean; suggested?: boolean; tokens?: number; refusal?: string } }

const GEOMETRY = ['import math', '', 'def circle_area(radius):', '    return math.pi * radius ** 2', '', 'def mean(values):', '    return sum(values) / len(values)', ''].join('\n');

let stub: StubTriton;
let storage: string;
let workspace: string;
let fake: ReturnType<typeof createFakeVscode>;
let uninstall: () => void;
let ext: ExtensionModule;
let receive: (m: unknown) => void;
const posted: Record<string, unknown>[] = [];

const lastChips = () => [...posted].reverse().find((m) => m.type === 'attachments') as ChipsMessage | undefined;
const streamRequests = () => stub.requests.filter((r) => r.path.endsWith('generate_stream'));
const command = (id: string, ...args: unknown[]) => fake.vscode.commands.executeCommand(`tritonChatglm.${id}`, ...args);
const geometryDoc = () => fakeDocument(Uri.file(join(workspace, 'src/geometry.py')), GEOMETRY, 'python');
const attachment = (over: Partial<Attachment>): Attachment => ({
  id: 'x', kind: 'selection', path: 'src/geometry.py', uri: Uri.file(join(workspace, 'src/geometry.py')).toString(), languageId: 'python', content: '', ...over,
});

async function ask(text: string): Promise<Record<string, unknown>> {
  const before = streamRequests().length;
  posted.length = 0;
  receive({ type: 'send', text });
  await waitFor(() => posted.find((m) => m.type === 'messageDone'), `the answer to "${text}"`);
  const sent = streamRequests().slice(before);
  assert.equal(sent.length, 1);
  return sent[0]!.body;
}

describe('editor context in chat (host side)', () => {
  before(async () => {
    stub = await startStubTriton();
    storage = mkdtempSync(join(tmpdir(), 'tcg-context-'));
    workspace = mkdtempSync(join(tmpdir(), 'tcg-workspace-'));
    mkdirSync(join(workspace, 'src'));
    writeFileSync(join(workspace, 'src/geometry.py'), GEOMETRY);
    writeFileSync(join(workspace, 'src/util.py'), 'def twice(x):\n    return 2 * x\n');
    writeFileSync(join(workspace, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48]));
    writeFileSync(join(workspace, 'big.log'), 'log line\n'.repeat(40_000));
    // About 8,000 estimated tokens: over the model's input budget of 6,144 on its own.
    writeFileSync(join(workspace, 'src/table.py'), `TABLE = [\n${'    (1, 2, 3, 4),\n'.repeat(1_200)}]\n`);
    fake = createFakeVscode({
      'tritonChatglm.serverMode': 'external',
      'tritonChatglm.externalUrl': stub.url,
      // These tests are about the current file attached by itself (trust, switching it off): `always`. The default
      // (`suggest`) has its own tests below.
      'tritonChatglm.chat.currentFile': 'always',
      'search.exclude': { '**/node_modules': true, '**/*.{map,min.js}': true, '**/dist': false, '**/*.gen.py': { when: '$(basename).spec' } },
    });
    fake.rec.trusted = false;
    fake.vscode.workspace.workspaceFolders[0] = { uri: Uri.file(workspace), name: 'w', index: 0 };
    uninstall = installVscodeModule(fake.vscode);
    ext = await activateExtension(storage);
    receive = resolveChatView(fake, posted).receive;
    await waitFor(() => fake.rec.context.get('tritonChatglm.modelState') === 'ready', 'the model state adopted from the stub');
  });

  after(async () => {
    await ext?.deactivate();
    uninstall?.();
    await stub?.close();
    for (const d of [storage, workspace]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('the panel gets the chips on ready; no editor: no active-file chip', async () => {
    receive({ type: 'ready' });
    const chips = await waitFor(lastChips, 'an attachments message');
    assert.deepEqual(chips, { type: 'attachments', items: [], activeFile: null });
  });

  it('untrusted: the active file is shown but off; Add Selection attaches each selection with its lines', async () => {
    fake.setActiveEditor({
      document: geometryDoc(),
      selections: [new Selection(new Position(2, 0), new Position(4, 0)), new Selection(new Position(6, 4), new Position(6, 4))],
    });
    assert.deepEqual(lastChips()?.activeFile, { path: 'src/geometry.py', fullPath: join(workspace, 'src/geometry.py'), enabled: false, untrusted: true, tokens: lastChips()!.activeFile!.tokens });
    posted.length = 0;
    await command('addSelectionToChat');
    const chips = lastChips()!;
    assert.equal(chips.items.length, 1, 'the empty selection (a cursor) is not attached');
    assert.deepEqual({ ...chips.items[0], id: 'id', tokens: 0 }, { id: 'id', kind: 'selection', path: 'src/geometry.py', fullPath: join(workspace, 'src/geometry.py'), startLine: 3, endLine: 4, tokens: 0 });
    assert.ok(chips.items[0]!.tokens! > 0);
    assert.ok(posted.some((m) => m.type === 'focusInput'), 'the chat input is focused to ask about it');
  });

  it('the question goes out with the selection in the documented layout (and not the untrusted active file); the chip goes', async () => {
    const body = await ask('What does circle_area return?');
    assert.equal(body.prompt, formatUserMessage('What does circle_area return?', [
      attachment({ lines: { start: 3, end: 4 }, content: 'def circle_area(radius):\n    return math.pi * radius ** 2\n' }),
    ]));
    assert.match(String(body.prompt), /^File: src\/geometry\.py \(lines 3-4\)\n```python\ndef circle_area/);
    assert.deepEqual(lastChips()!.items, []);
    const state = [...posted].reverse().find((m) => m.type === 'state') as { messages: { role: string; attachments?: Chip[] }[] };
    const question = state.messages.find((m) => m.role === 'user')!;
    assert.equal(question.attachments?.length, 1);
    assert.ok(!('content' in question.attachments![0]!), 'the transcript chip carries no content');
    assert.equal(question.attachments![0]!.tokens, undefined);
    // A transcript chip opens the code at its lines.
    receive({ type: 'openAttachment', id: question.attachments![0]!.id });
    const opened = await waitFor(() => fake.rec.opened.at(-1), 'the selection opened');
    assert.equal(opened.uri, Uri.file(join(workspace, 'src/geometry.py')).toString());
    assert.deepEqual([opened.selection?.start.line, opened.selection?.end.line], [2, 3]);
  });

  it('switched on by the user, the active file goes first, whole, even in an untrusted workspace', async () => {
    receive({ type: 'toggleActiveFile', enabled: true });
    await waitFor(() => lastChips()?.activeFile?.enabled === true, 'the chip switched on');
    const body = await ask('Summarize the file.');
    assert.equal(body.prompt, formatUserMessage('Summarize the file.', [attachment({ kind: 'file', content: GEOMETRY })]));
    assert.equal(lastChips()!.activeFile?.enabled, true, 'the active-file chip stays for the next question');
    receive({ type: 'toggleActiveFile', enabled: false });
    await waitFor(() => lastChips()?.activeFile?.enabled === false, 'the chip switched off');
  });

  it('granting trust is reflected in the chip (the user\'s own choice still holds)', async () => {
    fake.grantTrust();
    await waitFor(() => lastChips()?.activeFile?.untrusted === false, 'a trusted chip');
    assert.equal(lastChips()!.activeFile!.enabled, false);
  });

  it('Add File…: a quick pick of workspace files with search.exclude; binary and oversized files are refused', async () => {
    fake.rec.files = ['src/util.py', 'src/geometry.py', 'logo.png'].map((f) => join(workspace, f));
    fake.rec.pick = 'util.py';
    posted.length = 0;
    receive({ type: 'addFile' });
    await waitFor(() => lastChips()?.items.some((c) => c.path === 'src/util.py'), 'util.py attached');
    const find = fake.rec.findFiles.at(-1)!;
    assert.equal(find.include, '**/*');
    assert.equal(find.exclude, '{**/node_modules,**/*.map,**/*.min.js}', 'search.exclude: on entries, braces expanded, sibling clauses left out');
    assert.deepEqual(fake.rec.quickPickCalls.at(-1), { labels: ['logo.png', 'geometry.py', 'util.py'], descriptions: ['', 'src', 'src'] });
    const chip = lastChips()!.items.find((c) => c.path === 'src/util.py')!;
    assert.deepEqual([chip.kind, chip.startLine], ['file', undefined]);

    const warnings = fake.rec.messages.length;
    await command('addFileToChat', Uri.file(join(workspace, 'logo.png')));
    await command('addFileToChat', Uri.file(join(workspace, 'big.log')));
    assert.deepEqual(fake.rec.messages.slice(warnings).map((m) => m.text), [
      'logo.png is a binary file and cannot be attached.',
      'big.log is too large to attach (352 KB; the limit is 256 KB).',
    ]);
    assert.deepEqual(lastChips()!.items.map((c) => c.path), ['src/util.py']);
    // From the Explorer with several selected: folders are skipped, what cannot be read is said.
    const before = fake.rec.messages.length;
    await command('addFileToChat', Uri.file(join(workspace, 'src')), [Uri.file(join(workspace, 'src')), Uri.file(join(workspace, 'gone.py'))]);
    assert.deepEqual(fake.rec.messages.slice(before).map((m) => m.text), ['gone.py cannot be read, so it was not attached.']);
    assert.deepEqual(lastChips()!.items.map((c) => c.path), ['src/util.py']);
  });

  it('a chip opens its code; × removes it', async () => {
    const id = lastChips()!.items[0]!.id;
    receive({ type: 'openAttachment', id });
    await waitFor(() => fake.rec.opened.length > 0, 'the file opened');
    assert.equal(fake.rec.opened.at(-1)!.uri, Uri.file(join(workspace, 'src/util.py')).toString());
    receive({ type: 'removeAttachment', id });
    await waitFor(() => lastChips()?.items.length === 0, 'the chip removed');
  });

  it('over the input budget: the user is asked first; Cancel sends nothing and puts the question back', async () => {
    await command('addFileToChat', Uri.file(join(workspace, 'src/table.py')));
    fake.setActiveEditor({ document: geometryDoc(), selections: [new Selection(new Position(5, 0), new Position(7, 0))] });
    await command('addSelectionToChat');
    assert.deepEqual(lastChips()!.items.map((c) => c.path), ['src/table.py', 'src/geometry.py']);
    const requests = streamRequests().length;
    fake.rec.answer = undefined; // the modal's Cancel
    posted.length = 0;
    receive({ type: 'send', text: 'Which rows repeat?' });
    const draft = await waitFor(() => posted.find((m) => m.type === 'draft'), 'the question back in the input');
    assert.equal(draft.text, 'Which rows repeat?');
    const modal = fake.rec.modals.at(-1)!;
    assert.match(modal.text, /^The question and its attachments come to about [\d,]+ tokens, more than the 6,144 the model accepts\. Nothing has been sent\.$/);
    assert.deepEqual(modal.buttons, ['Remove table.py and Send']);
    assert.match(modal.detail ?? '', /^table\.py: about [\d,]+ tokens\ngeometry\.py:6-7: about [\d,]+ tokens$/);
    assert.equal(streamRequests().length, requests, 'nothing was sent');
    posted.length = 0;
    receive({ type: 'ready' });
    assert.equal((await waitFor(lastChips, 'the chips')).items.length, 2, 'the chips are still there');
  });

  it('over the input budget: "Remove the largest and Send" sends the rest and drops that chip', async () => {
    fake.rec.answer = 'Remove table.py and Send';
    const body = await ask('Which rows repeat?');
    fake.rec.answer = undefined;
    assert.equal(body.prompt, formatUserMessage('Which rows repeat?', [
      attachment({ lines: { start: 6, end: 7 }, content: 'def mean(values):\n    return sum(values) / len(values)\n' }),
    ]));
    assert.deepEqual(lastChips()!.items, [], 'the dropped chip and the sent one are gone');
  });

  it('Explain\'s Continue in Chat opens the explanation and attaches the explained code, like Add Selection', async () => {
    fake.setActiveEditor({ document: geometryDoc(), selections: [new Selection(new Position(2, 0), new Position(3, 33))] });
    await command('explainSelection');
    const thread = fake.rec.threads.at(-1)!;
    posted.length = 0;
    await command('continueInChat', thread);
    const state = [...posted].reverse().find((m) => m.type === 'state') as { messages: { content: string }[] };
    assert.match(state.messages[0]!.content, /Explain what this python code from geometry\.py does/, 'the explanation\'s conversation is shown');
    assert.deepEqual(lastChips()!.items.map((c) => [c.path, c.startLine, c.endLine]), [['src/geometry.py', 3, 4]]);
    assert.ok(posted.some((m) => m.type === 'focusInput'));
    receive({ type: 'removeAttachment', id: lastChips()!.items[0]!.id });
  });

  it('two selections of the current file send the two selections, never the whole file as well', async () => {
    fake.setActiveEditor({ document: geometryDoc(), selections: [new Selection(new Position(2, 0), new Position(4, 0)), new Selection(new Position(5, 0), new Position(7, 0))] });
    await command('addSelectionToChat');
    assert.equal(lastChips()!.activeFile, null, 'the selections replace the current-file chip');
    const body = await ask('Compare them.');
    assert.equal(body.prompt, formatUserMessage('Compare them.', [
      attachment({ lines: { start: 3, end: 4 }, content: 'def circle_area(radius):\n    return math.pi * radius ** 2\n' }),
      attachment({ lines: { start: 6, end: 7 }, content: 'def mean(values):\n    return sum(values) / len(values)\n' }),
    ]));
    assert.notEqual(lastChips()!.activeFile, null, 'the current-file chip is back for the next question');
  });

  it('suggest (the default): the current file is offered, not sent; one click attaches it as a chip, once', async () => {
    fake.updateConfig({ 'tritonChatglm.chat.currentFile': 'suggest' });
    await waitFor(() => lastChips()?.activeFile?.suggested === true, 'the suggested chip');
    assert.equal(lastChips()!.activeFile!.enabled, false);
    const general = await ask('How do I read a CSV file?');
    assert.equal(general.prompt, 'How do I read a CSV file?', 'a general question goes without the file');
    receive({ type: 'toggleActiveFile', enabled: true });
    await waitFor(() => lastChips()?.items.length === 1 && lastChips()!.activeFile === null, 'the file attached as a chip');
    assert.deepEqual(lastChips()!.items.map((c) => [c.kind, c.path]), [['file', 'src/geometry.py']]);
    const body = await ask('Summarize it.');
    assert.equal(body.prompt, formatUserMessage('Summarize it.', [attachment({ kind: 'file', content: GEOMETRY })]));
    assert.equal(lastChips()!.activeFile?.suggested, true, 'offered again for the next question');
    fake.updateConfig({ 'tritonChatglm.chat.currentFile': 'never' });
    await waitFor(() => lastChips()?.activeFile === null, 'no current-file chip with never');
  });

  it('#problems and /fix: the diagnostics with their lines; the model receives the template, the transcript "/fix"', async () => {
    const geometry = Uri.file(join(workspace, 'src/geometry.py'));
    fake.vscode.languages.getDiagnostics = (uri: Uri) => (uri.toString() === geometry.toString() ? [
      { range: { start: { line: 3, character: 11 }, end: { line: 3, character: 15 } }, severity: 0, message: '"math" is not defined', source: 'Pylance', code: 'reportUndefinedVariable' },
    ] : []);
    fake.setActiveEditor({ document: geometryDoc(), selections: [] });
    receive({ type: 'addContext', source: 'problems' });
    await waitFor(() => lastChips()?.items.some((c) => c.kind === 'problems'), 'the problems chip');
    const body = await ask('/fix');
    assert.equal(body.prompt, [
      'Problems: src/geometry.py',
      '```text',
      'line 4: error: "math" is not defined (Pylance reportUndefinedVariable)',
      '    return math.pi * radius ** 2',
      '```',
      '',
      'Fix the problems listed in the attached problems report. Show the corrected code in one fenced code block, then say in one sentence per problem what you changed.',
    ].join('\n'));
    const state = [...posted].reverse().find((m) => m.type === 'state') as { messages: { role: string; content: string; attachments?: Chip[] }[] };
    const question = state.messages.filter((m) => m.role === 'user').at(-1)!;
    assert.deepEqual([question.content, question.attachments?.map((c) => c.kind)], ['/fix', ['problems']]);
    // Typed without the list, /fix attaches the current file's problems itself.
    const again = await ask('/fix the import');
    assert.match(String(again.prompt), /^Problems: src\/geometry\.py\n[\s\S]*in one sentence per problem what you changed\.\n\nthe import$/);
  });

  it('/new starts a new chat with the rest as its first question; the meter gets the new chat\'s figures', async () => {
    posted.length = 0;
    const body = await ask('/new What is a monad?');
    assert.equal(body.prompt, 'What is a monad?');
    assert.equal(String(body.history ?? '[]'), '[]', 'a new chat has no history');
    const budget = [...posted].reverse().find((m) => m.type === 'budget') as { maxInputTokens: number; historyTurns: number[]; templateTokens: Record<string, number> };
    assert.equal(budget.maxInputTokens, 6144);
    assert.ok(budget.templateTokens.fix! > 10);
    await waitFor(() => (([...posted].reverse().find((m) => m.type === 'budget') as { historyTurns: number[] } | undefined)?.historyTurns.length === 1), 'one turn of history after the answer');
  });
});
