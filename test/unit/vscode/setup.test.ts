// Guided setup in the extension host: the real extension activated against the fake `vscode` module in managed
// mode with nothing set up (a docker path that does not exist, no weights folder), then each fix applied through
// the chat view's `setupAction` messages as the checklist would send them, observed through what the extension
// shows (status bar, context keys, `setup` messages) and does (links opened, settings written, dialogs).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { SetupView } from '../../../src/protocol';
import { createFakeDocker, freePort, makeFakeWeights, pathWithFakeHost, type FakeDocker } from '../../fake-docker/harness';
import { activateExtension, resolveChatView, waitFor as waitUntil } from './support/activate';
import { createFakeVscode, installVscodeModule, Uri } from './support/fakeVscode';

/** The checks spawn the fake docker a few times: generous on a busy machine. */
const waitFor = <T>(probe: () => T | undefined | false, what: string, timeoutMs = 60_000) => waitUntil(probe, what, timeoutMs);

let docker: FakeDocker;
let storage: string;
let fake: ReturnType<typeof createFakeVscode>;
let uninstall: () => void;
let ext: typeof import('../../../src/vscode/extension');
let receive: (m: unknown) => void;
let savedPath: string | undefined;
const posted: { type: string; setup?: SetupView }[] = [];
const memento = new Map<string, unknown>();

/** The checklist as the chat view last received it. */
const lastSetup = (): SetupView | undefined => posted.filter((m) => m.type === 'setup').at(-1)?.setup;
const item = (id: string) => lastSetup()?.items.find((i) => i.id === id);

before(async () => {
  docker = createFakeDocker();
  storage = mkdtempSync(join(tmpdir(), 'tcg-setup-'));
  fake = createFakeVscode({
    'tritonChatglm.dockerPath': '/nonexistent/bin/docker',
    'tritonChatglm.httpPort': await freePort(),
    'tritonChatglm.grpcPort': await freePort(),
    'tritonChatglm.metricsPort': await freePort(),
  });
  process.env.FAKE_DOCKER_STATE = docker.stateDir;
  // The preflight runs in this process: the fake host's NVIDIA hook must be on its PATH.
  savedPath = process.env.PATH;
  process.env.PATH = pathWithFakeHost(savedPath);
  uninstall = installVscodeModule(fake.vscode);
  ext = await activateExtension(storage, memento);
  ({ receive } = resolveChatView(fake, posted));
  receive({ type: 'ready' });
});

after(async () => {
  await ext?.deactivate();
  uninstall?.();
  delete process.env.FAKE_DOCKER_STATE;
  process.env.PATH = savedPath;
  docker?.cleanup();
  rmSync(storage, { recursive: true, force: true });
});

test('nothing set up: "setup needed" (warning colour, never the error state) and one checklist of every check', async () => {
  await waitFor(() => fake.rec.context.get('tritonChatglm.serverState') === 'setup', 'the setup-needed state');
  // The install's first activation found the setup needed: the ChatGLM view (its checklist) is revealed, once.
  await waitFor(() => fake.rec.executed.some((c) => c.id === 'tritonChatglm.chat.focus'), 'the ChatGLM view to be revealed');
  assert.equal(fake.rec.executed.filter((c) => c.id === 'tritonChatglm.chat.focus').length, 1);
  assert.equal(memento.get('tritonChatglm.firstRunDone'), true);
  const bar = fake.rec.statusBar[0]!;
  assert.match(bar.text, /\$\(tools\) ChatGLM: setup needed/);
  assert.equal((bar as unknown as { backgroundColor?: { id: string } }).backgroundColor?.id, 'statusBarItem.warningBackground');
  const setup = await waitFor(() => lastSetup()?.phase === 'needed' && lastSetup(), 'the checklist with its findings');
  assert.equal(setup.visible, true);
  assert.equal(setup.primary, 'recheck');
  assert.deepEqual(setup.items.map((i) => [i.id, i.level]), [
    ['docker', 'error'], ['daemon', 'blocked'], ['nvidia-runtime', 'blocked'], ['image', 'blocked'], ['weights', 'error'], ['ports', 'ok'],
    ['gpu-memory', item('gpu-memory')!.level],
  ]);
  // Docker and the weights need the person; the three checks Docker blocks only wait (not "5 need attention").
  assert.equal(setup.summary, '2 checks need attention before ChatGLM3-6B can start. 3 more are checked after that.');
  assert.deepEqual(item('docker')?.fixes, ['installDocker', 'openSettings']);
  assert.match(item('docker')?.detail ?? '', /Docker was not found/);
  assert.equal(item('daemon')?.detail, 'Checked once Docker is installed.');
  assert.deepEqual(item('weights')?.fixes, ['downloadWeights', 'chooseWeights']);
  assert.match(item('weights')?.detail ?? '', /ChatGLM3-6B has no weights yet: no weights folder holds it/);
  // Walkthrough steps complete on these.
  assert.equal(fake.rec.context.get('tritonChatglm.setup.dockerReady'), false);
  assert.equal(fake.rec.context.get('tritonChatglm.setup.weightsReady'), false);
});

test('the checklist\'s links open through the host; a fix it does not offer is refused', async () => {
  receive({ type: 'setupAction', action: 'installDocker', check: 'docker' });
  await waitFor(() => fake.rec.external.length === 1, 'the Docker installation page');
  assert.deepEqual(fake.rec.external, ['https://docs.docker.com/engine/install/']);
  receive({ type: 'setupAction', action: 'installNvidiaToolkit', check: 'docker' }); // offered for another check only
  receive({ type: 'setupAction', action: 'startChatglm' }); // the one action now is Re-check
  await waitFor(() => fake.rec.log.filter((l) => /setup: ignored/.test(l)).length === 2, 'both refusals logged');
  assert.equal(fake.rec.external.length, 1);
});

test('Open Settings lands on the Remote tab in a remote window, on the User settings in a local one', async () => {
  fake.rec.remoteName = 'ssh-remote';
  receive({ type: 'setupAction', action: 'openSettings', check: 'docker' });
  const remote = await waitFor(() => fake.rec.executed.find((c) => c.id === 'workbench.action.openRemoteSettings'), 'the remote settings');
  assert.deepEqual(remote.args, [{ query: 'tritonChatglm.dockerPath' }]);
  fake.rec.remoteName = undefined;
  await fake.vscode.commands.executeCommand('tritonChatglm.openSettings');
  const local = fake.rec.executed.filter((c) => c.id === 'workbench.action.openSettings').at(-1);
  assert.deepEqual(local?.args, ['@ext:triton-chatglm.triton-chatglm']);
});

test('Choose Weights Folder…: a folder that is not a checkpoint is refused; its parent folder finds the checkpoint inside', async () => {
  // Kept until the end: the later tests need the weights in place.
  const downloads = join(storage, 'downloads');
  mkdirSync(downloads);
  {
    const checkpoint = makeFakeWeights(downloads);
    mkdirSync(join(downloads, 'empty'));
    fake.rec.openDialogAnswer = [Uri.file(join(downloads, 'empty'))];
    fake.rec.answer = undefined; // "Choose Another Folder…" not clicked
    receive({ type: 'setupAction', action: 'chooseWeights', check: 'weights' });
    const refused = await waitFor(() => fake.rec.messages.find((m) => m.level === 'error' && /is not a ChatGLM3-6B checkpoint/.test(m.text)), 'the refusal');
    assert.match(refused.text, /config\.json is missing; tokenizer\.model is missing; there are no weight files/);
    assert.deepEqual(refused.buttons, ['Choose Another Folder…']);
    assert.deepEqual(fake.rec.updates, []);

    fake.rec.openDialogAnswer = [Uri.file(downloads)];
    receive({ type: 'setupAction', action: 'chooseWeights', check: 'weights' });
    const written = await waitFor(() => fake.rec.updates[0], 'the setting written');
    // Global: the user's settings locally; VS Code writes a machine-scoped key to the remote settings in a remote window.
    assert.deepEqual(written, { key: 'tritonChatglm.weightsPath', value: checkpoint, target: 1 });
    const dialog = fake.rec.openDialogs.at(-1) as { canSelectFolders: boolean; canSelectFiles: boolean };
    assert.equal(dialog.canSelectFolders, true);
    assert.equal(dialog.canSelectFiles, false);
    // The change runs the checks again: the weights turn green.
    await waitFor(() => item('weights')?.level === 'ok', 'the weights check to pass');
    assert.equal(item('weights')?.detail, checkpoint);
    assert.equal(fake.rec.context.get('tritonChatglm.setup.weightsReady'), true);
  }
});

test('Docker installed (the docker path fixed): every check passes, "setup needed" ends, Start ChatGLM is the one action', async () => {
  fake.updateConfig({ 'tritonChatglm.dockerPath': docker.dockerPath });
  const setup = await waitFor(() => lastSetup()?.phase === 'ready' && lastSetup(), 'the checklist to be complete', 60_000)
    .catch((e: unknown) => { throw new Error(`${String(e)}: ${JSON.stringify(lastSetup())}\n${fake.rec.log.slice(-15).join('\n')}`); });
  assert.equal(setup.primary, 'startChatglm');
  assert.ok(setup.items.every((i) => i.level === 'ok' || (i.id === 'gpu-memory' && ['unknown', 'warning'].includes(i.level))), JSON.stringify(setup.items));
  assert.match(item('docker')?.detail ?? '', /Docker 28\.2\.2 is installed/);
  assert.match(item('image')?.detail ?? '', /triton-chatglm:24\.10 is available/);
  assert.equal(fake.rec.context.get('tritonChatglm.serverState'), 'stopped');
  assert.match(fake.rec.statusBar[0]!.text, /ChatGLM: stopped/);
  assert.equal(fake.rec.context.get('tritonChatglm.setup.dockerReady'), true);
});

test('an image that goes missing: Start ChatGLM says "setup needed" in a notice that closes itself once fixed', async () => {
  docker.setFail('image-missing');
  const progressBefore = fake.rec.progress.length;
  await fake.vscode.commands.executeCommand('tritonChatglm.startChatglm');
  assert.equal(fake.rec.context.get('tritonChatglm.serverState'), 'setup');
  assert.equal(item('image')?.level, 'error');
  assert.deepEqual(item('image')?.fixes, ['buildImage', 'openSettings']);
  const notice = await waitFor(() => fake.rec.progress.slice(progressBefore).find((p) => p.messages.some((m) => /needs setup/.test(m))), 'the setup notice');
  assert.match(notice.messages[0]!, /ChatGLM3-6B needs setup\. The Triton serving image is not available on this machine\..*\[Show Setup Checklist\]\(command:tritonChatglm\.openChat\)/);
  assert.ok(!fake.rec.messages.some((m) => m.level === 'error' && /serving image/.test(m.text)), 'no error popup for a missing prerequisite');
  docker.setFail(undefined);
  assert.equal(notice.done, false, 'shown while the setup is needed');
  receive({ type: 'setupAction', action: 'recheck' });
  await waitFor(() => fake.rec.context.get('tritonChatglm.serverState') === 'stopped', 'the setup to be complete again');
  await waitFor(() => notice.done, 'the notice to close itself');
});

test('a built image: its message offers the next step as its button (Start ChatGLM), not a Cancel beside a link', async () => {
  const before = fake.rec.messages.length;
  const progressBefore = fake.rec.progress.length;
  fake.rec.answer = undefined;
  await fake.vscode.commands.executeCommand('tritonChatglm.buildServingImage');
  const ready = await waitFor(() => fake.rec.messages.slice(before).find((m) => /^The serving image .* is ready\.$/.test(m.text)), 'the image-ready message');
  assert.equal(ready.level, 'info');
  assert.deepEqual(ready.buttons, ['Start ChatGLM']);
  assert.ok(!fake.rec.progress.slice(progressBefore).some((p) => p.messages.some((m) => /is ready/.test(m))), 'not a progress notice (whose button is Cancel)');
});
