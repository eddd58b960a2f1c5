// The chat webview's Retry after a lost connection: the host's error names the failed answer, the banner offers
// Retry next to Dismiss, and Retry posts a validated `retry` for that answer (the failed partial answer stays).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isProtocolError, parseHostToWebview, parseWebviewToHost } from '../../src/protocol';
import { assistant, startHarness, stateMsg, user, type Harness } from './support/harness';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const LOST = 'The connection to the server was lost; the answer is incomplete. Retry asks the same question again.';

describe('chat webview: Retry', () => {
  it('a lost connection offers Retry for the failed answer; Retry posts it and clears the banner', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'q1'), assistant('a1', 'half an answer', 'failed', { error: 'connection lost' })]));
    const error = { type: 'error', message: LOST, retry: 'a1' };
    assert.ok(!isProtocolError(parseHostToWebview(error)));
    await panel.send(error);
    const banner = page.locator('.error-banner[role="alert"]');
    assert.equal(await banner.locator('.error-text').textContent(), LOST);
    assert.equal(await banner.locator('button[data-action="retry"]').textContent(), 'Retry');
    // A state update (the answer's final state) does not hide it; the partial answer stays marked.
    await panel.send(stateMsg([user('u1', 'q1'), assistant('a1', 'half an answer', 'failed', { error: 'connection lost' })]));
    assert.match(await page.textContent('article[data-id="a1"] .message-marker') ?? '', /Failed — partial answer/);
    await panel.clearPosted();
    await banner.locator('button[data-action="retry"]').click();
    const posted = await panel.posted();
    assert.deepEqual(posted, [{ type: 'retry', messageId: 'a1' }]);
    assert.ok(!isProtocolError(parseWebviewToHost(posted[0])), 'the host accepts it');
    assert.equal(await page.locator('.error-banner *').count(), 0, 'the banner goes with the retry');
    // Localized: the button follows the host's strings.
    await panel.send({ type: 'l10n', strings: { retry: '重试' } });
    await panel.send(error);
    assert.equal(await banner.locator('button[data-action="retry"]').textContent(), '重试');
    // Other errors have no Retry.
    await panel.send({ type: 'error', message: 'The model is not ready, so questions cannot be sent yet.' });
    assert.equal(await banner.locator('button[data-action="retry"]').count(), 0);
    assert.deepEqual(panel.errors, []);
    await page.close();
  });

  it('the protocol refuses a retry without a valid answer id, and an error whose retry is not an id', () => {
    for (const bad of [{ type: 'retry' }, { type: 'retry', messageId: '' }, { type: 'retry', messageId: '<img>' }, { type: 'retry', messageId: 'a1', extra: 1 }]) {
      assert.ok(isProtocolError(parseWebviewToHost(bad)), JSON.stringify(bad));
    }
    assert.ok(isProtocolError(parseHostToWebview({ type: 'error', message: 'x', retry: 42 })));
    assert.ok(isProtocolError(parseHostToWebview({ type: 'error', message: 'x', retry: 'a b' })));
  });
});
