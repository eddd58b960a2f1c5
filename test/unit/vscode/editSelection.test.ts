// Edit Selection through the real extension against the fake `vscode` module and a stub Triton whose rewrites are
// the selected code upper-cased, in a fenced block with prose around it: the instruction's input box, the rewrite
// streaming into the diff (one proposal per selection, requested together), Accept editing exactly the proposed
// ranges, Discard stopping the rewrite, and the version rule while it streams.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { activateExtension, resolveChatView, waitFor, type ExtensionModule } from './support/activate';
import { createFakeVscode, fakeDocument, installVscodeModule, Position, Selection, Uri } from './support/fakeVscode';
import { startStubTriton, type StubTriton } from './support/stubTriton';

const SCHEME = 'triton-chatglm-proposal';
const GEOMETRY = ['import math', '', 'def circle_area(radius):', '    return math.pi * radius ** 2', '', 'def mean(values):', '    return sum(values) / len(values)', ''].join('\n');

let stub: StubTriton;
let storage: string;
let fake: ReturnType<typeof createFakeVscode>;
let uninstall: () => void;
let ext: ExtensionModule;

type Doc = ReturnType<typeof fakeDocument>;
function editorWith(...selections: [number, number, number, number][]): Doc {
  const document = fakeDocument(Uri.file('/w/src/geometry.py'), GEOMETRY, 'python');
  fake.setActiveEditor({ document, selections: selections.map(([a, b, c, d]) => new Selection(new Position(a, b), new Position(c, d))) });
  return document;
}

const rightText = () => (fake.rec.diffs.length === 0 ? '' : fake.rec.contentProviders.get(SCHEME)!.provideTextDocumentContent(fake.rec.diffs.at(-1)!.right));
const run = (command: string) => fake.vscode.commands.executeCommand(command) as Promise<void>;
const rewrites = () => stub.requests.filter((r) => r.path.endsWith('/generate_stream') && String(r.body.prompt).startsWith('Rewrite this'));

describe('Edit Selection (host side)', () => {
  before(async () => {
    stub = await startStubTriton();
    storage = mkdtempSync(join(tmpdir(), 'tcg-edit-'));
    fake = createFakeVscode({ 'tritonChatglm.serverMode': 'external', 'tritonChatglm.externalUrl': stub.url });
    uninstall = installVscodeModule(fake.vscode);
    ext = await activateExtension(storage);
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
    fake.rec.messages.length = 0; fake.rec.diffs.length = 0; fake.rec.applied.length = 0; fake.rec.opened.length = 0;
    fake.rec.tabs.length = 0; fake.rec.inputAnswer = undefined;
  });

  it('one selection: the instruction asked for, the rewrite streamed into the diff, Accept edits exactly that range', async () => {
    const doc = editorWith([3, 0, 3, 32]); // the return line of circle_area, without its line break (32 characters)
    const sent = rewrites().length;
    fake.rec.inputAnswer = 'upper-case every name';
    const done = run('tritonChatglm.editSelection');
    await waitFor(() => fake.rec.diffs.length === 1, 'the diff');
    assert.equal(fake.rec.diffs[0]!.title, 'geometry.py ↔ ChatGLM Edit');
    assert.equal(fake.rec.diffs[0]!.left.toString(), doc.uri.toString());
    await done;
    const prompt = String(rewrites()[sent]!.body.prompt);
    assert.match(prompt, /^Rewrite this python code from geometry\.py as follows: upper-case every name\nReply with the complete rewritten code in one fenced code block and nothing else\./);
    assert.ok(prompt.endsWith('\n```python\n    return math.pi * radius ** 2\n```'), prompt);
    assert.equal(rewrites()[sent]!.body.history, '[]', 'no chat history goes with an edit');
    // The prose around the block is not part of the proposal.
    assert.equal(rightText(), GEOMETRY.replace('    return math.pi * radius ** 2', '    RETURN MATH.PI * RADIUS ** 2'));
    assert.deepEqual(fake.rec.messages, []);
    await run('tritonChatglm.acceptProposal');
    assert.equal(fake.rec.applied.length, 1);
    assert.deepEqual(fake.rec.applied[0]!.edits.map((e) => [e.range.start, e.range.end, e.newText]), [[new Position(3, 0), new Position(3, 32), '    RETURN MATH.PI * RADIUS ** 2']]);
    assert.equal(doc.getText(), GEOMETRY.replace('    return math.pi * radius ** 2', '    RETURN MATH.PI * RADIUS ** 2'));
    assert.deepEqual(fake.rec.tabs, []);
  });

  it('several selections: one request each, in flight together, one proposal each in the same diff', async () => {
    const doc = editorWith([3, 0, 4, 0], [6, 0, 7, 0]);
    const sent = rewrites().length;
    assert.equal(stub.maxConcurrent, 1, 'one stream at a time so far');
    fake.rec.inputAnswer = 'shout';
    await run('tritonChatglm.editSelection');
    assert.equal(rewrites().slice(sent).length, 2);
    assert.equal(stub.maxConcurrent, 2, 'both in flight together (the server can batch them)');
    assert.equal(fake.rec.diffs.length, 1, 'one diff for both');
    const expected = GEOMETRY.replace('    return math.pi * radius ** 2\n', '    RETURN MATH.PI * RADIUS ** 2\n').replace('    return sum(values) / len(values)\n', '    RETURN SUM(VALUES) / LEN(VALUES)\n');
    assert.equal(rightText(), expected);
    await run('tritonChatglm.acceptProposal');
    assert.equal(fake.rec.applied[0]!.edits.length, 2);
    assert.equal(doc.getText(), expected);
    assert.deepEqual(fake.rec.opened.at(-1)!.selections!.map((s) => [s.start.line, s.end.line]), [[3, 4], [6, 7]], 'both rewrites selected');
  });

  it('Accept while it streams is refused; Discard stops the request and changes nothing', async () => {
    const doc = editorWith([3, 0, 3, 32]);
    const closed = stub.closedEarly;
    fake.rec.inputAnswer = 'slowly';
    const done = run('tritonChatglm.editSelection');
    await waitFor(() => rightText().includes('RETURN'), 'part of the rewrite in the diff');
    await run('tritonChatglm.acceptProposal');
    assert.equal(fake.rec.messages.at(-1)!.text, 'The rewrite is still being written. Accept it when it is complete, or Discard it.');
    await run('tritonChatglm.discardProposal');
    await done;
    await waitFor(() => stub.closedEarly > closed, 'the stream to be closed (the server cancels it)');
    assert.deepEqual(fake.rec.tabs, []);
    assert.deepEqual(fake.rec.applied, []);
    assert.equal(doc.getText(), GEOMETRY);
  });

  it('an edit of the document while the rewrite streams: told at once, and Accept is refused', async () => {
    const doc = editorWith([3, 0, 3, 32]);
    fake.rec.inputAnswer = 'slowly';
    const done = run('tritonChatglm.editSelection');
    await waitFor(() => fake.rec.diffs.length === 1, 'the diff');
    fake.typeInto(doc, new Selection(new Position(0, 0), new Position(0, 0)), '# typed\n');
    const text = 'src/geometry.py changed after the rewrite was requested, so it cannot be applied. Run Edit Selection again.';
    assert.deepEqual(fake.rec.messages.map((m) => m.text), [text]);
    await done;
    await run('tritonChatglm.acceptProposal');
    assert.equal(fake.rec.messages.at(-1)!.text, text);
    assert.deepEqual(fake.rec.applied, []);
    assert.equal(doc.getText(), `# typed\n${GEOMETRY}`);
    await run('tritonChatglm.discardProposal');
  });

  it('Accept warns about invisible and bidi characters in the rewrite first, like Copy, Insert and Apply', async () => {
    const text = 'x = 1  # user\u202E \u2066// admin\u2069\n';
    const doc = fakeDocument(Uri.file('/w/src/access.py'), text, 'python');
    fake.setActiveEditor({ document: doc, selections: [new Selection(new Position(0, 0), new Position(0, text.length - 1))] });
    fake.rec.modals.length = 0;
    fake.rec.answer = undefined;
    fake.rec.inputAnswer = 'upper-case every name';
    await run('tritonChatglm.editSelection');
    assert.match(rightText(), /X = 1/);
    await run('tritonChatglm.acceptProposal');
    assert.equal(fake.rec.modals.length, 1);
    assert.match(fake.rec.modals[0]!.text, /invisible or bidirectional control characters: U\+202E RIGHT-TO-LEFT OVERRIDE, U\+2066 LEFT-TO-RIGHT ISOLATE, U\+2069 POP DIRECTIONAL ISOLATE/);
    assert.deepEqual(fake.rec.modals[0]!.buttons, ['Accept Anyway']);
    assert.deepEqual(fake.rec.applied, [], 'cancelled: nothing applied');
    assert.equal(doc.getText(), text);
    fake.rec.answer = 'Accept Anyway';
    await run('tritonChatglm.acceptProposal');
    fake.rec.answer = undefined;
    assert.equal(fake.rec.applied.length, 1);
    assert.equal(doc.getText(), text.toUpperCase());
  });

  it('no selection, or no instruction: nothing is sent', async () => {
    const sent = rewrites().length;
    editorWith([3, 4, 3, 4]);
    await run('tritonChatglm.editSelection');
    assert.equal(fake.rec.messages.at(-1)!.text, 'Select code in an editor to edit it.');
    editorWith([3, 0, 3, 32]);
    fake.rec.inputAnswer = undefined; // Escape in the input box
    await run('tritonChatglm.editSelection');
    fake.rec.inputAnswer = '   '; // refused by the input's validation
    await run('tritonChatglm.editSelection');
    assert.equal(rewrites().length, sent);
    assert.deepEqual(fake.rec.diffs, []);
  });
});
