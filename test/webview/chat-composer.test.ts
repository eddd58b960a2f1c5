// The chat panel as Copilot Chat users expect it: the composer (growing input, icon Send/Stop, focus, ArrowUp
// recall), the per-message toolbar (Copy, Regenerate, Edit, token figures as a tooltip), Continue after the length
// limit, questions rendered as Markdown, and the empty state. Headless Chromium, the extension's CSP, the real protocol.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assistant, startHarness, stateMsg, user, type Harness, type Panel, closeChecked } from './support/harness';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const shots = resolve(__dirname, '../../test-results/webview');

const closePanel = (panel: Panel) => closeChecked(panel, 'the panel works without violating its CSP');

const activeClass = (panel: Panel) => panel.page.evaluate(() => document.activeElement?.className ?? '');

describe('chat composer', () => {
  it('is focused when the panel opens, and again on focusInput', async () => {
    const panel = await harness.open();
    const { page } = panel;
    assert.equal(await activeClass(panel), 'input', 'the input has the focus once the page is up');
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', 'a')]));
    await page.focus('article[data-id="a1"] button[data-action="copyMessage"]');
    await panel.send({ type: 'focusInput' });
    assert.equal(await activeClass(panel), 'input');
    // the host hears when the panel gets and loses the focus (the context key of its Ctrl+L keybinding)
    const before = (await panel.focusReports()).length;
    await page.evaluate(() => { window.dispatchEvent(new Event('blur')); window.dispatchEvent(new FocusEvent('focus')); });
    assert.deepEqual((await panel.focusReports()).slice(before), [false, true]);
    await closePanel(panel);
  });

  it('one input that grows with its text up to a limit; a short placeholder; Send and Stop are icon buttons with tooltips', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([]));
    assert.equal(await page.getAttribute('textarea.input', 'placeholder'), 'Ask ChatGLM3-6B (# for context, / for commands)');
    assert.equal(await page.locator('textarea').count(), 1);
    const height = () => page.evaluate(() => (document.querySelector('textarea.input') as HTMLElement).getBoundingClientRect().height);
    const one = await height();
    await page.focus('textarea.input');
    await page.keyboard.type('line 1');
    for (let i = 2; i <= 4; i += 1) { await page.keyboard.press('Shift+Enter'); await page.keyboard.type(`line ${i}`); }
    const four = await height();
    assert.ok(four > one * 3, `grows with its lines (${one} -> ${four} px)`);
    for (let i = 5; i <= 60; i += 1) { await page.keyboard.press('Shift+Enter'); await page.keyboard.type(`line ${i}`); }
    const many = await height();
    const viewport = page.viewportSize()!.height;
    assert.ok(many <= viewport * 0.4 + 1, `stops growing at 40% of the view (${many} px of ${viewport})`);
    assert.ok(await page.evaluate(() => { const t = document.querySelector('textarea.input') as HTMLElement; return t.scrollHeight > t.clientHeight; }), 'then it scrolls');
    await page.fill('textarea.input', '');
    await page.locator('textarea.input').dispatchEvent('input');
    assert.ok(Math.abs(await height() - one) < 1, 'and shrinks back when emptied');

    const send = page.locator('button[data-action="send"]');
    assert.equal(await send.textContent(), '', 'an icon, no text');
    assert.equal(await send.locator('.codicon-send').count(), 1);
    assert.deepEqual([await send.getAttribute('aria-label'), await send.getAttribute('title')], ['Send', 'Send (Enter)']);
    assert.equal(await send.isDisabled(), true, 'nothing to send yet');
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', '', 'streaming')]));
    const stop = page.locator('button[data-action="stop"]');
    assert.equal(await send.isVisible(), false);
    assert.equal(await stop.locator('.codicon-debug-stop').count(), 1);
    assert.deepEqual([await stop.getAttribute('aria-label'), await stop.getAttribute('title')], ['Stop', 'Stop (Escape)']);
    // nothing in the panel sets inline styles (the CSP would refuse them in markup)
    assert.equal(await page.locator('#root [style]').count(), 0);
    await closePanel(panel);
  });

  it('ArrowUp in the empty input recalls the last question, then earlier ones; ArrowDown walks back; typing ends the walk', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'first question'), assistant('a1', 'a'), user('u2', 'second\nquestion'), assistant('a2', 'b')]));
    await page.focus('textarea.input');
    await page.keyboard.press('ArrowUp');
    assert.equal(await page.inputValue('textarea.input'), 'second\nquestion');
    await page.keyboard.press('ArrowUp');
    assert.equal(await page.inputValue('textarea.input'), 'first question');
    await page.keyboard.press('ArrowUp');
    assert.equal(await page.inputValue('textarea.input'), 'first question', 'no further back than the first');
    await page.keyboard.press('End');
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.inputValue('textarea.input'), 'second\nquestion');
    await page.keyboard.press('ControlOrMeta+End');
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.inputValue('textarea.input'), '', 'past the last question: empty again');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.type('!'); // the caret is at the start of a recalled question
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowUp');
    assert.equal(await page.inputValue('textarea.input'), '!second\nquestion', 'after typing, ArrowUp moves the caret instead');
    // Sending still works on a recalled question
    await page.fill('textarea.input', '');
    await page.keyboard.press('ArrowUp');
    await panel.clearPosted();
    await page.keyboard.press('Enter');
    assert.deepEqual(await panel.posted(), [{ type: 'send', text: 'second\nquestion' }]);
    await closePanel(panel);
  });

  it('in a new chat, ArrowUp brings back the question asked last in another chat (as text, whatever it holds)', async () => {
    const panel = await harness.open();
    const { page } = panel;
    const hostile = '<img src=x onerror="window.__pwned=1"> what was it?';
    await panel.send(stateMsg([], { activeId: null, previousQuestion: hostile }));
    await page.focus('textarea.input');
    await page.keyboard.press('ArrowUp');
    assert.equal(await page.inputValue('textarea.input'), hostile);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned), undefined);
    await panel.send(stateMsg([], { activeId: null }));
    await page.fill('textarea.input', '');
    await page.keyboard.press('ArrowUp');
    assert.equal(await page.inputValue('textarea.input'), '', 'nothing to recall');
    await closePanel(panel);
  });
});

describe('message toolbar', () => {
  it('appears on hover and on keyboard focus: Copy on every message, Regenerate on answers, Edit on questions', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'q1'), assistant('a1', 'answer **one**', 'complete', { promptTokens: 12, completionTokens: 34 }), user('u2', 'q2'), assistant('a2', 'two', 'stopped')]));
    const actions = (id: string) => page.locator(`article[data-id="${id}"] .message-toolbar button`).evaluateAll((els) => els.map((e) => [e.getAttribute('data-action'), e.getAttribute('aria-label'), e.getAttribute('title')]));
    assert.deepEqual(await actions('u1'), [['copyMessage', 'Copy', 'Copy'], ['editQuestion', 'Edit', 'Edit']]);
    assert.deepEqual(await actions('a1'), [['copyMessage', 'Copy', 'Copy'], ['regenerate', 'Regenerate', 'Regenerate']]);
    assert.deepEqual(await actions('a2'), [['copyMessage', 'Copy', 'Copy'], ['regenerate', 'Regenerate', 'Regenerate']], 'a stopped answer too');
    assert.equal(await page.getAttribute('article[data-id="u1"] .message-toolbar', 'role'), 'toolbar');
    assert.equal(await page.locator('article .message-toolbar button .codicon').count(), 8, 'icons only');
    const opacity = (id: string) => page.evaluate((sel) => getComputedStyle(document.querySelector(sel)!).opacity, `article[data-id="${id}"] .message-toolbar`);
    await page.mouse.move(1, 1);
    await page.focus('textarea.input');
    await page.waitForFunction(() => getComputedStyle(document.querySelector('article[data-id="a1"] .message-toolbar')!).opacity === '0');
    await page.hover('article[data-id="a1"] .message-body');
    await page.waitForFunction(() => getComputedStyle(document.querySelector('article[data-id="a1"] .message-toolbar')!).opacity === '1');
    assert.equal(await opacity('u2'), '0', 'only the hovered message shows its toolbar');
    await page.mouse.move(1, 1);
    await page.focus('article[data-id="u2"] button[data-action="editQuestion"]');
    await page.waitForFunction(() => getComputedStyle(document.querySelector('article[data-id="u2"] .message-toolbar')!).opacity === '1');
    // the token figures are the tooltip (and accessible name) of an icon that the keyboard reaches
    const usage = page.locator('article[data-id="a1"] .message-usage');
    assert.equal(await usage.getAttribute('title'), '12 prompt tokens, 34 answer tokens');
    assert.equal(await usage.getAttribute('aria-label'), '12 prompt tokens, 34 answer tokens');
    assert.equal(await usage.getAttribute('tabindex'), '0');
    assert.equal(await page.locator('article[data-id="a2"] .message-usage').count(), 0, 'no figures, no icon');
    await closePanel(panel);
  });

  it('an answer names the model that wrote it on hover of its figures (stored with the conversation)', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'q1'), assistant('a1', 'GLM-4 here', 'complete', { promptTokens: 12, completionTokens: 3, model: 'GLM-4-9B-Chat (glm-4-9b-chat)' }), user('u2', 'q2'), assistant('a2', 'old', 'complete', { model: 'ChatGLM3-6B (chatglm3-6b)' })]));
    await page.waitForSelector('article[data-id="a2"] .message-usage', { state: 'attached' });
    assert.equal(await page.getAttribute('article[data-id="a1"] .message-usage', 'title'), 'Answered by GLM-4-9B-Chat (glm-4-9b-chat)\n12 prompt tokens, 3 answer tokens');
    assert.equal(await page.getAttribute('article[data-id="a2"] .message-usage', 'title'), 'Answered by ChatGLM3-6B (chatglm3-6b)');
    await closePanel(panel);
  });

  it('Copy posts copyMessage for that message and shows a check mark for a moment', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', '# Title\n\n```py\nx = 1\n```')]));
    await panel.clearPosted();
    const copy = page.locator('article[data-id="a1"] button[data-action="copyMessage"]');
    await copy.click({ force: true });
    assert.deepEqual(await panel.posted(), [{ type: 'copyMessage', messageId: 'a1' }]);
    assert.equal(await copy.locator('.codicon-check').count(), 1);
    assert.equal(await copy.getAttribute('aria-label'), 'Copied');
    await page.waitForFunction(() => !!document.querySelector('article[data-id="a1"] button[data-action="copyMessage"] .codicon-copy'), undefined, { timeout: 5000 });
    assert.equal(await copy.getAttribute('aria-label'), 'Copy');
    await closePanel(panel);
  });

  it('actions that change the conversation are hidden while an answer is generated; the answer being written has none', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'q1'), assistant('a1', 'one', 'complete', { finishReason: 'length' }), user('u2', 'q2'), assistant('a2', 'par', 'streaming')]));
    assert.equal(await page.locator('article[data-id="a2"] .message-toolbar button').count(), 0);
    for (const sel of ['article[data-id="u1"] button[data-action="editQuestion"]', 'article[data-id="a1"] button[data-action="regenerate"]']) {
      assert.equal(await page.locator(sel).isVisible(), false, sel);
    }
    assert.equal(await page.locator('article[data-id="a1"] button[data-action="copyMessage"]').count(), 1, 'Copy stays');
    await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 'a2', status: 'complete', finishReason: 'stop' });
    await page.hover('article[data-id="u1"]');
    assert.equal(await page.locator('article[data-id="u1"] button[data-action="editQuestion"]').isVisible(), true);
    assert.equal(await page.locator('article[data-id="a2"] button[data-action="regenerate"]').count(), 1, 'the finished answer gets its toolbar');
    await closePanel(panel);
  });

  it('questions render their Markdown (code fences with the code-block toolbar) through the same safe renderer', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'Why does this fail?\nIt says **None**.\n\n```python\ndef f():\n    return x\n```\n<b>not bold</b>'), assistant('a1', 'ok')]));
    const body = page.locator('article[data-id="u1"] .message-body');
    assert.equal(await body.locator('.code-block[data-lang="python"] pre code').count(), 1);
    assert.ok((await body.locator('.hljs-keyword').allTextContents()).includes('def'));
    assert.equal(await body.locator('strong').textContent(), 'None');
    assert.equal(await body.locator('br').count(), 1, 'a typed line break stays a line break');
    assert.equal(await body.locator('b').count(), 0, 'raw HTML is text');
    assert.match(await body.textContent() ?? '', /<b>not bold<\/b>/);
    await closePanel(panel);
  });
});

describe('Continue after the length limit', () => {
  it('shows the note and Continue on the last answer only; Continue posts continueAnswer and the answer grows in place', async () => {
    const panel = await harness.open();
    const { page } = panel;
    const cut = 'The batcher merges requests that arrive';
    const messages = [user('u1', 'q1'), assistant('a1', 'first, also cut', 'complete', { finishReason: 'length' }), user('u2', 'q2'), assistant('a2', cut, 'complete', { finishReason: 'length', completionTokens: 96, promptTokens: 10 })];
    await panel.send(stateMsg(messages));
    assert.equal(await page.locator('article[data-id="a1"] button[data-action="continueAnswer"]').isVisible(), false, 'not on an earlier answer');
    const note = page.locator('article[data-id="a2"] .message-continue');
    assert.match(await note.textContent() ?? '', /The answer reached the maximum length\.\s*Continue/);
    await panel.clearPosted();
    await note.locator('button[data-action="continueAnswer"]').click();
    assert.deepEqual(await panel.posted(), [{ type: 'continueAnswer', messageId: 'a2' }]);
    // the host reopens the same answer: it streams on from where it stopped
    await panel.send(stateMsg([...messages.slice(0, 3), assistant('a2', cut, 'streaming', { finishReason: 'length', completionTokens: 96, promptTokens: 10 })]));
    assert.equal(await note.count(), 0, 'no Continue while it is written');
    for (const piece of [' within', ' the queue delay.']) await panel.send({ type: 'delta', conversationId: 'c1', messageId: 'a2', text: piece });
    await panel.nextFrames(2);
    await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 'a2', status: 'complete', finishReason: 'stop', promptTokens: 150, completionTokens: 101 });
    assert.equal((await page.textContent('article[data-id="a2"] .message-body'))?.trim(), `${cut} within the queue delay.`);
    assert.equal(await page.locator('main.messages article').count(), 4, 'one answer, not two');
    assert.equal(await page.locator('article[data-id="a2"] .message-continue').count(), 0);
    assert.equal(await page.getAttribute('article[data-id="a2"] .message-usage', 'title'), '150 prompt tokens, 101 answer tokens');
    await closePanel(panel);
  });
});

/** The keys the host reads from package.json (chatViewProvider.ts editorKeybindings). */
const editorKeys = { type: 'keybindings', explain: { key: 'ctrl+alt+e', mac: 'cmd+alt+e' }, edit: { key: 'ctrl+alt+u', mac: 'cmd+alt+u' } } as const;

describe('empty state', () => {
  it('names the model, offers example questions that send themselves, and lists the keys; only for a ready model', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([], { activeId: null }));
    const empty = page.locator('.empty-state');
    assert.equal(await empty.isVisible(), true);
    assert.equal(await empty.locator('h2').textContent(), 'ChatGLM3-6B');
    const examples = await empty.locator('button[data-action="askExample"]').allTextContents();
    assert.equal(examples.length, 3);
    assert.match(await empty.locator('.empty-keys').textContent() ?? '', /Enter to send.*Shift\+Enter for a new line.*↑ for your last question.*Esc to stop an answer.*Ctrl\+L for a new chat/);
    assert.equal(await empty.locator('.empty-keys kbd').count(), 5);
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, 'empty-state.png') });
    await panel.clearPosted();
    await empty.locator('button[data-action="askExample"]').first().click();
    assert.deepEqual(await panel.posted(), [{ type: 'send', text: examples[0] }]);
    // not while the model is not ready: the server notice explains instead, with no welcome under it
    await panel.send(stateMsg([], { activeId: null, server: { server: 'stopped', model: 'unknown', actions: ['startServer'] } }));
    assert.equal(await empty.isVisible(), false);
    assert.equal(await page.locator('.server-status').isVisible(), true);
    // nor once something was asked
    await panel.send(stateMsg([user('u1', 'q')]));
    assert.equal(await empty.isVisible(), false);
    // the other ways to ask: # and / in the input, Explain and Edit Selection in the editor with the manifest's keys
    await panel.send(stateMsg([], { activeId: null }));
    assert.deepEqual(await empty.locator('.empty-ways li').allTextContents(), [
      'Type # to attach context: a file, the selection, problems, changes or a symbol.',
      'Type / at the start for a command: /explain, /fix, /tests, /doc, /new.',
      'In the editor, select code and run Explain Selection from its context menu.',
      'Select code and run Edit Selection from the context menu to have it rewritten as you describe.',
    ], 'before the host names the keys: the commands by their menu');
    await panel.send(editorKeys);
    assert.deepEqual(await empty.locator('.empty-ways li').allTextContents(), [
      'Type # to attach context: a file, the selection, problems, changes or a symbol.',
      'Type / at the start for a command: /explain, /fix, /tests, /doc, /new.',
      'In the editor, select code and press Ctrl+Alt+E to explain it (Explain Selection).',
      'Select code and press Ctrl+Alt+U to have it rewritten as you describe (Edit Selection).',
    ]);
    assert.deepEqual(await empty.locator('.empty-ways kbd').allTextContents(), ['#', '/', 'Ctrl+Alt+E', 'Ctrl+Alt+U']);
    await page.screenshot({ path: join(shots, 'empty-state-ways.png') });
    // a malformed keys message changes nothing
    await panel.send({ type: 'keybindings', explain: { key: '<b>x</b>' } });
    assert.deepEqual(await empty.locator('.empty-ways kbd').allTextContents(), ['#', '/', 'Ctrl+Alt+E', 'Ctrl+Alt+U']);
    // localized, like the rest of the panel
    await panel.send({ type: 'l10n', strings: { keySend: '{0} 发送', example1: '解释什么是 Python 装饰器。' } });
    await panel.send(stateMsg([], { activeId: null }));
    assert.match(await empty.locator('.empty-keys').textContent() ?? '', /Enter 发送/);
    assert.equal(await empty.locator('button[data-action="askExample"]').first().textContent(), '解释什么是 Python 装饰器。');
    await closePanel(panel);
  });

  it('in a short, narrow view the welcome starts at its top (logo and title in sight) and scrolls to the keys', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await page.setViewportSize({ width: 300, height: 600 });
    await panel.send(editorKeys);
    await panel.send(stateMsg([], { activeId: null }));
    const empty = page.locator('.empty-state');
    const view = await empty.evaluate((e) => ({
      scrolls: e.scrollHeight > e.clientHeight,
      logo: document.querySelector('.empty-logo')!.getBoundingClientRect().height,
      titleInSight: document.querySelector('.empty-title')!.getBoundingClientRect().top >= e.getBoundingClientRect().top,
    }));
    assert.deepEqual(view, { scrolls: true, logo: 44, titleInSight: true });
    await empty.evaluate((e) => { e.scrollTop = e.scrollHeight; });
    assert.equal(await page.locator('.empty-keys kbd', { hasText: 'Ctrl+L' }).isVisible(), true);
    await closePanel(panel);
  });

  it('on a Mac: the Mac keys of Explain and Edit Selection, ⌃L for a new chat', async () => {
    const panel = await harness.open({ init: ['Object.defineProperty(navigator, "platform", { get: () => "MacIntel" })'] });
    const { page } = panel;
    await panel.send(editorKeys);
    await panel.send(stateMsg([], { activeId: null }));
    const empty = page.locator('.empty-state');
    assert.deepEqual(await empty.locator('.empty-ways kbd').allTextContents(), ['#', '/', '⌥⌘E', '⌥⌘U']);
    assert.match(await empty.locator('.empty-keys').textContent() ?? '', /⌃L for a new chat/);
    await closePanel(panel);
  });
});

describe('edits survive the panel being hidden', () => {
  it('a question being edited is restored, with its text so far, after a reload', async () => {
    const panel = await harness.open();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'original'), assistant('a1', 'a')]));
    await page.click('article[data-id="u1"] button[data-action="editQuestion"]', { force: true });
    await page.keyboard.type(' plus more');
    await page.waitForFunction(() => (sessionStorage.getItem('vscodeState') ?? '').includes('original plus more'));
    await page.reload();
    await page.waitForSelector('article[data-id="u1"] .question-editor');
    assert.equal(await page.inputValue('article[data-id="u1"] .question-editor textarea'), 'original plus more');
    await closePanel(panel);
  });

});
