// A huge answer (issue 31: 2 MB of nested lists or a wide table froze the panel for seconds per frame) streams with
// bounded work per frame: each frame renders only about the delta and the open rest (counted in characters of
// markdown rendered per frame, not timed), and what is already rendered sits in groups of which only the last is
// laid out on every frame (the others have content-visibility: auto). Timings are in bench/ (webview_max_frame_ms_2mb).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_STRINGS } from '../../src/protocol';
import { WHOLE_RENDER_MAX } from '../../src/webview/chat/streaming';
import { assistant, READY_SERVER, startHarness, stateMsg, user, type Harness } from './support/harness';
import { hugeAnswer, type HugeAnswerKind } from './support/long-block-cost';
import { FAST_FRAMES } from './support/page-scripts';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const DELTA = 4096;

describe('a huge answer while it streams', () => {
  for (const kind of ['nested-list', 'wide-table'] as HugeAnswerKind[]) {
    it(`${kind}: each frame renders about one delta, and finished groups are left to content-visibility`, async () => {
      const panel = await harness.open({ init: [FAST_FRAMES] });
      const text = hugeAnswer(kind, 256 * 1024);
      await panel.send({ type: 'state', activeId: 'c', busy: true, modelName: 'ChatGLM3-6B', server: READY_SERVER,
        messages: [{ id: 'q', role: 'user', content: 'huge', status: 'complete' }, { id: 'a', role: 'assistant', content: '', status: 'streaming' }] });
      const during = await panel.page.evaluate(async ({ text, perFrame }) => {
        const frame = () => new Promise((r) => requestAnimationFrame(() => r(undefined)));
        for (let i = 0; i < text.length; i += perFrame) {
          window.dispatchEvent(new MessageEvent('message', { data: { type: 'delta', conversationId: 'c', messageId: 'a', text: text.slice(i, i + perFrame) } }));
          await frame();
        }
        const article = document.querySelector('article[data-id="a"]')!;
        const groups = Array.from(article.querySelectorAll('.stream-group'));
        return {
          groups: groups.length,
          open: groups.filter((g) => !g.classList.contains('stream-group-done')).length,
          skippable: groups.filter((g) => getComputedStyle(g).contentVisibility === 'auto').length,
        };
      }, { text, perFrame: DELTA });
      // 256 KB in groups of about 32 KB: at least six finished ones, and one open group per container at most.
      assert.ok(during.groups >= 7, JSON.stringify(during));
      assert.ok(during.open <= 2, JSON.stringify(during));
      assert.equal(during.skippable, during.groups - during.open);
      await panel.send({ type: 'messageDone', conversationId: 'c', messageId: 'a', status: 'complete', finishReason: 'stop' });
      await panel.page.waitForFunction(() => document.querySelector('article[data-id="a"]')?.getAttribute('data-render-settled') === 'true');
      const d = await panel.page.locator('article[data-id="a"]').evaluate((e) => ({ ...(e as HTMLElement).dataset }));
      assert.ok(Number(d.renderFrames) >= text.length / DELTA, JSON.stringify(d));
      // The delta, the rest of the open block (under 2 KB before a cut is looked for) and a table's header rows.
      assert.ok(Number(d.renderMaxFrameChars) <= DELTA + 2048 + 1024, JSON.stringify(d));
      // Longer than WHOLE_RENDER_MAX: it keeps its groups when it ends (long-answer-end.test.ts).
      assert.ok(text.length > WHOLE_RENDER_MAX);
      assert.equal(await panel.page.locator('article[data-id="a"] .stream-group').count(), during.groups, 'the groups stay when the answer ends');
      assert.deepEqual(panel.errors, []);
      await panel.page.close();
    });
  }
});

describe('links that do not open say why', () => {
  it('a 100 KB link and a refused scheme: inactive, with the reason in the tooltip; a streaming one: pending, saying so', async () => {
    const panel = await harness.open();
    const long = `https://example.com/${'a'.repeat(100 * 1024)}`;
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', `See [the long one](${long} "its title") and [this](ftp://example.com/x).`)]));
    const links = await panel.page.locator('article[data-id="a1"] a').evaluateAll((els) => els.map((e) => ({
      cls: e.getAttribute('class'), title: e.getAttribute('title'), href: e.getAttribute('data-href'), text: e.textContent,
    })));
    assert.deepEqual(links, [
      { cls: 'link-inactive', title: 'This link does not open: it is longer than 8,192 characters.\nTitle from the answer: its title', href: null, text: 'the long one' },
      { cls: 'link-inactive', title: DEFAULT_STRINGS.linkInactiveRefused, href: null, text: 'this' },
    ]);
    await panel.send(stateMsg([user('u1', 'q'), assistant('a2', 'Partly [here](https://example.com/p) and more', 'streaming')]));
    const pending = panel.page.locator('article[data-id="a2"] a.link-pending');
    await pending.waitFor();
    assert.equal(await pending.getAttribute('title'), `https://example.com/p\n${DEFAULT_STRINGS.linkPending}`);
    assert.deepEqual(panel.errors, []);
    await panel.page.close();
  });
});
