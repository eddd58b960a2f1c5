// Which catalog model is chosen and what follows from it (src/core/models/choice.ts): the entry name Triton serves
// it under, its container weights folder, the mount and container label, and the "loaded model" lookup that
// features depending on the model (fill-in-the-middle completion) read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  chosenModel, containerWeightsDir, isModelId, loadedModelEntry, MODEL_IDS, modelEntryName, modelTitle, UnknownModelError,
} from '../../../src/core/models/choice';
import { buildRunArgs, LABELS, resolveSettings, weightsMount } from '../../../src/core/server';

test('the choice: empty or absent is the default, a catalog id is that model, anything else is refused by name', () => {
  assert.deepEqual(MODEL_IDS, ['chatglm3-6b', 'glm-4-9b-chat', 'codegeex4-all-9b']);
  assert.equal(chosenModel(undefined).id, 'chatglm3-6b');
  assert.equal(chosenModel('').id, 'chatglm3-6b');
  assert.equal(chosenModel('glm-4-9b-chat').displayName, 'GLM-4-9B-Chat');
  assert.throws(() => chosenModel('GLM-4'), (e: unknown) => e instanceof UnknownModelError && /choose one of chatglm3-6b, glm-4-9b-chat, codegeex4-all-9b/.test(e.message));
  assert.equal(isModelId('codegeex4-all-9b'), true);
  assert.equal(isModelId('../chatglm3-6b'), false);
  assert.equal(isModelId(undefined), false);
});

test('each model has its own entry name and container weights folder', () => {
  for (const id of MODEL_IDS) {
    assert.equal(modelEntryName(chosenModel(id)), id);
    assert.equal(containerWeightsDir(chosenModel(id)), `/weights/${id}`);
  }
  assert.deepEqual(weightsMount('/data/glm4', 'glm-4-9b-chat'), { source: '/data/glm4', target: '/weights/glm-4-9b-chat', weightsPath: '/weights/glm-4-9b-chat' });
  // A Hub cache snapshot is mounted whole, whichever the model.
  assert.equal(weightsMount('/c/models--THUDM--glm-4-9b-chat/snapshots/abc', 'glm-4-9b-chat').weightsPath, '/weights/hub-repository/snapshots/abc');
});

test('the container is labelled with its model and mounts that model\'s folder; an unknown model is a settings error', () => {
  const s = resolveSettings({ weightsPath: '/data/glm4', repositoryPath: '/repo', model: 'glm-4-9b-chat' });
  const args = buildRunArgs(s, 'k');
  assert.ok(args.includes(`${LABELS.model}=glm-4-9b-chat`));
  assert.ok(args.includes('/data/glm4:/weights/glm-4-9b-chat:ro'));
  assert.throws(() => resolveSettings({ weightsPath: '/data', repositoryPath: '/repo', model: 'gpt-4' }), /Invalid setting "model"/);
});

test('the loaded model\'s catalog entry (fill-in-the-middle), and how a model is named to people', () => {
  assert.equal(loadedModelEntry(['other', 'codegeex4-all-9b'])?.fillInMiddle, true);
  assert.equal(loadedModelEntry(['glm-4-9b-chat'])?.fillInMiddle, false);
  assert.equal(loadedModelEntry([]), undefined);
  assert.equal(modelTitle('glm-4-9b-chat'), 'GLM-4-9B-Chat (glm-4-9b-chat)');
  assert.equal(modelTitle('custom'), 'custom');
});
