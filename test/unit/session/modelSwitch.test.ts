// Switching models while our container runs (src/core/session/modelSwitch.ts): the container mounts the chosen
// model's weights, so the switch is one action — unload the served model, stop, start with the new mount, load.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServerHandle } from '../../../src/core/server';
import { pendingModelSwitch, switchModel } from '../../../src/core/session';
import { harness } from './fakes';

test('a switch is pending only while a container started for another model runs', () => {
  assert.equal(pendingModelSwitch(undefined, 'glm-4-9b-chat'), undefined, 'no container: the next start mounts the chosen model');
  assert.equal(pendingModelSwitch('glm-4-9b-chat', 'glm-4-9b-chat'), undefined);
  assert.deepEqual(pendingModelSwitch('chatglm3-6b', 'glm-4-9b-chat'), { from: 'chatglm3-6b', to: 'glm-4-9b-chat', fromName: 'ChatGLM3-6B', toName: 'GLM-4-9B-Chat' });
});

test('switching from ChatGLM3 to GLM-4: unload ChatGLM3, stop, start with GLM-4\'s mount, load GLM-4, in that order', async () => {
  const h = harness({ model: 'chatglm3-6b' });
  h.container.status_ = { state: 'running', handle: { ...(h.container.status_ as { handle: ServerHandle }).handle, model: 'chatglm3-6b' } };
  await h.session.attach();
  assert.equal(h.state.current.model, 'ready');
  const pending = () => h.session.pendingSwitch;
  assert.equal(pending(), undefined);

  h.choose('glm-4-9b-chat');
  assert.equal(pending()?.to, 'glm-4-9b-chat');
  assert.equal(h.session.modelName, 'chatglm3-6b', 'until the restart the running container\'s model is the one served');
  h.client.calls.length = 0;
  h.container.calls.length = 0;
  const unload = h.client.unloadModel.bind(h.client);
  let stoppedBeforeUnload = true;
  h.client.unloadModel = async (name: string) => {
    stoppedBeforeUnload = h.container.calls.includes('stop');
    return unload(name);
  };

  assert.equal(await switchModel(h.session), true);
  assert.deepEqual(h.client.unloadedNames, ['chatglm3-6b'], 'the old model is unloaded by its own name');
  assert.equal(stoppedBeforeUnload, false, 'unloaded while the container still ran');
  assert.deepEqual(h.container.calls.filter((c) => c === 'stop' || c === 'start'), ['stop', 'start']);
  const unloadAt = h.client.calls.indexOf('unload');
  assert.ok(unloadAt >= 0 && unloadAt < h.client.calls.lastIndexOf('load'));
  assert.equal(h.client.loadedNames.at(-1), 'glm-4-9b-chat');
  assert.equal(h.session.modelName, 'glm-4-9b-chat');
  assert.equal(pending(), undefined);
  assert.deepEqual([h.state.current.server, h.state.current.model], ['running', 'ready']);
});
