// The setup checklist's texts name the chosen model and what it needs (src/vscode/server/setupView.ts): with
// GLM-4-9B-Chat chosen and no nvidia-smi, the GPU row says GLM-4's need, not ChatGLM3's 13 GB.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setupModel } from '../../../src/core/session';
import type { SetupMessage } from '../../../src/protocol';
import { preflightReport } from '../session/fakes';
import { createFakeVscode, installVscodeModule } from './support/fakeVscode';

type SetupViewModule = typeof import('../../../src/vscode/server/setupView');

let uninstall: () => void;
let view: SetupViewModule;
before(() => {
  uninstall = installVscodeModule(createFakeVscode({ 'tritonChatglm.model': 'glm-4-9b-chat' }).vscode);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  view = require('../../../src/vscode/server/setupView') as SetupViewModule;
});
after(() => uninstall?.());

test('GLM-4 chosen, no nvidia-smi: the GPU row names GLM-4-9B-Chat and the memory it needs', () => {
  const report = preflightReport({ 'gpu-memory': { level: 'unknown', unknownReason: 'no-nvidia-smi', facts: { requiredMiB: 20_000 } } as never });
  const model = setupModel({ state: { mode: 'managed', server: 'stopped', model: 'unloaded' }, report, checking: false, building: false });
  const message = view.setupMessage(model, { mode: 'managed', server: 'stopped', model: 'unloaded' }) as SetupMessage;
  const gpu = message.setup.items.find((i) => i.id === 'gpu-memory');
  assert.equal(gpu?.detail, 'Unknown: nvidia-smi is not installed here; loading the model shows whether it fits (GLM-4-9B-Chat needs about 19.5 GB).');
});
