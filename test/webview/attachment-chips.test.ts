// The attachment chips of the chat webview in headless Chromium under the extension's CSP, driven through the real
// protocol: chips above the input (active file toggle, removable chips, Add File…), chips with a sent question,
// the question put back when the host did not send it, malformed chip messages dropped, and the Chinese strings.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_STRINGS } from '../../src/protocol';
import { assistant, startHarness, stateMsg, user, type Harness, type Panel, closeChecked } from './support/harness';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const closePanel = (panel: Panel) => closeChecked(panel, 'the chips work without violating the CSP');

const selectionChip = { id: 'att-1', kind: 'selection', path: 'src/geometry.py', fullPath: '/home/dev/project/src/geometry.py', startLine: 3, endLine: 4, tokens: 42 };
const fileChip = { id: 'att-2', kind: 'file', path: 'docs/a-rather-long-file-name-that-has-to-be-shortened-in-a-narrow-panel.md', fullPath: '/home/dev/project/docs/a-rather-long-file-name-that-has-to-be-shortened-in-a-narrow-panel.md', tokens: 900 };
const activeFile = { path: 'src/geometry.py', fullPath: '/home/dev/project/src/geometry.py', enabled: true, untrusted: false, tokens: 120 };
const chipsMessage = (over: Record<string, unknown> = {}) => ({ type: 'attachments', items: [selectionChip, fileChip], activeFile, ...over });

/** What each chip reads (its glyphs, such as the ×, and its token figure left out: see chipTokens). */
const chipTexts = (panel: Panel, scope: string) => panel.page.locator(`${scope} .attachment-chip`).evaluateAll((els) => els.map((e) => {
  const copy = e.cloneNode(true) as Element;
  for (const g of Array.from(copy.querySelectorAll('.chip-glyph, .chip-tokens'))) g.remove();
  return (copy.textContent ?? '').trim();
}));

describe('attachment chips', () => {
  it('above the input: Add File…, the current file as a toggle, then each attachment with name, lines and a ×', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([]));
    // Before the host says anything: only Add File….
    assert.deepEqual(await chipTexts(panel, '.composer .attachment-bar'), []);
    assert.equal(await page.textContent('.composer .attachment-add'), `+${DEFAULT_STRINGS.addFile}`);
    assert.equal(await page.locator('#root svg').count(), 0, 'no SVG in the panel');
    await panel.send(chipsMessage());
    // The bar sits in the composer, above the input.
    assert.ok(await page.evaluate(() => {
      const bar = document.querySelector('.composer .attachment-bar')!;
      return !!(bar.compareDocumentPosition(document.querySelector('.composer textarea')!) & Node.DOCUMENT_POSITION_FOLLOWING);
    }));
    assert.deepEqual(await chipTexts(panel, '.composer'), [
      'geometry.pycurrent file',
      'geometry.py:3-4',
      'a-rather-long-file-name-that-has-to-be-shortened-in-a-narrow-panel.md',
    ]);
    // Each attached chip shows its tokens on itself (issue #20: a 19k-token chip must not look like a 62-token one).
    assert.deepEqual(await page.locator('.composer .attachment-chip .chip-tokens').allTextContents(), ['· 42 tokens', '· 900 tokens']);
    const active = page.locator('.composer button.attachment-chip.active-file');
    assert.equal(await active.getAttribute('aria-pressed'), 'true');
    assert.match(await active.getAttribute('title') ?? '', /^\/home\/dev\/project\/src\/geometry\.py\nThe current file goes with the question\. Click to leave it out\.\nabout 120 tokens$/);
    const selection = page.locator('.composer .attachment-chip[data-id="att-1"]');
    assert.equal(await selection.getAttribute('title'), '/home/dev/project/src/geometry.py\nlines 3–4\nabout 42 tokens');
    assert.equal(await selection.locator('.chip-remove').getAttribute('aria-label'), 'Remove geometry.py:3-4');

    // Every click is a protocol message; the host answers with the new chips.
    await panel.clearPosted();
    await selection.locator('.chip-remove').click();
    await selection.locator('.chip-main').click();
    await active.click();
    await page.click('.composer .attachment-add');
    assert.deepEqual(await panel.posted(), [
      { type: 'removeAttachment', id: 'att-1' },
      { type: 'openAttachment', id: 'att-1' },
      { type: 'toggleActiveFile', enabled: false },
      { type: 'addFile' },
    ]);
    await panel.send(chipsMessage({ items: [fileChip], activeFile: { ...activeFile, enabled: false } }));
    assert.equal(await page.locator('.composer .attachment-chip[data-id="att-1"]').count(), 0);
    assert.equal(await active.getAttribute('aria-pressed'), 'false');
    assert.match(await active.getAttribute('title') ?? '', /Click to attach it\.$/);

    // A long name is shortened inside the panel's width, never widening it.
    const widths = await page.evaluate(() => ({
      chip: document.querySelector('.composer .attachment-chip[data-id="att-2"]')!.getBoundingClientRect().right,
      bar: document.querySelector('.composer .attachment-bar')!.getBoundingClientRect().right,
      page: document.documentElement.scrollWidth <= document.documentElement.clientWidth,
    }));
    assert.ok(widths.chip <= widths.bar + 0.5 && widths.page, JSON.stringify(widths));
    await closePanel(panel);
  });

  it('untrusted and refused current files say why in the tooltip; a refused one cannot be switched on', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([]));
    await panel.send(chipsMessage({ items: [], activeFile: { ...activeFile, enabled: false, untrusted: true } }));
    const active = page.locator('.composer button.attachment-chip.active-file');
    assert.match(await active.getAttribute('title') ?? '', /Untrusted workspace: the current file is attached only when you switch it on\.$/);
    await panel.send(chipsMessage({ items: [], activeFile: { ...activeFile, enabled: false, refusal: 'huge.log is too large to attach (900 KB; the limit is 256 KB).' } }));
    assert.equal(await active.isDisabled(), true);
    assert.equal(await active.getAttribute('title'), 'huge.log is too large to attach (900 KB; the limit is 256 KB).');
    await closePanel(panel);
  });

  it('with a sent question: its chips under the text, no ×, a click opens the code; kept across state echoes', async () => {
    const panel = await harness.open();
    const { page } = panel;
    const question = { ...user('u1', 'What does circle_area return?'), attachments: [{ ...selectionChip, tokens: undefined }, { id: 'att-3', kind: 'file', path: 'README.md', fullPath: '/home/dev/project/README.md' }] };
    delete (question.attachments[0] as { tokens?: number }).tokens;
    const messages = [question, assistant('a1', 'It returns **π r²**.')];
    await panel.send(stateMsg(messages));
    const sent = page.locator('article[data-id="u1"] .attachment-chips.sent');
    assert.deepEqual(await chipTexts(panel, 'article[data-id="u1"]'), ['geometry.py:3-4', 'README.md']);
    assert.equal(await sent.getAttribute('aria-label'), DEFAULT_STRINGS.attachedContext);
    assert.equal(await sent.locator('.chip-remove').count(), 0);
    assert.equal(await page.locator('article[data-id="u1"] .attachment-chip').first().getAttribute('title'), '/home/dev/project/src/geometry.py\nlines 3–4');
    await panel.clearPosted();
    await sent.locator('.chip-main').nth(1).click();
    assert.deepEqual(await panel.posted(), [{ type: 'openAttachment', id: 'att-3' }]);
    await page.evaluate(() => { (document.querySelector('article[data-id="u1"]') as HTMLElement & { __mark?: boolean }).__mark = true; });
    await panel.send(stateMsg(messages));
    assert.equal(await page.evaluate(() => (document.querySelector('article[data-id="u1"]') as HTMLElement & { __mark?: boolean }).__mark), true, 'same chips: the message is not re-rendered');
    await panel.send(stateMsg([{ ...question, attachments: question.attachments.slice(0, 1) }, messages[1]!]));
    assert.deepEqual(await chipTexts(panel, 'article[data-id="u1"]'), ['geometry.py:3-4'], 'changed chips: re-rendered');
    const out = resolve(__dirname, '../../test-results');
    mkdirSync(out, { recursive: true });
    await panel.send(chipsMessage());
    await page.screenshot({ path: join(out, 'attachment-chips.png'), fullPage: true });
    await closePanel(panel);
  });

  it('a question the host did not send comes back into the input; malformed chip messages change nothing', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([]));
    await panel.send(chipsMessage());
    await page.fill('textarea.input', 'Which rows repeat?');
    await page.click('button[data-action="send"]');
    assert.equal(await page.inputValue('textarea.input'), '');
    await panel.send({ type: 'draft', text: 'Which rows repeat?' });
    assert.equal(await page.inputValue('textarea.input'), 'Which rows repeat?');
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'TEXTAREA');

    const before = await chipTexts(panel, '.composer');
    assert.equal(before.length, 3);
    await panel.send({ type: 'attachments', items: [{ ...selectionChip, content: 'secret' }], activeFile: null });
    await panel.send({ type: 'attachments', items: [{ ...selectionChip, startLine: 0 }], activeFile: null });
    await panel.send({ type: 'attachments', items: [selectionChip] });
    assert.deepEqual(await chipTexts(panel, '.composer'), before, 'dropped by the protocol: the chips are as they were');
    // A path is text, never markup.
    await panel.send({ type: 'attachments', items: [{ ...selectionChip, path: 'x/<img src=x onerror=alert(1)>.py' }], activeFile: null });
    assert.deepEqual(await chipTexts(panel, '.composer'), ['<img src=x onerror=alert(1)>.py:3-4']);
    assert.equal(await page.locator('.composer img').count(), 0);
    await closePanel(panel);
  });

  it('marks invisible characters in chip names and shows them, and line breaks, in tooltips (composer and sent question)', async () => {
    const panel = await harness.open();
    const { page } = panel;
    const rlo = { id: 'att-5', kind: 'file', path: 'invoice\u202Etxt.exe', fullPath: '/home/dev/invoice\u202Etxt.exe' };
    const tags = { id: 'att-6', kind: 'file', path: 'notes.py\u{E0041}\u{E0042}', fullPath: '/home/dev/notes.py\u{E0041}\u{E0042}' };
    const newline = { id: 'att-7', kind: 'selection', path: 'a\nb.py', fullPath: '/home/dev/x.py\nlines 1–900\nabout 1 tokens', startLine: 1, endLine: 2 };
    const items = [rlo, tags, newline];
    await panel.send(stateMsg([{ ...user('u1', 'Look'), attachments: items }]));
    await panel.send(chipsMessage({ items, activeFile: { ...activeFile, path: 'cur\u202Erent.py', fullPath: '/p/cur\u202Erent.py' } }));
    for (const scope of ['.composer', 'article[data-id="u1"]']) {
      const marks = (id: string) => page.locator(`${scope} .attachment-chip[data-id="${id}"] .chip-name .invisible-char`).evaluateAll((els) => els.map((e) => e.getAttribute('data-code-point')));
      assert.deepEqual(await marks('att-5'), ['U+202E'], scope);
      assert.deepEqual(await marks('att-6'), ['U+E0041', 'U+E0042'], scope);
      assert.deepEqual(await marks('att-7'), ['U+000A'], scope);
      // What shows: the name in source order; the override is inside a marker that is not rendered and is isolated.
      const shown = await page.locator(`${scope} .attachment-chip[data-id="att-5"] .chip-name`).evaluate((e) => (e as HTMLElement).innerText);
      assert.ok(!shown.includes('\u202E'), JSON.stringify(shown));
      assert.equal(await page.locator(`${scope} .attachment-chip[data-id="att-5"]`).getAttribute('title'), '/home/dev/invoice<U+202E>txt.exe');
      assert.equal(await page.locator(`${scope} .attachment-chip[data-id="att-7"]`).getAttribute('title'),
        '/home/dev/x.py<U+000A>lines 1–900<U+000A>about 1 tokens\nlines 1–2');
    }
    assert.equal(await page.locator('.composer .attachment-chip[data-id="att-5"] .chip-remove').getAttribute('aria-label'), 'Remove invoice<U+202E>txt.exe');
    const current = page.locator('.composer button.attachment-chip.active-file');
    assert.match(await current.getAttribute('title') ?? '', /^\/p\/cur<U\+202E>rent\.py\n/);
    assert.deepEqual(await current.locator('.chip-name .invisible-char').evaluateAll((els) => els.map((e) => e.getAttribute('data-code-point'))), ['U+202E']);
    await closePanel(panel);
  });

  it('in a narrow panel the suggested current file keeps its name and drops the long hint first; tokens carry their unit', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await page.setViewportSize({ width: 220, height: 500 });
    await panel.send(stateMsg([]));
    await panel.send(chipsMessage({ items: [selectionChip], activeFile: { ...activeFile, path: 'src/geometry_helpers.py', suggested: true, enabled: false } }));
    const chip = page.locator('.composer button.attachment-chip.active-file');
    const fits = (sel: string) => chip.locator(sel).evaluate((e) => ({ fits: e.scrollWidth <= e.clientWidth, text: e.textContent }));
    assert.deepEqual(await fits('.chip-name'), { fits: true, text: 'geometry_helpers.py' }, 'the whole file name shows');
    assert.deepEqual(await fits('.chip-tag'), { fits: false, text: DEFAULT_STRINGS.activeFileSuggested }, 'the hint is cut (ellipsis), not the name');
    assert.ok(await chip.evaluate((e) => e.getBoundingClientRect().right <= window.innerWidth), 'the chip stays inside the panel');
    assert.equal(await page.textContent('.composer .attachment-chip[data-id="att-1"] .chip-tokens'), '· 42 tokens');
    await panel.send(chipsMessage({ items: [{ ...selectionChip, tokens: 1 }] }));
    assert.equal(await page.textContent('.composer .attachment-chip[data-id="att-1"] .chip-tokens'), '· 1 token');
    // No italics on the chip texts: a Chinese tag would be slanted synthetically.
    assert.deepEqual(await page.locator('.composer .attachment-chip *').evaluateAll((els) => els.filter((e) => getComputedStyle(e).fontStyle !== 'normal').map((e) => e.className)), []);
    await closePanel(panel);
  });

  it('Chinese strings label the chips', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send({ type: 'l10n', strings: { addFile: '添加文件…', activeFileTag: '当前文件', removeAttachment: '移除 {0}', attachmentLines: '第 {0}–{1} 行' } });
    await panel.send(stateMsg([]));
    await panel.send(chipsMessage());
    assert.equal(await page.textContent('.composer .attachment-add'), '+添加文件…');
    assert.equal(await page.textContent('.composer .active-file .chip-tag'), '当前文件');
    assert.equal(await page.getAttribute('.composer .attachment-chip[data-id="att-1"] .chip-remove', 'aria-label'), '移除 geometry.py:3-4');
    assert.match(await page.getAttribute('.composer .attachment-chip[data-id="att-1"]', 'title') ?? '', /第 3–4 行/);
    await closePanel(panel);
  });
});
