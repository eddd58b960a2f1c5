// A huge answer while it streams keeps the DOM of only a few groups (pieceGroups.ts): finished groups out of view are
// parked (their DOM dropped, their markdown kept), so the elements on the page stay bounded however long the answer
// (counted here, not timed; the frame times are in bench/, webview_max_frame_ms_2mb). A parked group that comes into
// view is rendered again to exactly the DOM it had when it was parked.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { READY_SERVER, startHarness, type Harness } from './support/harness';
import { hugeAnswer, type HugeAnswerKind } from './support/long-block-cost';
import { FAST_FRAMES } from './support/page-scripts';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

/** Delta sizes: 4 KB each, or random sizes up to 8 KB (seeded), cutting anywhere in a row, a cell or a marker. */
function deltaSizes(kind: 'fixed' | 'random', total: number): number[] {
  let seed = 31;
  const sizes: number[] = [];
  for (let sum = 0; sum < total;) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const n = kind === 'fixed' ? 4096 : 1 + ((seed >>> 8) % 8192);
    sizes.push(n);
    sum += n;
  }
  return sizes;
}

describe('parked groups of a huge streaming answer', () => {
  for (const [kind, deltas] of [['wide-table', 'fixed'], ['nested-list', 'random']] as Array<[HugeAnswerKind, 'fixed' | 'random']>) {
    it(`${kind} in ${deltas} deltas: only the groups near the view keep their DOM, and a parked group comes back as it was`, async () => {
      const panel = await harness.open({ init: [FAST_FRAMES] });
      const text = hugeAnswer(kind, 384 * 1024);
      await panel.send({ type: 'state', activeId: 'c', busy: true, modelName: 'ChatGLM3-6B', server: READY_SERVER,
        messages: [{ id: 'q', role: 'user', content: 'huge', status: 'complete' }, { id: 'a', role: 'assistant', content: '', status: 'streaming' }] });
      const during = await panel.page.evaluate(async ({ text, sizes }) => {
        const frame = () => new Promise((r) => requestAnimationFrame(() => r(undefined)));
        const article = document.querySelector('article[data-id="a"]')!;
        // The DOM each group had when it was emptied (a mutation record keeps the removed nodes).
        const before = new Map<Element, string>();
        const watcher = new MutationObserver((records) => {
          for (const r of records) {
            const group = r.target as Element;
            if (!group.classList?.contains('stream-group') || r.removedNodes.length === 0 || before.has(group)) continue;
            before.set(group, Array.from(r.removedNodes, (n) => (n as Element).outerHTML ?? n.textContent).join(''));
          }
        });
        watcher.observe(article, { childList: true, subtree: true });
        let at = 0;
        for (const n of sizes) {
          window.dispatchEvent(new MessageEvent('message', { data: { type: 'delta', conversationId: 'c', messageId: 'a', text: text.slice(at, at + n) } }));
          at += n;
          await frame();
        }
        for (let i = 0; i < 5; i += 1) await frame(); // content-visibility state changes arrive after a frame
        const groups = Array.from(article.querySelectorAll('.stream-group'));
        const parked = groups.filter((g) => g.classList.contains('stream-group-parked'));
        const counts = {
          groups: groups.length,
          parked: parked.length,
          parkedEmpty: parked.filter((g) => g.childNodes.length === 0).length,
          elements: article.querySelectorAll('*').length,
          streamedChars: text.length,
        };
        // Scroll each parked group into view (the newest first) and compare its DOM with what it had.
        const list = document.querySelector('main.messages')!;
        const restored: Array<{ same: boolean; chars: number }> = [];
        for (const g of parked.reverse()) {
          g.scrollIntoView({ block: 'start' });
          list.dispatchEvent(new Event('scroll'));
          for (let i = 0; i < 50 && g.classList.contains('stream-group-parked'); i += 1) await frame();
          const html = before.get(g) ?? '';
          restored.push({ same: g.innerHTML === html && !g.classList.contains('stream-group-parked'), chars: html.length });
        }
        watcher.disconnect();
        return { counts, restored };
      }, { text, sizes: deltaSizes(deltas, text.length) });
      const { counts, restored } = during;
      // 384 KB in groups of about 32 KB: all but the newest finished groups and those in view (a 900 px page) parked.
      assert.ok(counts.groups >= 10, JSON.stringify(counts));
      assert.ok(counts.parked >= counts.groups - 5, JSON.stringify(counts));
      assert.equal(counts.parkedEmpty, counts.parked, 'a parked group holds no DOM');
      assert.ok(restored.length === counts.parked && restored.every((r) => r.same && r.chars > 10_000), JSON.stringify(restored));
      await panel.send({ type: 'messageDone', conversationId: 'c', messageId: 'a', status: 'complete', finishReason: 'stop' });
      await panel.page.waitForFunction(() => document.querySelector('article[data-id="a"]')?.getAttribute('data-render-settled') === 'true');
      // Longer than WHOLE_RENDER_MAX: the answer keeps its groups when it ends (long-answer-end.test.ts).
      assert.equal(await panel.page.locator('article[data-id="a"] .stream-group').count(), counts.groups, 'the groups stay when the answer ends');
      assert.deepEqual(panel.errors, []);
      await panel.page.close();
    });
  }
});
