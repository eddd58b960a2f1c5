// What the panel does with links, invisible characters, aligned tables and over-deep nesting in answers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isProtocolError, parseWebviewToHost } from '../../src/protocol';
import { assistant, startHarness, stateMsg, user, type Harness, type Panel, closeChecked } from './support/harness';
import { FAST_FRAMES } from './support/page-scripts';
import { streamText } from './support/stream';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const closePanel = (panel: Panel) => closeChecked(panel);

async function postedChecked(panel: Panel): Promise<unknown[]> {
  const posted = await panel.posted();
  for (const m of posted) assert.ok(!isProtocolError(parseWebviewToHost(m)), `posted a message the host accepts: ${JSON.stringify(m)}`);
  return posted;
}

describe('links', () => {
  const ANSWER = 'See [the docs](https://example.com/docs "Docs") or <https://example.com/auto>.\n\nBad: [trick](https:javascript:alert(1)) and [mail](mailto:javascript:alert(1)).';

  it('are intercepted: click, middle click and Enter post openLink; nothing navigates; blocked links post nothing', async () => {
    const panel = await harness.open();
    const { page } = panel;
    let navigations = 0;
    page.on('framenavigated', () => { navigations += 1; });
    const url = page.url();
    await panel.send(stateMsg([user('u1', 'links?'), assistant('a1', ANSWER)]));
    const docs = page.locator('article[data-id="a1"] a', { hasText: 'the docs' });
    assert.equal(await docs.getAttribute('href'), null, 'no href: nothing for the browser (or VS Code) to follow');
    assert.equal(await docs.getAttribute('role'), 'link');
    assert.equal(await docs.getAttribute('tabindex'), '0');
    assert.equal(await docs.getAttribute('title'), 'https://example.com/docs\nTitle from the answer: Docs', 'the tooltip shows where it goes first, then the answer\'s title');
    await panel.clearPosted();
    await docs.click();
    await docs.click({ button: 'middle' });
    await page.locator('article[data-id="a1"] a', { hasText: 'example.com/auto' }).focus();
    await page.keyboard.press('Enter');
    for (const text of ['trick', 'mail']) await page.locator('article[data-id="a1"] a', { hasText: text }).click();
    assert.deepEqual(await postedChecked(panel), [
      { type: 'openLink', url: 'https://example.com/docs', text: 'the docs' },
      { type: 'openLink', url: 'https://example.com/docs', text: 'the docs' },
      { type: 'openLink', url: 'https://example.com/auto', text: 'https://example.com/auto' },
    ]);
    const dragBlocked = await docs.evaluate((a) => {
      const e = new DragEvent('dragstart', { bubbles: true, cancelable: true });
      a.dispatchEvent(e);
      return e.defaultPrevented;
    });
    assert.equal(dragBlocked, true, 'a link cannot be dragged out of the panel');
    assert.equal(page.url(), url);
    assert.equal(navigations, 0, 'the panel never navigated');
    await closePanel(panel);
  });
});

const TROJAN = [
  '```js',
  'var accessLevel = "user";',
  'if (accessLevel != "user\u202E \u2066// Check if admin\u2069 \u2066") {',
  '    console.log("You are an admin.");',
  '}',
  '```',
  '',
  'Open `\u202Eexe.gnp` and `a\u200Bb\u{E0041}`.',
].join('\n');

describe('invisible and bidirectional control characters', () => {
  it('are marked in code blocks and inline code, named in tooltips, neutralised, and kept for Copy', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', TROJAN)]));
    const marks = await page.evaluate(() => Array.from(document.querySelectorAll('article[data-id="a1"] .invisible-char'))
      .map((m) => [m.getAttribute('data-code-point'), m.getAttribute('title'), m.closest('pre') ? 'block' : 'inline']));
    assert.deepEqual(marks, [
      ['U+202E', 'Invisible character U+202E: RIGHT-TO-LEFT OVERRIDE', 'block'],
      ['U+2066', 'Invisible character U+2066: LEFT-TO-RIGHT ISOLATE', 'block'],
      ['U+2069', 'Invisible character U+2069: POP DIRECTIONAL ISOLATE', 'block'],
      ['U+2066', 'Invisible character U+2066: LEFT-TO-RIGHT ISOLATE', 'block'],
      ['U+202E', 'Invisible character U+202E: RIGHT-TO-LEFT OVERRIDE', 'inline'],
      ['U+200B', 'Invisible character U+200B: ZERO WIDTH SPACE', 'inline'],
      ['U+E0041', 'Invisible character U+E0041: TAG "A"', 'inline'],
    ]);
    // Neutralised: the code reads in its logical order (the closing `") {` after the comment, "exe" before "gnp"),
    // while the same text without markers (a control built in the page) shows the attack's order.
    const layout = await page.evaluate(() => {
      const x = (root: Element, needle: string) => {
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const i = (n as Text).data.indexOf(needle);
          if (i >= 0) { const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + needle.length); return r.getBoundingClientRect().left; }
        }
        return Number.NaN;
      };
      const body = document.querySelector('article[data-id="a1"] .message-body') as HTMLElement;
      const pre = body.querySelector('pre') as HTMLElement;
      const inline = body.querySelector('p code') as HTMLElement;
      const rawPre = document.createElement('pre');
      rawPre.textContent = 'if (accessLevel != "user\u202E \u2066// Check if admin\u2069 \u2066") {';
      const rawCode = document.createElement('code');
      rawCode.textContent = '\u202Eexe.gnp';
      body.append(rawPre, rawCode);
      const out = {
        marked: { check: x(pre, 'Check'), brace: x(pre, ') {'), exe: x(inline, 'exe'), gnp: x(inline, 'gnp') },
        raw: { check: x(rawPre, 'Check'), brace: x(rawPre, ') {'), exe: x(rawCode, 'exe'), gnp: x(rawCode, 'gnp') },
        markerWidth: (body.querySelector('.invisible-char') as HTMLElement).getBoundingClientRect().width,
      };
      rawPre.remove();
      rawCode.remove();
      return out;
    });
    assert.ok(layout.raw.brace < layout.raw.check && layout.raw.gnp < layout.raw.exe, `the control shows the attack: ${JSON.stringify(layout)}`);
    assert.ok(layout.marked.check < layout.marked.brace, `marked: the brace is shown after the comment: ${JSON.stringify(layout)}`);
    assert.ok(layout.marked.exe < layout.marked.gnp, `marked: "exe" is shown before "gnp": ${JSON.stringify(layout)}`);
    assert.ok(layout.markerWidth > 10, 'the marker is visible');
    await panel.clearPosted();
    await page.locator('article[data-id="a1"] button[data-action="codeCopy"]').click();
    const [copy] = await postedChecked(panel) as Array<{ type: string; code: string }>;
    assert.equal(copy!.type, 'copyCode');
    assert.ok(copy!.code.includes('"user\u202E \u2066// Check if admin\u2069 \u2066"'), 'Copy passes the exact code (the host warns first)');
    const copyButton = page.locator('article[data-id="a1"] button[data-action="codeCopy"]');
    assert.equal(await copyButton.getAttribute('title'), 'Copy', 'no "Copied" before the host has asked');
    assert.equal(await copyButton.locator('.codicon-copy').count(), 1, 'no check mark either');
    // localized tooltip
    await panel.send({ type: 'l10n', strings: { invisibleCharacter: '不可见字符 {0}：{1}' } });
    assert.equal(await page.getAttribute('article[data-id="a1"] .invisible-char', 'title'), '不可见字符 U+202E：RIGHT-TO-LEFT OVERRIDE');
    await closePanel(panel);
  });

  it('are marked while a code fence is still streaming', async () => {
    const panel = await harness.open({ init: [FAST_FRAMES] });
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', '', 'streaming')]));
    const open = TROJAN.slice(0, TROJAN.indexOf('\n```\n'));
    await streamText(panel, 'c1', 'a1', open, [5, 30, 60, 61, 62, 90]);
    const streamed = await panel.page.evaluate(() => ({
      marks: Array.from(document.querySelectorAll('article[data-id="a1"] pre.streaming-code .invisible-char')).map((m) => m.getAttribute('data-code-point')),
      text: document.querySelector('article[data-id="a1"] pre.streaming-code')?.textContent ?? '',
    }));
    assert.deepEqual(streamed.marks, ['U+202E', 'U+2066', 'U+2069', 'U+2066']);
    assert.ok(streamed.text.includes('"user\u202E \u2066// Check if admin\u2069 \u2066"'), 'the raw text stays in the DOM');
    await closePanel(panel);
  });
});

describe('large code', () => {
  it('is laid out in line-aligned chunks, and Copy and a selection still give exactly the code', async () => {
    const panel = await harness.open();
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${i}: ${'x'.repeat(i % 40)}\u202E`);
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', `\`\`\`\n${lines.join('\n')}\n\`\`\``)]));
    const shape = await panel.page.evaluate(() => {
      const code = document.querySelector('article[data-id="a1"] pre code') as HTMLElement;
      const range = document.createRange();
      range.selectNodeContents(code);
      const sel = getSelection() as Selection;
      sel.removeAllRanges();
      sel.addRange(range);
      return { groups: code.querySelectorAll(':scope > .code-chunk-group.code-chunk-done').length, chunks: code.querySelectorAll('.code-chunk').length, selected: sel.toString() };
    });
    assert.equal(shape.chunks, Math.ceil(3000 / 64));
    assert.equal(shape.groups, Math.ceil(3000 / 64 / 8));
    assert.equal(shape.selected.replace(/\n$/, ''), lines.join('\n').replace(/\u202E/g, ''), 'a selection copies the lines (the marked characters are not rendered)');
    await panel.clearPosted();
    await panel.page.locator('article[data-id="a1"] button[data-action="codeCopy"]').click();
    assert.deepEqual(await postedChecked(panel), [{ type: 'copyCode', code: lines.join('\n') }]);
    await closePanel(panel);
  });
});

describe('tables and nesting', () => {
  it('keep column alignment through classes the stylesheet defines, with no style attribute or CSP violation', async () => {
    const panel = await harness.open();
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', '| left | center | right | none |\n|:--|:-:|--:|---|\n| a | b | c | d |')]));
    const cells = await panel.page.evaluate(() => Array.from(document.querySelectorAll('article[data-id="a1"] td, article[data-id="a1"] th'))
      .map((c) => [c.tagName, c.getAttribute('class'), c.getAttribute('style'), getComputedStyle(c).textAlign]));
    // (an unaligned header cell keeps the browser's default, centred)
    assert.deepEqual(cells.slice(0, 4), [['TH', 'md-align-left', null, 'left'], ['TH', 'md-align-center', null, 'center'], ['TH', 'md-align-right', null, 'right'], ['TH', null, null, 'center']]);
    assert.deepEqual(cells.slice(4).map((c) => c[3]), ['left', 'center', 'right', 'start']);
    await closePanel(panel);
  });

  it('show content beyond the nesting limit as plain text, and what follows it', async () => {
    const panel = await harness.open();
    const quotes = `${'>'.repeat(150)} deep quote text\n\nafter the quotes`;
    const lists = `${Array.from({ length: 70 }, (_, i) => `${'  '.repeat(i)}- level ${i}`).join('\n')}\n\nafter the lists`;
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', quotes), assistant('a2', lists)]));
    const text = (id: string) => panel.page.textContent(`article[data-id="${id}"] .message-body`);
    assert.match(await text('a1') ?? '', /deep quote text[\s\S]*after the quotes/);
    assert.match(await text('a2') ?? '', /level 0[\s\S]*level 69[\s\S]*after the lists/);
    assert.equal(await panel.page.locator('article[data-id="a1"] .md-nesting-limit').count(), 1);
    await closePanel(panel);
  });
});
