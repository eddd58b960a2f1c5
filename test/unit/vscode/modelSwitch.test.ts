// Choosing another model while our server runs (src/vscode/settingsReactions.ts): the question says that the
// switch restarts the server (the weights are mounted per container) and what it does; its one button does it
// all (ServerController.switchModel); no answer changes nothing.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import type { ModelSwitch } from '../../../src/core/session';
import type { SettingsChange } from '../../../src/vscode/config/settingsService';
import { createFakeVscode, EventEmitter, installVscodeModule } from './support/fakeVscode';

type ReactionsModule = typeof import('../../../src/vscode/settingsReactions');

let fake: ReturnType<typeof createFakeVscode>;
let uninstall: () => void;
let reactions: ReactionsModule;

before(() => {
  fake = createFakeVscode({});
  uninstall = installVscodeModule(fake.vscode);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  reactions = require('../../../src/vscode/settingsReactions') as ReactionsModule;
});
after(() => uninstall?.());
beforeEach(() => { fake.rec.messages.length = 0; });

const GLM4: ModelSwitch = { from: 'chatglm3-6b', to: 'glm-4-9b-chat', fromName: 'ChatGLM3-6B', toName: 'GLM-4-9B-Chat' };

/** Fires one change of tritonChatglm.model at the reactions with a running server; resolves with what was done. */
async function chooseModel(pending: ModelSwitch | undefined): Promise<string[]> {
  const changes = new EventEmitter<SettingsChange>();
  const done: string[] = [];
  const server = {
    pendingSwitch: pending,
    switchModel: async () => { done.push('switchModel'); },
    restart: async () => { done.push('restart'); },
    setup: { recheck: async () => { done.push('recheck'); } },
  };
  const store = { current: { mode: 'managed', server: 'running', model: 'ready' } };
  const log = { info: () => undefined };
  const sub = reactions.reactToSettings({ onDidChange: changes.event } as never, server as never, store as never, log as never);
  changes.fire({ effect: 'restartServer', keys: ['model'], previous: {} as never });
  await new Promise((r) => setImmediate(r)); // the reaction's awaits are all answered at once
  sub.dispose();
  return done;
}

test('another model chosen while the server runs: the question says a restart is part of the switch; its button switches', async () => {
  fake.rec.answer = 'Restart with GLM-4-9B-Chat';
  assert.deepEqual(await chooseModel(GLM4), ['switchModel']);
  assert.equal(fake.rec.messages.length, 1);
  const [asked] = fake.rec.messages;
  assert.deepEqual(asked!.buttons, ['Restart with GLM-4-9B-Chat']);
  assert.match(asked!.text, /GLM-4-9B-Chat is chosen and the server runs ChatGLM3-6B/);
  assert.match(asked!.text, /switching restarts the server: ChatGLM3-6B is unloaded, the server restarts with GLM-4-9B-Chat's weights and GLM-4-9B-Chat is loaded/);
});

test('the question dismissed: nothing is switched or restarted', async () => {
  fake.rec.answer = undefined;
  assert.deepEqual(await chooseModel(GLM4), []);
  assert.equal(fake.rec.messages.length, 1);
});

test('the running container already serves the chosen model: no switch question', async () => {
  fake.rec.answer = 'Restart with GLM-4-9B-Chat';
  await chooseModel(undefined);
  assert.ok(!fake.rec.messages.some((m) => m.buttons.some((b) => b.startsWith('Restart with'))));
});
