// The chat panel at the narrowest side bar (300 px): a table wider than the panel scrolls sideways inside its answer
// and no word of a cell is split over two lines ("Depende|ncies" before), while prose still wraps between words.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assistant, startHarness, stateMsg, user, type Harness } from './support/harness';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const TABLE = [
  'The helpers:',
  '',
  '| Function | Dependencies | Returns | Complexity |',
  '|---|---|---|---|',
  '| `circle_area(radius)` | `math.pi` | the area of the circle | constant |',
  '| `hypotenuse(a, b)` | `math.sqrt` | the length of the hypotenuse | constant |',
  '| `mean(values)` | none | the arithmetic average | linear |',
].join('\n');

describe('narrow panel', () => {
  it('at 300 px a wide table scrolls sideways and splits no word', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await page.setViewportSize({ width: 300, height: 700 });
    await panel.send(stateMsg([user('u1', 'Which helpers are there?'), assistant('a1', TABLE)]));
    const table = page.locator('article[data-id="a1"] table');
    await table.waitFor();
    // Every word of every cell on one line: each word's range has one line box.
    const split = await table.evaluate((t) => {
      const out: string[] = [];
      const walker = document.createTreeWalker(t, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const text = n.textContent ?? '';
        for (const m of text.matchAll(/\S+/g)) {
          const r = document.createRange();
          r.setStart(n, m.index);
          r.setEnd(n, m.index + m[0].length);
          const lines = new Set(Array.from(r.getClientRects()).map((rect) => Math.round(rect.top)));
          if (lines.size > 1) out.push(m[0]);
        }
      }
      return out;
    });
    assert.deepEqual(split, [], 'words split over lines');
    const box = await table.evaluate((t) => ({ scroll: t.scrollWidth, client: t.clientWidth, overflowX: getComputedStyle(t).overflowX, right: t.getBoundingClientRect().right }));
    assert.ok(box.scroll > box.client, `the table is wider than the panel and scrolls (${box.scroll} > ${box.client})`);
    assert.equal(box.overflowX, 'auto');
    assert.ok(box.right <= 300, `the table's box stays inside the panel (right edge ${box.right})`);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'the panel itself does not scroll sideways');
    const dir = join(__dirname, '../../test-results/webview');
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, 'narrow-table.png') });
    assert.deepEqual(panel.errors, []);
    await page.close();
  });
});
