// Issue #27: Edit Selection and Explain report a container killed mid-answer as its exit, with Start Server and
// the logs — as the chat panel and the CLI do — instead of "the server is not running or cannot be reached".
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { SETTING_KEYS, SETTINGS } from '../../../src/core/settings/settingsSchema';
import { containerExitedError } from '../../../src/core/server';
import { TritonClient, TritonError } from '../../../src/core/triton';
import { freePort } from '../../fake-docker/harness';
import { createFakeVscode, fakeDocument, installVscodeModule, Position, Selection, Uri } from './support/fakeVscode';

type EditModule = typeof import('../../../src/vscode/edit/editSelection');
type NoticeModule = typeof import('../../../src/vscode/chat/exitNotice');

let fake: ReturnType<typeof createFakeVscode>;
let uninstall: () => void;
let edit: EditModule;
let notice: NoticeModule;
let client: TritonClient;
const exited = containerExitedError(137, ['Killed']);

before(async () => {
  fake = createFakeVscode({});
  uninstall = installVscodeModule(fake.vscode);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  edit = require('../../../src/vscode/edit/editSelection') as EditModule;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  notice = require('../../../src/vscode/chat/exitNotice') as NoticeModule;
  // Nothing listens on the port: the container is gone, its published port refuses.
  client = new TritonClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
});

after(async () => {
  await client?.close();
  uninstall?.();
});

beforeEach(() => { fake.rec.messages.length = 0; });

function editDeps(explainFailure: ((e: unknown) => Promise<unknown>) | undefined) {
  const settings = Object.fromEntries(SETTING_KEYS.map((k) => [k, SETTINGS[k].default]));
  const review = { setCode() {}, finish() {}, signal: new AbortController().signal };
  return {
    reviews: { open: async () => review },
    store: { current: { mode: 'managed', server: 'running', model: 'ready' } },
    settings: { current: settings },
    log: { info() {}, error() {}, warn() {} },
    client: () => client,
    modelName: () => 'chatglm3-6b',
    track: <T>(request: Promise<T>) => request,
    ...(explainFailure ? { explainFailure } : {}),
  } as unknown as Parameters<EditModule['editSelection']>[1];
}

async function runEdit(explainFailure?: (e: unknown) => Promise<unknown>): Promise<void> {
  const document = fakeDocument(Uri.file('/w/a.py'), 'x = 1\ny = 2\n', 'python');
  const editor = { document, selections: [new Selection(new Position(0, 0), new Position(0, 5)), new Selection(new Position(1, 0), new Position(1, 5))] };
  fake.rec.inputAnswer = 'rename x';
  await edit.editSelection(editor as never, editDeps(explainFailure));
}

test('Edit Selection: the rewrites met a container that exited: the error says so (code 137) and offers Start Server', async () => {
  const asked: unknown[] = [];
  await runEdit(async (e) => { asked.push(e); return exited; });
  assert.ok(asked.length >= 1 && asked.every((e) => e instanceof TritonError && e.code === 'server-not-running'), 'asked why the request found no server');
  const errors = fake.rec.messages.filter((m) => m.level === 'error');
  assert.equal(errors.length, 1, 'one message for the run');
  assert.match(errors[0]!.text, /^The rewrite failed: The server stopped: the Triton container exited with code 137\./);
  assert.doesNotMatch(errors[0]!.text, /not running or cannot be reached/);
  assert.deepEqual(errors[0]!.buttons, ['Start Server', 'Show Server Logs']);
});

test('Edit Selection: no exit known (the container runs, or external mode): the request\'s own error, with its actions', async () => {
  await runEdit(async () => undefined);
  const errors = fake.rec.messages.filter((m) => m.level === 'error');
  assert.equal(errors.length, 1);
  assert.match(errors[0]!.text, /^The rewrite failed: The Triton server is not running or cannot be reached\./);
  assert.deepEqual(errors[0]!.buttons, ['Start Server', 'Show Server Logs']);
});

test('Explain: a container exit gets one notification with Start Server, however many explanations it failed', async () => {
  const n = new notice.ExitNotice();
  fake.rec.answer = undefined;
  n.offer(exited);
  n.offer(exited);
  n.offer(new TritonError('timeout', 'slow', { operation: 'generate-stream' }));
  n.offer(new TritonError('server-not-running', 'Cannot reach', { operation: 'generate-stream' }));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(fake.rec.messages.map((m) => [m.level, m.buttons]), [['error', ['Start Server', 'Show Server Logs']]]);
  assert.match(fake.rec.messages[0]!.text, /the Triton container exited with code 137\./);
  n.offer(exited);
  await new Promise((r) => setImmediate(r));
  assert.equal(fake.rec.messages.length, 2, 'once the notice is closed, the next exit is shown again');
});
