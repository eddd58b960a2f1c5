// The `#` context and `/` command list of the chat input, the new chips (suggested current file, symbol, problems,
// changes, tokens on each chip) and the token meter, in headless Chromium under the extension's CSP, driven through
// the real protocol: keyboard (↑/↓ wrapping, Enter, Tab, Escape), mouse (hover, click), ARIA (combobox, listbox,
// options, aria-activedescendant, the live announcement), and the meter's figure and colours at 80 % and over.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_STRINGS } from '../../src/protocol';
import { startHarness, stateMsg, user, assistant, type Harness, type Panel, closeChecked } from './support/harness';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const closePanel = (panel: Panel) => closeChecked(panel, 'the list and the meter work without violating the CSP');

async function openReady(): Promise<Panel> {
  const panel = await harness.open();
  await panel.send(stateMsg([]));
  await panel.page.focus('textarea.input');
  return panel;
}

const options = (panel: Panel) => panel.page.locator('.completion-list [role="option"]').evaluateAll((els) => els.map((e) => ({
  value: e.getAttribute('data-value'), selected: e.getAttribute('aria-selected'), id: e.id,
})));
const inputValue = (panel: Panel) => panel.page.inputValue('textarea.input');
const attr = (panel: Panel, name: string) => panel.page.getAttribute('textarea.input', name);

describe('# and / completion list', () => {
  it('# opens the context list as an ARIA combobox; typing filters; ↑/↓ wrap; Enter attaches and takes "#word" out', async () => {
    const panel = await openReady();
    const { page } = panel;
    assert.equal(await attr(panel, 'role'), 'combobox');
    assert.equal(await attr(panel, 'aria-expanded'), 'false');
    await page.keyboard.type('Why does this fail? #');
    const listId = await page.getAttribute('.completion-list', 'id');
    assert.equal(await page.getAttribute('.completion-list', 'role'), 'listbox');
    assert.equal(await attr(panel, 'aria-controls'), listId);
    assert.equal(await attr(panel, 'aria-expanded'), 'true');
    let list = await options(panel);
    assert.deepEqual(list.map((o) => o.value), ['#file', '#selection', '#problems', '#changes', '#symbol']);
    assert.deepEqual(list.map((o) => o.selected), ['true', 'false', 'false', 'false', 'false']);
    assert.equal(await attr(panel, 'aria-activedescendant'), list[0]!.id);
    assert.equal(await page.textContent('.composer .completion-announcer'), DEFAULT_STRINGS.completionCount.replace('{0}', '5'));
    assert.equal(await page.textContent(`#${list[2]!.id} .completion-detail`), DEFAULT_STRINGS['context.problems']);

    await page.keyboard.press('ArrowUp'); // wraps to the last
    list = await options(panel);
    assert.equal(list[4]!.selected, 'true');
    assert.equal(await attr(panel, 'aria-activedescendant'), list[4]!.id);
    await page.keyboard.press('ArrowDown'); // and back to the first
    assert.equal((await options(panel))[0]!.selected, 'true');

    await page.keyboard.type('pr');
    assert.deepEqual((await options(panel)).map((o) => o.value), ['#problems']);
    await panel.clearPosted();
    await page.keyboard.press('Enter');
    assert.deepEqual(await panel.posted(), [{ type: 'addContext', source: 'problems' }], 'Enter accepted: nothing was sent');
    assert.equal(await inputValue(panel), 'Why does this fail? ');
    assert.equal(await attr(panel, 'aria-expanded'), 'false');
    assert.equal(await page.isHidden('.completion-list'), true);
    assert.equal(await attr(panel, 'aria-activedescendant'), null);
    await closePanel(panel);
  });

  it('Tab accepts too; Escape closes the list (and keeps it closed for that #), with no Stop and no send', async () => {
    const panel = await openReady();
    const { page } = panel;
    await page.keyboard.type('#');
    await page.keyboard.press('ArrowDown');
    await panel.clearPosted();
    await page.keyboard.press('Tab');
    assert.deepEqual(await panel.posted(), [{ type: 'addContext', source: 'selection' }]);
    assert.equal(await inputValue(panel), '');
    assert.equal(await page.evaluate(() => document.activeElement?.className), 'input', 'Tab did not move the focus');

    await page.keyboard.type('look at #');
    assert.equal(await page.isVisible('.completion-list'), true);
    await page.keyboard.press('Escape');
    assert.equal(await page.isHidden('.completion-list'), true);
    await page.keyboard.type('sy');
    assert.equal(await page.isHidden('.completion-list'), true, 'closed for this # until it is gone');
    await panel.clearPosted();
    await page.keyboard.press('Enter'); // with the list closed, Enter sends again
    assert.deepEqual(await panel.posted(), [{ type: 'send', text: 'look at #sy' }]);
    // A "#" inside a word is no trigger.
    await page.keyboard.type('issue a#');
    assert.equal(await page.isHidden('.completion-list'), true);
    await closePanel(panel);
  });

  it('the mouse: hovering an option makes it active, a click attaches it and leaves the focus in the input', async () => {
    const panel = await openReady();
    const { page } = panel;
    await page.keyboard.type('#');
    const symbol = page.locator('.completion-list [data-value="#symbol"]');
    await symbol.hover();
    assert.equal(await symbol.getAttribute('aria-selected'), 'true');
    assert.equal(await attr(panel, 'aria-activedescendant'), await symbol.getAttribute('id'));
    await panel.clearPosted();
    await symbol.click();
    assert.deepEqual(await panel.posted(), [{ type: 'addContext', source: 'symbol' }]);
    assert.equal(await page.evaluate(() => document.activeElement?.className), 'input');
    assert.equal(await page.isHidden('.completion-list'), true);
    await closePanel(panel);
  });

  it('/ at the start offers the commands; /fix also attaches the problems; "/" later in the text offers nothing', async () => {
    const panel = await openReady();
    const { page } = panel;
    await page.keyboard.type('/');
    assert.deepEqual((await options(panel)).map((o) => o.value), ['/explain', '/fix', '/tests', '/doc', '/new']);
    assert.equal(await page.textContent('.completion-list [data-value="/new"] .completion-detail'), DEFAULT_STRINGS['command.new']);
    await page.keyboard.type('f');
    assert.deepEqual((await options(panel)).map((o) => o.value), ['/fix']);
    await panel.clearPosted();
    await page.keyboard.press('Enter');
    assert.equal(await inputValue(panel), '/fix ');
    assert.deepEqual(await panel.posted(), [{ type: 'addContext', source: 'problems' }]);
    await page.keyboard.type('the off-by-one /');
    assert.equal(await page.isHidden('.completion-list'), true);
    await page.fill('textarea.input', '');
    await page.keyboard.type('/zz');
    assert.equal(await page.isHidden('.completion-list'), true, 'no command matches');
    await closePanel(panel);
  });
});

const budget = (over: Record<string, unknown> = {}) => ({
  type: 'budget', systemTokens: 0, historyTurns: [], maxInputTokens: 100, templateTokens: { explain: 20, fix: 30, tests: 25, doc: 25 }, ...over,
});

describe('chips of the # sources and the current file', () => {
  it('symbol, problems and changes chips; each chip shows its tokens; the suggested current file attaches on click', async () => {
    const panel = await openReady();
    const { page } = panel;
    await panel.send({
      type: 'attachments',
      items: [
        { id: 'a1', kind: 'symbol', label: 'circle_area', path: 'src/geometry.py', fullPath: '/w/src/geometry.py', startLine: 3, endLine: 4, tokens: 21 },
        { id: 'a2', kind: 'problems', path: 'src/geometry.py', fullPath: '/w/src/geometry.py', tokens: 1085 },
        { id: 'a3', kind: 'changes', path: 'project', fullPath: '/w', tokens: 640 },
      ],
      activeFile: { path: 'src/shapes.py', fullPath: '/w/src/shapes.py', suggested: true, enabled: false, untrusted: false, tokens: 300 },
    });
    const texts = await page.locator('.composer .attachment-chip').evaluateAll((els) => els.map((e) => {
      const copy = e.cloneNode(true) as Element;
      for (const g of Array.from(copy.querySelectorAll('.chip-glyph'))) g.remove();
      return (copy.textContent ?? '').replace(/\s+/g, ' ').trim();
    }));
    assert.deepEqual(texts, [`shapes.py${DEFAULT_STRINGS.activeFileSuggested}`, 'circle_area:3-4· 21 tokens', 'geometry.py problems· 1,085 tokens', 'Changes· 640 tokens']);
    assert.equal(await page.getAttribute('.attachment-chip[data-id="a1"] .chip-main', 'aria-label'), 'Open circle_area:3-4 (symbol)');
    const suggested = page.locator('button.attachment-chip.active-file.suggested');
    assert.equal(await suggested.evaluate((e) => getComputedStyle(e).borderTopStyle), 'dashed');
    assert.equal(await suggested.getAttribute('aria-pressed'), null, 'an action, not a toggle');
    await panel.clearPosted();
    await suggested.click();
    assert.deepEqual(await panel.posted(), [{ type: 'toggleActiveFile', enabled: true }]);
    // A malformed chip kind is dropped whole.
    await panel.send({ type: 'attachments', items: [{ id: 'x', kind: 'secrets', path: 'a', fullPath: 'a' }], activeFile: null });
    assert.equal(await page.locator('.composer .attachment-chip[data-id="a1"]').count(), 1);
    await closePanel(panel);
  });
});

describe('token meter', () => {
  it('counts system prompt, kept history, chips and the draft as typed; warning colour from 80 %, error colour over', async () => {
    const panel = await openReady();
    const { page } = panel;
    assert.equal(await page.isHidden('.token-meter'), true, 'no figure before the host sends its budget');
    await panel.send(budget({ systemTokens: 10, historyTurns: [30, 20] }));
    // 3 framing + 10 system + 0 chips + 0 draft + 3 message = 16; then both turns fit (16 + 20 + 30 = 66).
    const meter = page.locator('.token-meter');
    assert.equal(await meter.textContent(), '66 / 100 tokens');
    assert.equal(await meter.getAttribute('role'), 'meter');
    assert.equal(await meter.getAttribute('aria-valuenow'), '66');
    assert.equal(await meter.getAttribute('aria-valuemax'), '100');
    assert.match(await meter.getAttribute('title') ?? '', /System prompt: 10\nHistory kept: 50 \(turns: 2\)\nAttachments: 0\nQuestion: 0/);
    const colour = () => meter.evaluate((e) => getComputedStyle(e).color);
    const cssVar = (name: string) => page.evaluate((n) => {
      const probe = document.createElement('span');
      probe.style.color = `var(${n})`;
      document.body.append(probe);
      const c = getComputedStyle(probe).color;
      probe.remove();
      return c;
    }, name);
    assert.equal(await meter.getAttribute('data-level'), 'ok');
    assert.equal(await colour(), await cssVar('--vscode-descriptionForeground'));

    // A chip of 12 tokens: 78 — still under 80 %.
    await panel.send({ type: 'attachments', items: [{ id: 'c1', kind: 'file', path: 'a.py', fullPath: '/w/a.py', tokens: 12 }], activeFile: null });
    assert.equal(await meter.textContent(), '78 / 100 tokens');
    // "abcdef" estimates at 2 tokens: 80 = 80 %.
    await page.keyboard.type('abcdef');
    assert.equal(await meter.textContent(), '80 / 100 tokens');
    assert.equal(await meter.getAttribute('data-level'), 'warning');
    assert.equal(await colour(), await cssVar('--vscode-editorWarning-foreground'));
    assert.equal(await page.textContent('.composer .meter-announcer'), DEFAULT_STRINGS.meterWarning, 'the change of level is announced');

    // A bigger chip: the oldest turn (30) no longer fits and is left out, as the request builder would do.
    await panel.send({ type: 'attachments', items: [{ id: 'c1', kind: 'file', path: 'a.py', fullPath: '/w/a.py', tokens: 40 }], activeFile: null });
    // 3 + 10 + 40 + 2 + 3 = 58, + 20 = 78; + 30 would be 108
    assert.equal(await meter.textContent(), '78 / 100 tokens');
    assert.match(await meter.getAttribute('title') ?? '', /History kept: 20 \(turns: 1\)\nAttachments: 40\nQuestion: 2/);

    // Over the budget even without history: the error colour.
    await panel.send({ type: 'attachments', items: [{ id: 'c1', kind: 'file', path: 'a.py', fullPath: '/w/a.py', tokens: 95 }], activeFile: null });
    assert.equal(await meter.getAttribute('data-level'), 'over');
    assert.equal(await colour(), await cssVar('--vscode-errorForeground'));
    assert.equal(await meter.getAttribute('aria-valuenow'), '100', 'clamped to the maximum');
    assert.match(await meter.getAttribute('aria-valuetext') ?? '', new RegExp(DEFAULT_STRINGS.meterOver.replace(/[.:]/g, '\\$&')));
    await closePanel(panel);
  });

  it('is hidden until it means something: no figure during setup, while the model is not ready, or after it stops', async () => {
    const panel = await harness.open();
    const { page } = panel;
    const notLoaded = { server: { server: 'running', model: 'unloaded', actions: ['loadModel'] } };
    await panel.send(stateMsg([], notLoaded));
    await panel.send(budget());
    assert.equal(await page.isHidden('.token-meter'), true, 'the model is not loaded');
    await panel.send({ type: 'setup', setup: { visible: true, phase: 'needed', checking: false, summary: 'Docker is missing.', items: [], primary: 'recheck' } });
    assert.equal(await page.isHidden('.token-meter'), true, 'during setup');
    await panel.send({ type: 'setup', setup: { visible: false, phase: 'ready', checking: false, summary: '', items: [] } });
    await panel.send(stateMsg([]));
    assert.equal(await page.textContent('.token-meter'), '6 / 100 tokens', 'shown once the model is ready');
    await panel.send(stateMsg([], { server: { server: 'stopped', model: 'unknown', actions: ['startServer'] } }));
    assert.equal(await page.isHidden('.token-meter'), true, 'hidden again once the server stopped');
    await closePanel(panel);
  });

  it('a command counts its template; /new counts no history; the meter follows a sent question and a new state', async () => {
    const panel = await openReady();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', 'a')]));
    await panel.send(budget({ historyTurns: [10] }));
    await page.keyboard.type('/explain');
    await page.keyboard.press('Escape');
    // 3 + 20 (template) + 3 + 10 (history) = 36
    assert.equal(await page.textContent('.token-meter'), '36 / 100 tokens');
    await page.keyboard.type(' why'); // + 2 (blank line) + 1
    assert.equal(await page.textContent('.token-meter'), '39 / 100 tokens');
    await page.fill('textarea.input', '/new hello');
    // 3 + 2 ("hello") + 3, no history
    assert.equal(await page.textContent('.token-meter'), '8 / 100 tokens');
    await closePanel(panel);
  });
});
