// The load's progress notification in the user's words: the session's steps and the model's own progress lines
// become phases ("file 3 of 7", "warming up"); Triton's raw log lines never reach the notification.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createFakeVscode, installVscodeModule } from './support/fakeVscode';

const fake = createFakeVscode({});
let uninstall: () => void;
before(() => { uninstall = installVscodeModule(fake.vscode); });
after(() => uninstall?.());

test('load progress: titled with the model served, phases from the steps and the model\'s lines, raw Triton lines left out', async () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createSessionUi } = require('../../../src/vscode/server/sessionUi') as typeof import('../../../src/vscode/server/sessionUi');
  const logged: string[] = [];
  const log = { info: (m: string) => logged.push(m), warn: () => undefined, error: () => undefined, debug: () => undefined } as never;
  const ui = createSessionUi(log, () => 'GLM-4-9B-Chat');
  await ui.progress('load', async (report) => {
    report.step('writing-config');
    report.step('loading-weights');
    report.detail('TRITONBACKEND_ModelInstanceInitialize: chatglm3-6b_0_0 (GPU device 0)');
    report.loadProgress({ state: 'LOADING' } as never);
    report.detail('chatglm3: loading weights 3/7 (model-00003-of-00007.safetensors)');
    report.detail('successfully loaded \'chatglm3-6b\'');
    report.detail('chatglm3: engine native on cuda:0, scheduler continuous, decoupled=True');
  }, new AbortController().signal);
  const entry = fake.rec.progress.at(-1)!;
  assert.equal(entry.title, 'Loading GLM-4-9B-Chat');
  const shown = entry.messages.map((m) => m.replace(/ \(\d+ s\)$/, ''));
  assert.deepEqual(shown, [
    'Writing the model configuration',
    'Loading the weights onto the GPU',
    'Loading the weights onto the GPU: file 3 of 7',
    'Warming up: the model answers its first test requests',
  ]);
  assert.ok(entry.messages.every((m) => !/TRITONBACKEND|successfully loaded|Triton reports/.test(m)));
});
