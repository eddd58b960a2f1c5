// The chat panel names the model the host says it serves (the state's modelName), not ChatGLM3 always (#29): the
// input's placeholder and label, the Send tooltip, the model's state line, the setup box's title, and each
// answer's role label (the model that wrote it, else the state's model for answers saved before they named it).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assistant, startHarness, stateMsg, user, type Harness, type Panel, closeChecked } from './support/harness';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const close = (panel: Panel) => closeChecked(panel);

const GLM4 = { modelName: 'GLM-4-9B-Chat' };
const role = (panel: Panel, id: string) => panel.page.textContent(`article[data-id="${id}"] .message-role`);

describe('the model the panel names', () => {
  it('GLM-4 served: placeholder, input label, Send tooltip and the loading line say GLM-4-9B-Chat', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([], { ...GLM4, server: { server: 'running', model: 'loading', actions: [] } }));
    assert.equal(await page.getAttribute('textarea.input', 'placeholder'), 'Ask GLM-4-9B-Chat (# for context, / for commands)');
    assert.equal(await page.getAttribute('textarea.input', 'aria-label'), 'Message to GLM-4-9B-Chat');
    assert.equal(await page.getAttribute('button[data-action="send"]', 'title'), 'Send (Enter) once GLM-4-9B-Chat is ready');
    assert.deepEqual(await page.locator('.server-status .server-line').allTextContents(), ['The Triton server is running.', 'Loading GLM-4-9B-Chat…']);
    await panel.send(stateMsg([], { ...GLM4, server: { server: 'running', model: 'failed', actions: ['loadModel'] } }));
    assert.equal(await page.locator('.server-status .server-line').nth(1).textContent(), 'GLM-4-9B-Chat failed to load.');
    await panel.send({ type: 'setup', setup: { visible: true, phase: 'running', checking: false, summary: 'The server is running.', items: [], primary: 'startChatglm' } });
    assert.equal(await page.textContent('.setup-title'), 'GLM-4-9B-Chat is not loaded');
    await close(panel);
  });

  it('answers are labelled with the model that wrote them; older ones with the state\'s model, and follow it', async () => {
    const panel = await harness.open();
    const { page } = panel;
    const messages = [
      user('u1', 'first'), assistant('a1', 'saved before answers named their model'),
      user('u2', 'second'), assistant('a2', 'from ChatGLM3', 'complete', { model: 'ChatGLM3-6B (chatglm3-6b)', modelName: 'ChatGLM3-6B' }),
      user('u3', 'third'), assistant('a3', 'from GLM-4', 'complete', { model: 'GLM-4-9B-Chat (glm-4-9b-chat)', modelName: 'GLM-4-9B-Chat' }),
    ];
    await panel.send(stateMsg(messages, GLM4));
    assert.equal(await role(panel, 'u1'), 'You');
    assert.equal(await role(panel, 'a1'), 'GLM-4-9B-Chat');
    assert.equal(await role(panel, 'a2'), 'ChatGLM3-6B');
    assert.equal(await role(panel, 'a3'), 'GLM-4-9B-Chat');
    // Another model served since: the answer without a name follows; the others keep their writers' names.
    await panel.send(stateMsg(messages, { modelName: 'CodeGeeX4-ALL-9B' }));
    assert.equal(await role(panel, 'a1'), 'CodeGeeX4-ALL-9B');
    assert.equal(await role(panel, 'a2'), 'ChatGLM3-6B');
    assert.equal(await role(panel, 'a3'), 'GLM-4-9B-Chat');
    assert.equal(await page.getAttribute('textarea.input', 'placeholder'), 'Ask CodeGeeX4-ALL-9B (# for context, / for commands)');
    await close(panel);
  });

  it('in Chinese: the translated templates get the model\'s name', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send({ type: 'l10n', strings: { inputPlaceholder: '向 {0} 提问（# 添加上下文，/ 使用命令）', 'model.unloaded': '{0} 未加载。' } });
    await panel.send(stateMsg([], { ...GLM4, server: { server: 'running', model: 'unloaded', actions: ['loadModel'] } }));
    assert.equal(await page.getAttribute('textarea.input', 'placeholder'), '向 GLM-4-9B-Chat 提问（# 添加上下文，/ 使用命令）');
    assert.equal(await page.locator('.server-status .server-line').nth(1).textContent(), 'GLM-4-9B-Chat 未加载。');
    await close(panel);
  });

  it('a role name the protocol refuses (empty) drops the message: nothing is rendered from it', async () => {
    const panel = await harness.open();
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', 'a', 'complete', { modelName: '' })], GLM4));
    assert.equal(await panel.page.locator('article.message').count(), 0);
    assert.deepEqual(panel.errors, []);
    await panel.page.close();
  });
});
