// Download Weights in VS Code asks for the model's licence once per model (#29): the first download's confirmation
// reads "Accept Licence and Download" and remembers the acceptance (globalState); a later download of the same model
// shows the licence again but asks nothing; another model is asked for its own. The real downloader
// (src/vscode/server/weightsDownload.ts) against the fake Hub, each download into a fresh Hugging Face cache.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fakeHubSuite } from '../weights/support/fakeHubSuite';
import { createFakeVscode, installVscodeModule } from './support/fakeVscode';

interface FakeHub { endpoint: string; reset(): void; close(): Promise<unknown> }
type DownloadModule = typeof import('../../../src/vscode/server/weightsDownload');
type SettingsModule = typeof import('../../../src/vscode/config/settingsService');
type LogModule = typeof import('../../../src/vscode/log');

const suite = fakeHubSuite<{ startFakeHub(o?: object): Promise<FakeHub> }, FakeHub>('licence-once-');
const config: Record<string, unknown> = { 'tritonChatglm.model': 'chatglm3-6b' };
const fake = createFakeVscode(config);
let uninstall: () => void;
let mod: { download: DownloadModule; settings: SettingsModule; log: LogModule };
const savedEnv = { HF_HUB_CACHE: process.env.HF_HUB_CACHE, HF_HOME: process.env.HF_HOME };

before(() => {
  uninstall = installVscodeModule(fake.vscode);
  /* eslint-disable @typescript-eslint/no-require-imports */
  mod = {
    download: require('../../../src/vscode/server/weightsDownload') as DownloadModule,
    settings: require('../../../src/vscode/config/settingsService') as SettingsModule,
    log: require('../../../src/vscode/log') as LogModule,
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
});
after(() => {
  uninstall?.();
  for (const [k, v] of Object.entries(savedEnv)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
});

/** globalState as VS Code keeps it for the extension. */
function memento() {
  const values = new Map<string, unknown>();
  return {
    values,
    keys: () => [...values.keys()],
    get: <T>(key: string, fallback?: T) => (values.has(key) ? values.get(key) as T : fallback),
    update: async (key: string, value: unknown) => { values.set(key, value); },
  };
}

/** One Download Weights into an empty cache, the confirmation answered with `answer`; its modal and result. */
async function downloadOnce(state: ReturnType<typeof memento>, model: string, answer: string) {
  const cache = suite.tmp();
  process.env.HF_HUB_CACHE = cache;
  process.env.HF_HOME = suite.tmp();
  config['tritonChatglm.model'] = model;
  config['tritonChatglm.hubEndpoint'] = suite.hub.endpoint;
  config['tritonChatglm.weightsPath'] = '';
  fake.rec.answer = answer;
  const settings = new mod.settings.SettingsService();
  const downloader = new mod.download.WeightsDownloader(settings, undefined, new mod.log.Log('licence-once'), state as never);
  const modals = fake.rec.modals.length;
  try {
    const dir = await downloader.run();
    const asked = fake.rec.modals.slice(modals);
    assert.equal(asked.length, 1, 'one confirmation');
    return { dir, modal: asked[0]!, cache };
  } finally {
    downloader.dispose();
    settings.dispose();
  }
}

test('the licence is accepted once per model: the next download of it shows the licence and asks nothing', async () => {
  const state = memento();
  const first = await downloadOnce(state, 'chatglm3-6b', 'Accept Licence and Download');
  assert.deepEqual(first.modal.buttons, ['Accept Licence and Download', 'Read Licence']);
  assert.match(first.modal.detail ?? '', /Downloading means accepting this licence \(asked once for ChatGLM3-6B\)\./);
  assert.ok(first.dir && existsSync(join(first.dir, 'config.json')), `downloaded: ${first.dir}`);
  assert.equal(state.get('tritonChatglm.licenseAccepted.chatglm3-6b'), true, 'the acceptance is remembered');

  // Again, into an empty cache (so nothing is offered from the first one): the licence is shown, not asked.
  const second = await downloadOnce(state, 'chatglm3-6b', 'Download');
  assert.deepEqual(second.modal.buttons, ['Download', 'Read Licence']);
  assert.match(second.modal.detail ?? '', /Licence: /);
  assert.doesNotMatch(second.modal.detail ?? '', /accepting this licence/);
  assert.ok(second.dir && second.dir.startsWith(second.cache) && existsSync(join(second.dir, 'config.json')));

  // Another model has a licence of its own: asked for it, and a plain Download does not count as accepting it.
  const other = await downloadOnce(state, 'glm-4-9b-chat', 'Download');
  assert.deepEqual(other.modal.buttons, ['Accept Licence and Download', 'Read Licence']);
  assert.equal(other.dir, undefined, 'nothing downloaded without accepting GLM-4\'s licence');
  assert.equal(state.get('tritonChatglm.licenseAccepted.glm-4-9b-chat'), undefined);
});
