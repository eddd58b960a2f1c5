// No slanted Chinese (issue #33): the chat panel and the Server Status page keep italics for fonts that have an
// italic face, and never slant CJK text synthetically (its fonts have none). Checked by the pixels: a Chinese text in
// the panel's own italic style renders exactly as the same text upright, while Latin text still turns italic.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHarness, stateMsg, type Harness, type Panel } from './support/harness';
import type { PageName } from './support/harness';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

/** Screenshots of `text` in an element of class `italicClass` inside one of class `outer` (italic in the page's stylesheet), then of the same element set upright. */
async function italicAndUpright(panel: Panel, [outer, italicClass]: readonly [string, string], text: string): Promise<{ italic: Buffer; upright: Buffer; style: string }> {
  const { page } = panel;
  const style = await page.evaluate(([wrap, cls, t]) => {
    const box = document.createElement('div');
    box.className = wrap!;
    box.id = 'probe-box';
    const probe = document.createElement('span');
    probe.className = cls!;
    probe.id = 'probe';
    probe.textContent = t!;
    box.append(probe);
    document.body.prepend(box);
    return getComputedStyle(probe).fontStyle;
  }, [outer, italicClass, text]);
  const italic = await page.locator('#probe').screenshot();
  await page.evaluate(() => { document.getElementById('probe')!.style.fontStyle = 'normal'; });
  const upright = await page.locator('#probe').screenshot();
  await page.evaluate(() => document.getElementById('probe-box')?.remove());
  return { italic, upright, style };
}

async function open(name: PageName): Promise<Panel> {
  // Without the CSP: the probe is set upright by an inline style (the panels themselves use none).
  const panel = await harness.open({ page: name, csp: false });
  if (name === 'chat') await panel.send(stateMsg([]));
  return panel;
}

describe('no italics on CJK text', () => {
  for (const [name, cls] of [['chat', ['markdown', 'md-image-removed']], ['status', ['chart', 'collecting']]] as const) {
    it(`${name}: Chinese in the .${cls.join(' .')} style stays upright; Latin text is still italic`, async () => {
      const panel = await open(name);
      const zh = await italicAndUpright(panel, cls, '环境检查清单：权重文件夹');
      assert.equal(zh.style, 'italic', `.${cls[1]} is an italic style`);
      assert.ok(zh.italic.equals(zh.upright), 'the Chinese text is drawn upright');
      const en = await italicAndUpright(panel, cls, 'Weights folder checklist');
      assert.ok(!en.italic.equals(en.upright), 'Latin text with an italic face is still italic');
      assert.deepEqual(panel.errors, []);
      await panel.page.close();
    });
  }
});
