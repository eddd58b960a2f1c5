// Continue under an answer that did not end by itself: after the length limit and after Stop (or a reload during
// it), on the last answer only, and not offered while the model is not loaded (it could not run).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assistant, startHarness, stateMsg, user, type Harness } from './support/harness';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const go = (id: string) => `article[data-id="${id}"] button[data-action="continueAnswer"]`;

describe('Continue', () => {
  it('a stopped answer offers Continue; an interrupted one too; an empty stopped or a failed one does not', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'Tell me a story'), assistant('a1', 'Once upon a time', 'stopped', { finishReason: 'cancelled' })]));
    assert.equal(await page.isVisible(go('a1')), true, 'Continue under the stopped answer');
    assert.equal(await page.locator('article[data-id="a1"] .message-continue-text').count(), 0, 'no "maximum length" note: the marker says it was stopped');
    await panel.clearPosted();
    await page.click(go('a1'));
    assert.deepEqual(await panel.posted(), [{ type: 'continueAnswer', messageId: 'a1' }]);
    await panel.send(stateMsg([user('u1', 'Tell me a story'), assistant('a1', 'Once upon a time', 'interrupted')]));
    assert.equal(await page.isVisible(go('a1')), true, 'interrupted by a reload');
    await panel.send(stateMsg([user('u1', 'Tell me a story'), assistant('a1', '', 'stopped', { finishReason: 'cancelled' })]));
    assert.equal(await page.locator(go('a1')).count(), 0, 'nothing to continue from');
    await panel.send(stateMsg([user('u1', 'Tell me a story'), assistant('a1', 'Once', 'failed', { error: 'the server went away' })]));
    assert.equal(await page.locator(go('a1')).count(), 0, 'a failed answer is regenerated instead');
    assert.deepEqual(panel.errors, []);
    await page.close();
  });

  it('not offered while the model is unloaded or the server stopped; back once it is ready', async () => {
    const panel = await harness.open();
    const { page } = panel;
    const messages = [user('u1', 'q'), assistant('a1', 'cut here', 'complete', { finishReason: 'length' })];
    await panel.send(stateMsg(messages));
    assert.equal(await page.isVisible(go('a1')), true);
    await panel.send(stateMsg(messages, { server: { server: 'running', model: 'unloaded', actions: ['loadModel'] } }));
    assert.equal(await page.isVisible(go('a1')), false, 'hidden while unloaded');
    assert.match(await page.textContent('article[data-id="a1"] .message-continue') ?? '', /maximum length/, 'the note still says why it ends there');
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', 'stopped here', 'stopped')], { server: { server: 'stopped', model: 'unknown', actions: ['startServer'] } }));
    assert.equal(await page.isVisible('article[data-id="a1"] .message-continue'), false, 'a stopped answer: nothing left to show');
    await panel.send(stateMsg(messages));
    assert.equal(await page.isVisible(go('a1')), true, 'ready again');
    assert.deepEqual(panel.errors, []);
    await page.close();
  });
});
