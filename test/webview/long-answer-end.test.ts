// The end of an answer longer than WHOLE_RENDER_MAX (issue 31, item 18): rendering 2 MB again as a whole took
// 1.2-1.7 s in one task, so such an answer keeps its streamed groups. Counted here, not timed: the markdown rendered
// when it ends is only its rest, groups parked before the end stay parked, and once every group has come back into
// view the answer shows the same text and the same live links as its one-shot render. A block cut inside a paragraph
// keeps its links inactive, saying why (a link there could have turned into code across a cut).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_STRINGS } from '../../src/protocol';
import { WHOLE_RENDER_MAX } from '../../src/webview/chat/streaming';
import { assistant, READY_SERVER, startHarness, stateMsg, user, type Harness, type Panel } from './support/harness';
import { hugeAnswer, longBlock, type HugeAnswerKind } from './support/long-block-cost';
import { FAST_FRAMES } from './support/page-scripts';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const DELTA = 4096;

interface Shown { text: string; live: string[]; pending: number; titles: string[] }

/** The page script that tells what an element shows (see Shown), installed on each page. */
const SHOWN_SCRIPT = `window.__shown = (root) => {
  const clone = root.cloneNode(true);
  for (const t of clone.querySelectorAll('.code-toolbar')) t.remove();
  const pending = Array.from(root.querySelectorAll('a.link-pending'));
  return {
    text: (clone.textContent || '').replace(/\\s+/g, ''),
    live: Array.from(root.querySelectorAll('a[data-href]'), (a) => a.getAttribute('data-href')),
    pending: pending.length,
    titles: pending.map((a) => (a.getAttribute('title') || '').split('\\n').pop()),
  };
};`;

type ShownFn = (root: Element) => Shown;

function summary(parts: Shown[]): Shown {
  return {
    text: parts.map((p) => p.text).join(''),
    live: parts.flatMap((p) => p.live).sort(),
    pending: parts.reduce((n, p) => n + p.pending, 0),
    titles: [...new Set(parts.flatMap((p) => p.titles))],
  };
}

async function oneShot(text: string): Promise<Shown> {
  const panel = await harness.open({ init: [SHOWN_SCRIPT] });
  await panel.send(stateMsg([user('q', 'huge'), assistant('a', text)]));
  const out = await panel.page.evaluate(() => (window as unknown as { __shown: ShownFn }).__shown(document.querySelector('article[data-id="a"] .message-body')!));
  await panel.page.close();
  return summary([out]);
}

/** Streams `text` in 4 KB deltas, one a frame, and ends it; what the page held before and after the end. */
async function streamAndEnd(panel: Panel, text: string) {
  await panel.send({ type: 'state', activeId: 'c', busy: true, modelName: 'ChatGLM3-6B', server: READY_SERVER,
    messages: [{ id: 'q', role: 'user', content: 'huge', status: 'complete' }, { id: 'a', role: 'assistant', content: '', status: 'streaming' }] });
  return panel.page.evaluate(async ({ text, perFrame }) => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => r(undefined)));
    const article = document.querySelector('article[data-id="a"]') as HTMLElement;
    for (let i = 0; i < text.length; i += perFrame) {
      window.dispatchEvent(new MessageEvent('message', { data: { type: 'delta', conversationId: 'c', messageId: 'a', text: text.slice(i, i + perFrame) } }));
      await frame();
    }
    for (let i = 0; i < 5; i += 1) await frame(); // content-visibility state changes arrive after a frame
    const groupsBefore = Array.from(article.querySelectorAll('.stream-group'));
    const parkedBefore = groupsBefore.filter((g) => g.classList.contains('stream-group-parked'));
    window.dispatchEvent(new MessageEvent('message', { data: { type: 'messageDone', conversationId: 'c', messageId: 'a', status: 'complete', finishReason: 'stop' } }));
    for (let i = 0; i < 500 && article.dataset.renderSettled !== 'true'; i += 1) await frame();
    for (let i = 0; i < 5; i += 1) await frame();
    const groupsAfter = Array.from(article.querySelectorAll('.stream-group'));
    const result = {
      groupsBefore: groupsBefore.length,
      parkedBefore: parkedBefore.length,
      groupsKept: groupsBefore.filter((g) => groupsAfter.includes(g)).length,
      stillParked: parkedBefore.filter((g) => g.isConnected && g.classList.contains('stream-group-parked')).length,
      finalizeChars: Number(article.dataset.renderFinalizeChars),
      settled: article.dataset.renderSettled,
      maxFrameChars: Number(article.dataset.renderMaxFrameChars),
      maxRefreshChars: Number(article.dataset.renderMaxRefreshChars),
    };
    // Each group into view in turn (others park again meanwhile): what it shows once back.
    const list = document.querySelector('main.messages')!;
    const shownFn = (window as unknown as { __shown: ShownFn }).__shown;
    const parts: Shown[] = [];
    for (const g of groupsAfter) {
      g.scrollIntoView({ block: 'start' });
      list.dispatchEvent(new Event('scroll'));
      for (let i = 0; i < 50 && g.classList.contains('stream-group-parked'); i += 1) await frame();
      if (g.classList.contains('stream-group-parked')) throw new Error('a parked group did not come back');
      parts.push(shownFn(g));
    }
    const rest = article.querySelector('.message-body')!.cloneNode(true) as HTMLElement;
    for (const g of Array.from(rest.querySelectorAll('.stream-group'))) g.remove();
    parts.push(shownFn(rest));
    return { ...result, parts };
  }, { text, perFrame: DELTA });
}

type Ended = Awaited<ReturnType<typeof streamAndEnd>>;
const counts = ({ parts: _, ...rest }: Ended) => JSON.stringify(rest);

describe('the end of an answer longer than WHOLE_RENDER_MAX', () => {
  for (const kind of ['nested-list', 'wide-table'] as HugeAnswerKind[]) {
    it(`${kind}: only its rest is rendered when it ends, parked groups stay parked, and it shows what the one-shot render shows`, async () => {
      const text = hugeAnswer(kind, 3 * WHOLE_RENDER_MAX);
      const panel = await harness.open({ init: [FAST_FRAMES, SHOWN_SCRIPT] });
      const end = await streamAndEnd(panel, text);
      // 384 KB in groups of about 32 KB; before this change the end rendered all 384 KB and replaced every group.
      assert.ok(end.groupsBefore >= 10 && end.parkedBefore >= end.groupsBefore - 5, counts(end));
      assert.equal(end.groupsKept, end.groupsBefore, `no group was replaced: ${counts(end)}`);
      assert.equal(end.stillParked, end.parkedBefore, `parked groups stay parked: ${counts(end)}`);
      assert.equal(end.settled, 'true');
      // The rest after the last cut: under the hard cut limit (16 KB) plus one delta.
      assert.ok(end.finalizeChars > 0 && end.finalizeChars <= 16_384 + DELTA, counts(end));
      // After the end, a frame renders at most one group again (about 32 KB, plus the rest in the last one); none when
      // every group holding DOM was out of view by then (parked instead).
      assert.ok(end.maxRefreshChars <= 32_768 + 16_384 + DELTA, counts(end));
      const [streamed, whole] = [summary(end.parts), await oneShot(text)];
      assert.equal(streamed.text, whole.text, 'the same text as the one-shot render');
      assert.deepEqual(streamed.live, whole.live, 'the same live links as the one-shot render');
      if (kind === 'nested-list') assert.ok(whole.live.length > 1000, `the list has links: ${whole.live.length}`);
      assert.equal(streamed.pending, 0, 'no link left inactive: the list and the table were cut only between items and rows');
      assert.deepEqual(panel.errors, []);
      await panel.page.close();
    });
  }

  it('a paragraph cut between words keeps its links inactive, saying why', async () => {
    const text = longBlock('paragraph', 2 * WHOLE_RENDER_MAX);
    const panel = await harness.open({ init: [FAST_FRAMES, SHOWN_SCRIPT] });
    const end = await streamAndEnd(panel, text);
    assert.equal(end.settled, 'true');
    assert.equal(end.groupsKept, end.groupsBefore, counts(end));
    const [streamed, whole] = [summary(end.parts), await oneShot(text)];
    assert.equal(streamed.text, whole.text);
    assert.deepEqual(streamed.live, [], 'no link of a paragraph cut between words opens');
    assert.equal(streamed.pending, whole.live.length);
    assert.deepEqual(streamed.titles, [DEFAULT_STRINGS.linkUnchecked]);
    assert.deepEqual(panel.errors, []);
    await panel.page.close();
  });
});
