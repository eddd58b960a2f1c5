// Apply to Selection through the real extension against the fake `vscode` module: the panel's applyCode message,
// the diff preview between the document and the proposal (served by the content provider the root registers once),
// Accept / Discard as the diff editor's commands (no notification), the version rule, the invisible-character
// warning, and the refusals.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { activateExtension, resolveChatView, waitFor, type ExtensionModule } from './support/activate';
import { createFakeVscode, fakeDocument, installVscodeModule, Position, Selection, Uri } from './support/fakeVscode';
import { startStubTriton, type StubTriton } from './support/stubTriton';

const SCHEME = 'triton-chatglm-proposal';
const GEOMETRY = ['import math', '', 'def circle_area(radius):', '    return 3.14 * radius * radius', '', 'print(circle_area(2))', ''].join('\n');
const NEW_AREA = 'def circle_area(radius):\n    return math.pi * radius ** 2';

let stub: StubTriton;
let storage: string;
let fake: ReturnType<typeof createFakeVscode>;
let uninstall: () => void;
let ext: ExtensionModule;
let receive: (m: unknown) => void;
const posted: Record<string, unknown>[] = [];

type Doc = ReturnType<typeof fakeDocument>;
/** A fresh geometry.py in the active editor with `selection` (line/character pairs, 0-based). */
function editorWith(selection: [number, number, number, number], text = GEOMETRY): Doc {
  const document = fakeDocument(Uri.file('/w/src/geometry.py'), text, 'python');
  const [a, b, c, d] = selection;
  fake.setActiveEditor({ document, selections: [new Selection(new Position(a, b), new Position(c, d))] });
  return document;
}

/** Posts applyCode as the panel does and waits until the host is done with it (a diff shown, or a message). */
async function apply(code: string): Promise<void> {
  const before = fake.rec.messages.length + fake.rec.diffs.length;
  receive({ type: 'applyCode', code });
  await waitFor(() => fake.rec.messages.length + fake.rec.diffs.length > before, 'the apply flow to show a diff or say why not');
  await new Promise((r) => setTimeout(r, 20));
}

/** The proposal's text now, as the diff's right side shows it. */
function rightText(): string {
  const diff = fake.rec.diffs.at(-1)!;
  return fake.rec.contentProviders.get(SCHEME)!.provideTextDocumentContent(diff.right);
}

const accept = () => fake.vscode.commands.executeCommand('tritonChatglm.acceptProposal');
const discard = () => fake.vscode.commands.executeCommand('tritonChatglm.discardProposal');

describe('Apply to Selection (host side)', () => {
  before(async () => {
    stub = await startStubTriton();
    storage = mkdtempSync(join(tmpdir(), 'tcg-apply-'));
    fake = createFakeVscode({ 'tritonChatglm.serverMode': 'external', 'tritonChatglm.externalUrl': stub.url });
    uninstall = installVscodeModule(fake.vscode);
    ext = await activateExtension(storage);
    receive = resolveChatView(fake, posted).receive;
  });

  after(async () => {
    await ext?.deactivate();
    uninstall?.();
    await stub?.close();
    if (storage) rmSync(storage, { recursive: true, force: true });
  });

  beforeEach(() => {
    fake.rec.messages.length = 0; fake.rec.modals.length = 0; fake.rec.diffs.length = 0; fake.rec.applied.length = 0;
    fake.rec.opened.length = 0; fake.rec.answer = undefined; fake.rec.applyEditFails = false; fake.rec.tabs.length = 0;
  });

  it('the proposal scheme has one read-only content provider, owned by the root of disposables', () => {
    assert.ok(fake.rec.contentProviders.has(SCHEME));
    assert.deepEqual(fake.rec.disposables.filter((d) => d.kind === `content:${SCHEME}`).map((d) => d.disposed), [false]);
  });

  it('previews the selection replaced, and Accept replaces exactly that range in one edit', async () => {
    const doc = editorWith([2, 0, 4, 0]); // lines 3-4, with the line break of line 4
    await apply(NEW_AREA);
    const expected = GEOMETRY.replace('def circle_area(radius):\n    return 3.14 * radius * radius\n', `${NEW_AREA}\n`);
    const [diff] = fake.rec.diffs;
    assert.equal(diff!.left.toString(), doc.uri.toString());
    assert.equal(diff!.right.scheme, SCHEME);
    assert.match(diff!.right.path, /\/geometry\.py$/, 'named like the file, for its language');
    assert.equal(rightText(), expected);
    assert.equal(diff!.title, 'geometry.py ↔ Proposed Change');
    assert.deepEqual(fake.rec.messages, [], 'no notification: Accept and Discard are the diff editor\'s');
    assert.equal(fake.rec.context.get('tritonChatglm.proposalActive'), true, 'the title actions and keys are on');
    await accept();
    assert.equal(fake.rec.applied.length, 1);
    const edits = fake.rec.applied[0]!.edits;
    assert.equal(edits.length, 1);
    assert.deepEqual([edits[0]!.range.start, edits[0]!.range.end], [new Position(2, 0), new Position(4, 0)]);
    assert.equal(doc.getText(), expected);
    assert.equal(doc.version, 2);
    assert.deepEqual(fake.rec.tabs, [], 'the preview closed');
    assert.equal(fake.rec.context.get('tritonChatglm.proposalActive'), false);
    assert.equal(fake.rec.contentProviders.get(SCHEME)!.provideTextDocumentContent(diff!.right), '', 'the proposal is forgotten');
    assert.deepEqual((fake.rec.messages as { level: string }[]).filter((m) => m.level !== 'info'), [], 'our own edit is no "changed" warning');
    // the editor is shown with the new code selected
    const shown = fake.rec.opened.at(-1)!;
    assert.deepEqual(shown.selections!.map((x) => [x.start, x.end]), [[new Position(2, 0), new Position(4, 0)]]);
  });

  it('Discard, or closing the diff, changes nothing', async () => {
    for (const how of ['discard', 'close tab'] as const) {
      const doc = editorWith([3, 11, 3, 15]);
      fake.rec.diffs.length = 0;
      await apply('math.pi');
      assert.equal(rightText(), GEOMETRY.replace('3.14', 'math.pi'));
      if (how === 'discard') await discard();
      else await fake.vscode.window.tabGroups.close([...fake.rec.tabs]);
      assert.deepEqual(fake.rec.tabs, []);
      await accept(); // nothing left to accept
      assert.equal(doc.getText(), GEOMETRY);
      assert.equal(doc.version, 1);
      assert.equal(fake.rec.messages.at(-1)!.text, 'There is no proposed change to accept.');
    }
    assert.deepEqual(fake.rec.applied, []);
  });

  it('an empty selection inserts the code at the cursor (with the same preview)', async () => {
    const doc = editorWith([5, 0, 5, 0]);
    await apply('# the area of a circle of radius 2\n');
    await accept();
    assert.equal(doc.getText(), GEOMETRY.replace('print(', '# the area of a circle of radius 2\nprint('));
  });

  it('refuses when the document changed after the preview (the version rule), saying so at once and at Accept', async () => {
    const doc = editorWith([3, 11, 3, 15]);
    await apply('math.pi');
    // The user types in the editor while the diff is shown, then accepts.
    fake.typeInto(doc, new Selection(new Position(0, 0), new Position(0, 0)), '# edited\n');
    const text = 'src/geometry.py changed after the preview, so the code was not applied. Use Apply to Selection again.';
    assert.deepEqual(fake.rec.messages.map((m) => [m.level, m.text]), [['warning', text]], 'told when it happens');
    await accept();
    assert.equal(doc.getText(), `# edited\n${GEOMETRY}`, 'only the user\'s own change');
    assert.deepEqual(fake.rec.applied, []);
    assert.deepEqual(fake.rec.messages.at(-1), { level: 'warning', text, buttons: [] });
    await discard();
    assert.deepEqual(fake.rec.tabs, []);
  });

  it('warns about invisible and bidi characters before anything, like Copy and Insert', async () => {
    const doc = editorWith([3, 11, 3, 15]);
    fake.rec.answer = 'Apply';
    receive({ type: 'applyCode', code: 'math.pi \u202E# admin' });
    await waitFor(() => fake.rec.modals.length > 0, 'the warning');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(fake.rec.modals.length, 1);
    assert.match(fake.rec.modals[0]!.text, /invisible or bidirectional control characters: U\+202E RIGHT-TO-LEFT OVERRIDE/);
    assert.deepEqual(fake.rec.modals[0]!.buttons, ['Apply Anyway']);
    assert.deepEqual(fake.rec.diffs, [], 'cancelled: no preview');
    assert.equal(doc.getText(), GEOMETRY);
  });

  it('says so when there is no editor, when the editor is a proposal, and when the edit is refused', async () => {
    fake.setActiveEditor(undefined);
    await apply('x');
    const refusal = 'Open an editor and select the code to replace (or place the cursor where the code goes).';
    assert.equal(fake.rec.messages.at(-1)!.text, refusal);
    fake.setActiveEditor({ document: fakeDocument(Uri.parse(`${SCHEME}:/1/geometry.py`), 'x') });
    await apply('x');
    assert.equal(fake.rec.messages.at(-1)!.text, refusal);
    assert.deepEqual(fake.rec.diffs, []);

    const doc = editorWith([3, 11, 3, 15]);
    fake.rec.applyEditFails = true;
    await apply('math.pi');
    await accept();
    assert.equal(fake.rec.messages.at(-1)!.level, 'error');
    assert.equal(fake.rec.messages.at(-1)!.text, 'The change could not be applied to src/geometry.py.');
    assert.equal(doc.getText(), GEOMETRY);
    await discard();
    assert.deepEqual(fake.rec.tabs, []);
  });

  it('follows a CRLF document\'s line ending in the proposal and the edit', async () => {
    const crlf = GEOMETRY.replace(/\n/g, '\r\n');
    const doc = editorWith([2, 0, 4, 0], crlf);
    await apply(NEW_AREA);
    await accept();
    assert.equal(doc.getText(), crlf.replace('def circle_area(radius):\r\n    return 3.14 * radius * radius\r\n', `${NEW_AREA.replace('\n', '\r\n')}\r\n`));
  });

  it('deactivation disposes the content provider', async () => {
    await ext.deactivate();
    assert.deepEqual(fake.rec.disposables.filter((d) => d.kind === `content:${SCHEME}`).map((d) => d.disposed), [true]);
    assert.equal(fake.rec.contentProviders.has(SCHEME), false);
  });
});
