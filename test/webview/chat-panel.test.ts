// The chat webview bundle in headless Chromium, under the extension's CSP, driven through the real protocol.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseWebviewToHost } from '../../src/protocol';
import { assistant, startHarness, stateMsg, user, type Harness, type Panel } from './support/harness';
import { measureStreamingRenderCost, syntheticTokens } from './support/render-cost';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

async function openPanel(csp = true): Promise<Panel> {
  return harness.open({ csp });
}

async function closePanel(panel: Panel): Promise<void> {
  assert.deepEqual(panel.errors, [], 'no page errors');
  if (await panel.page.evaluate(() => !!document.querySelector('meta[http-equiv="Content-Security-Policy"]'))) {
    assert.deepEqual(await panel.cspViolations(), [], 'the panel works without violating its CSP');
  }
  await panel.page.close();
}

const ANSWER = [
  'Here is how to **reverse** a list in Python:\n\n',
  '```python\ndef reverse(items):\n    """Return a new list."""\n    return items[::-1]\n\nprint(reverse([1, 2, 3]))\n```\n\n',
  '你也可以使用 `list.reverse()` 原地反转。\n\n1. Slicing copies\n2. `reverse()` mutates\n',
].join('');

describe('chat webview', () => {
  it('posts ready, renders state, streams deltas into only the streaming message, and highlights code', async () => {
    const panel = await openPanel();
    const { page } = panel;
    assert.deepEqual(await panel.posted(), [{ type: 'ready' }]);
    assert.match(await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content') ?? '', /default-src 'none'; script-src 'nonce-[^']+'; style-src http:\/\/127\.0\.0\.1:\d+;/);
    await panel.send(stateMsg([user('u1', 'earlier question'), assistant('a1', 'earlier *answer*'), user('u2', 'How do I reverse a list?'), assistant('a2', '', 'streaming')]));
    await page.evaluate(() => { (document.querySelector('article[data-id="a1"]') as HTMLElement & { __mark?: boolean }).__mark = true; });
    assert.equal(await page.getAttribute('article[data-id="a2"]', 'aria-busy'), 'true');
    assert.equal(await page.getAttribute('main.messages', 'aria-live'), 'polite');

    // stream the answer in small pieces, a frame apart
    for (let i = 0; i < ANSWER.length; i += 7) {
      await panel.send({ type: 'delta', conversationId: 'c1', messageId: 'a2', text: ANSWER.slice(i, i + 7) });
      if (i % 35 === 0) await panel.nextFrames(1);
    }
    await panel.nextFrames(2);
    const streamingText = await page.textContent('article[data-id="a2"] .message-body');
    assert.ok(streamingText?.includes('原地反转'), streamingText ?? '');
    // a stable chunk (the finished code block) is already highlighted while the rest streams
    assert.ok(await page.locator('article[data-id="a2"] .stream-stable .hljs-keyword').count() > 0);
    // ignored: a delta for another conversation
    await panel.send({ type: 'delta', conversationId: 'other', messageId: 'a2', text: 'NOPE' });
    await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 'a2', status: 'complete', finishReason: 'stop', promptTokens: 20, completionTokens: 60, historyTrimmed: 2 });

    const body = page.locator('article[data-id="a2"] .message-body');
    assert.equal(await body.locator('strong').textContent(), 'reverse');
    assert.equal(await body.locator('ol li').count(), 2);
    assert.ok((await body.locator('.hljs-keyword').allTextContents()).includes('def'));
    assert.equal(await body.locator('.code-block').getAttribute('data-lang'), 'python');
    assert.ok(!(await body.textContent())?.includes('NOPE'));
    assert.equal(await page.getAttribute('article[data-id="a2"]', 'aria-busy'), 'false');
    // the figures are a tooltip on the answer's toolbar, not text under every answer
    const usage = await page.getAttribute('article[data-id="a2"] .message-toolbar .message-usage', 'title');
    assert.match(usage ?? '', /20 prompt tokens, 60 answer tokens/);
    assert.match(usage ?? '', /2 earlier messages were left out/);
    assert.doesNotMatch(await page.textContent('article[data-id="a2"]') ?? '', /prompt tokens|left out/);
    // the earlier message was never re-rendered
    assert.equal(await page.evaluate(() => (document.querySelector('article[data-id="a1"]') as HTMLElement & { __mark?: boolean }).__mark), true);
    // a state echoing the same messages keeps every node
    await panel.send(stateMsg([user('u1', 'earlier question'), assistant('a1', 'earlier *answer*'), user('u2', 'How do I reverse a list?'), assistant('a2', ANSWER, 'complete', { promptTokens: 20, completionTokens: 60, historyTrimmed: 2, finishReason: 'stop' })]));
    assert.equal(await page.evaluate(() => (document.querySelector('article[data-id="a1"]') as HTMLElement & { __mark?: boolean }).__mark), true);

    const out = resolve(__dirname, '../../test-results');
    mkdirSync(out, { recursive: true });
    await page.screenshot({ path: join(out, 'chat-panel.png'), fullPage: true });
    await closePanel(panel);
  });

  it('Stop button and Escape post stop while busy; Send is replaced by Stop', async () => {
    const panel = await openPanel();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', 'partial', 'streaming')]));
    assert.equal(await page.isVisible('button[data-action="send"]'), false);
    await panel.clearPosted();
    await page.click('button[data-action="stop"]');
    await page.focus('textarea');
    await page.keyboard.press('Escape');
    await page.focus('main.messages');
    await page.keyboard.press('Escape');
    assert.deepEqual(await panel.posted(), [{ type: 'stop' }, { type: 'stop' }, { type: 'stop' }]);
    await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 'a1', status: 'stopped', finishReason: 'cancelled' });
    assert.equal(await page.isVisible('button[data-action="send"]'), true);
    assert.equal(await page.getAttribute('article[data-id="a1"]', 'data-status'), 'stopped');
    assert.match(await page.textContent('article[data-id="a1"] .message-marker') ?? '', /Stopped/);
    assert.equal((await page.textContent('article[data-id="a1"] .message-body'))?.trim(), 'partial');
    await closePanel(panel);
  });

  it('keyboard: Enter sends, Shift+Enter adds a line, empty input sends nothing, focus stays in the input', async () => {
    const panel = await openPanel();
    const { page } = panel;
    await panel.send(stateMsg([]));
    await panel.clearPosted();
    await page.focus('textarea');
    await page.keyboard.press('Enter');
    await page.keyboard.type('line one');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('第二行');
    assert.equal(await page.inputValue('textarea'), 'line one\n第二行');
    await page.keyboard.press('Enter');
    assert.deepEqual(await panel.posted(), [{ type: 'send', text: 'line one\n第二行' }]);
    assert.equal(await page.inputValue('textarea'), '');
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'TEXTAREA');
    await closePanel(panel);
  });

  it('code block buttons post copyCode, insertCode, openInEditor and applyCode with the code and language, each validated', async () => {
    const panel = await openPanel();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', 'Text\n\n```ts\nconst x: number = 1;\nconsole.log(x);\n```\n\n```\nplain <b>text</b>\n```\n')]));
    await panel.clearPosted();
    const first = page.locator('.code-block').first();
    const copy = first.locator('button[data-action="codeCopy"]');
    await copy.click();
    // Copy says "Copied" with a check mark for a moment, then is the copy icon again
    assert.equal(await copy.getAttribute('title'), 'Copied');
    assert.equal(await copy.locator('.codicon-check').count(), 1);
    await page.waitForFunction(() => document.querySelector('.code-block button[data-action="codeCopy"]')?.getAttribute('title') === 'Copy');
    assert.equal(await copy.getAttribute('aria-label'), 'Copy: Code block (ts)');
    assert.equal(await copy.locator('.codicon-copy').count(), 1);
    await first.locator('button[data-action="codeInsert"]').click();
    await first.locator('button[data-action="codeOpen"]').click();
    await first.locator('button[data-action="codeApply"]').click();
    await page.locator('.code-block').nth(1).locator('button[data-action="codeOpen"]').click();
    await page.locator('.code-block').nth(1).locator('button[data-action="codeApply"]').click();
    const code = 'const x: number = 1;\nconsole.log(x);';
    const posted = await panel.posted();
    assert.deepEqual(posted, [
      { type: 'copyCode', code },
      { type: 'insertCode', code },
      { type: 'openInEditor', code, language: 'ts' },
      { type: 'applyCode', code },
      { type: 'openInEditor', code: 'plain <b>text</b>', language: '' },
      { type: 'applyCode', code: 'plain <b>text</b>' },
    ]);
    for (const m of posted) assert.deepEqual(parseWebviewToHost(m), m, `the host accepts ${m.type}`);
    assert.match(await first.locator('button[data-action="codeInsert"]').getAttribute('aria-label') ?? '', /Insert at Cursor: Code block \(ts\)/);
    await closePanel(panel);
  });

  for (const width of [300, 220]) {
    it(`code block toolbar at ${width} px: the actions as words (Apply included), inside the block; Wrap wraps every block; one background`, async () => {
      const panel = await openPanel();
      const { page } = panel;
      await page.setViewportSize({ width, height: 800 });
      const longLine = `    return items[::-1]  # ${'a comment far wider than the panel, '.repeat(3)}`;
      await panel.send(stateMsg([user('u1', 'q'), assistant('a1', [
        `\`\`\`python\ndef reverse(items):\n${longLine}\n\`\`\``,
        '```objective-c++-preprocessed-hdr\nint x;\n```',
        '```\nplain\n```',
      ].join('\n\n'))]));
      const blocks = page.locator('.code-block');
      assert.equal(await blocks.count(), 3);
      const buttons = await blocks.first().locator('.code-toolbar button').evaluateAll((bs) => bs.map((b) => ({
        action: b.getAttribute('data-action'), title: b.getAttribute('title'), label: b.getAttribute('aria-label'),
        word: b.querySelector('.action-word')?.textContent, iconShown: getComputedStyle(b.querySelector('.codicon')!).display !== 'none',
        pressed: b.getAttribute('aria-pressed'),
      })));
      assert.deepEqual(buttons, [
        { action: 'codeCopy', title: 'Copy', label: 'Copy: Code block (python)', word: 'Copy', iconShown: false, pressed: null },
        { action: 'codeInsert', title: 'Insert at Cursor', label: 'Insert at Cursor: Code block (python)', word: 'Insert', iconShown: false, pressed: null },
        { action: 'codeOpen', title: 'Open in Editor', label: 'Open in Editor: Code block (python)', word: 'Open', iconShown: false, pressed: null },
        { action: 'codeApply', title: 'Apply to Selection', label: 'Apply to Selection: Code block (python)', word: 'Apply', iconShown: false, pressed: null },
        { action: 'codeWrap', title: 'Wrap long lines in code blocks', label: 'Wrap long lines in code blocks', word: 'Wrap', iconShown: false, pressed: 'false' },
      ], 'words, not bare icons, in a narrow block');
      const layout = () => page.$$eval('.code-block', (els) => els.map((block) => {
        const bar = block.querySelector('.code-toolbar')!;
        const lang = bar.querySelector('.code-lang') as HTMLElement;
        const pre = block.querySelector('pre')!;
        const code = pre.querySelector('code')!;
        const box = (e: Element) => e.getBoundingClientRect();
        const buttons = Array.from(bar.querySelectorAll('button'));
        const lineHeight = parseFloat(getComputedStyle(lang).lineHeight) || parseFloat(getComputedStyle(lang).fontSize) * 1.4;
        const bg = (e: Element) => getComputedStyle(e).backgroundColor;
        return {
          text: lang.textContent,
          rows: new Set(Array.from(bar.children).map((k) => Math.round(box(k).top + box(k).height / 2))).size,
          overflowRight: Math.max(...Array.from(bar.children).map((k) => box(k).right)) - box(block).right,
          wordsCut: buttons.filter((b) => b.scrollWidth > b.clientWidth).map((b) => b.textContent),
          langHeight: box(lang).height, lineHeight,
          langStyle: [getComputedStyle(lang).whiteSpace, getComputedStyle(lang).textOverflow, getComputedStyle(lang).overflow],
          langTruncated: lang.scrollWidth > lang.clientWidth,
          preScrolls: pre.scrollWidth > pre.clientWidth, preOverflowX: getComputedStyle(pre).overflowX,
          backgrounds: { block: bg(block), bar: bg(bar), pre: bg(pre), code: bg(code), spans: Array.from(code.querySelectorAll('span')).map(bg) },
        };
      }));
      const before = await layout();
      const blockBackground = 'rgb(43, 43, 43)'; // --vscode-textCodeBlock-background of the test theme
      for (const l of before) {
        assert.ok(l.rows <= 2, `the toolbar takes at most two rows: ${JSON.stringify(l)}`);
        assert.ok(l.overflowRight <= 0.5, `nothing sticks out of the block: ${l.overflowRight}`);
        assert.deepEqual(l.wordsCut, [], 'every word shows whole');
        assert.ok(l.langHeight < 1.5 * l.lineHeight, `the label is one line: ${l.langHeight} vs ${l.lineHeight}`);
        assert.deepEqual(l.langStyle, ['nowrap', 'ellipsis', 'hidden']);
        // One background: the block's; the toolbar, the <pre>, the <code> (which VS Code's defaults give a
        // background of its own, painted line by line) and the highlighted tokens show it through.
        assert.equal(l.backgrounds.block, blockBackground);
        for (const b of [l.backgrounds.bar, l.backgrounds.pre, l.backgrounds.code, ...l.backgrounds.spans]) assert.equal(b, 'rgba(0, 0, 0, 0)');
      }
      assert.equal(before[0]!.text, 'python');
      assert.equal(before[1]!.text, 'objective-c++-preprocessed-hdr');
      assert.equal(before[1]!.langTruncated, true, 'a long label ends in an ellipsis instead of wrapping');
      assert.equal(before[2]!.text, '');
      assert.equal(before[0]!.preScrolls, true, 'the long line scrolls inside the block');
      assert.equal(before[0]!.preOverflowX, 'auto');
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the panel itself does not scroll sideways');

      // Wrap: every block wraps its long lines (nothing to scroll), every Wrap button says it is on; nothing posted.
      await panel.clearPosted();
      await blocks.first().locator('button[data-action="codeWrap"]').click();
      const wrapped = await layout();
      assert.equal(wrapped[0]!.preScrolls, false, 'the long line wraps');
      assert.deepEqual(await page.locator('button[data-action="codeWrap"]').evaluateAll((bs) => bs.map((b) => b.getAttribute('aria-pressed'))), ['true', 'true', 'true']);
      assert.deepEqual(await panel.posted(), []);
      await blocks.first().locator('button[data-action="codeApply"]').click();
      const posted = await panel.posted();
      const expected = { type: 'applyCode', code: `def reverse(items):\n${longLine}` };
      assert.deepEqual(posted, [expected], 'the code applied is the code, not its wrapped lines');
      assert.deepEqual(parseWebviewToHost(posted[0]), expected, 'the host\'s parser accepts it unchanged');
      const out = resolve(__dirname, '../../test-results');
      mkdirSync(out, { recursive: true });
      await page.screenshot({ path: join(out, `chat-code-toolbar-${width}px.png`), fullPage: true });
      await blocks.first().locator('button[data-action="codeWrap"]').click();
      assert.equal((await layout())[0]!.preScrolls, true, 'Wrap again: the line scrolls again');
      await closePanel(panel);
    });
  }

  it('code block toolbar in a wide panel: each action with its icon and its word on one row', async () => {
    const panel = await openPanel();
    const { page } = panel;
    await page.setViewportSize({ width: 640, height: 600 });
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', '```python\nprint(1)\n```')]));
    const bar = page.locator('.code-block .code-toolbar');
    assert.deepEqual(await bar.locator('button').evaluateAll((bs) => bs.map((b) => [b.querySelector('.codicon')!.className, getComputedStyle(b.querySelector('.codicon')!).display !== 'none', b.textContent])), [
      ['codicon codicon-copy', true, 'Copy'], ['codicon codicon-insert', true, 'Insert'], ['codicon codicon-new-file', true, 'Open'],
      ['codicon codicon-diff', true, 'Apply'], ['codicon codicon-word-wrap', true, 'Wrap'],
    ]);
    assert.equal(await bar.evaluate((b) => new Set(Array.from(b.children).map((k) => { const r = k.getBoundingClientRect(); return Math.round(r.top + r.height / 2); })).size), 1, 'one row');
    await closePanel(panel);
  });

  it('restores from getState after a reload (hidden and re-shown panel), then asks the host again', async () => {
    const panel = await openPanel();
    const { page } = panel;
    await panel.send({ type: 'l10n', strings: { send: '发送', roleUser: '你' } });
    await panel.send(stateMsg([user('u1', 'persist me'), assistant('a1', '', 'streaming')]));
    await panel.send({ type: 'delta', conversationId: 'c1', messageId: 'a1', text: 'streamed **so far**' });
    await page.fill('textarea', 'unsent draft');
    await page.waitForFunction(() => (sessionStorage.getItem('vscodeState') ?? '').includes('unsent draft'));
    await page.reload();
    await page.waitForSelector('article[data-id="a1"]');
    assert.equal((await page.textContent('article[data-id="u1"] .message-body'))?.trim(), 'persist me');
    assert.match(await page.textContent('article[data-id="a1"] .message-body') ?? '', /streamed so far/);
    assert.equal(await page.textContent('article[data-id="u1"] .message-role'), '你');
    assert.equal(await page.inputValue('textarea'), 'unsent draft');
    assert.deepEqual(await panel.posted(), [{ type: 'ready' }]);
    await closePanel(panel);
  });

  it('a model a GPU fault stopped: says so with the cause and offers Reload Model, which asks the host to load', async () => {
    const panel = await openPanel();
    const { page } = panel;
    const reason = 'The model failed: reload it. (the model failed: CUDA error: an illegal memory access was encountered; reload it)';
    await panel.send(stateMsg([], { server: { server: 'running', model: 'faulted', reason, actions: ['reloadModel'] } }));
    const box = page.locator('.server-status');
    assert.equal(await box.isVisible(), true);
    assert.match(await box.textContent() ?? '', /stopped after a GPU fault[\s\S]*illegal memory access/);
    assert.equal(await box.locator('button[data-action="reloadModel"]').textContent(), 'Reload Model');
    await panel.clearPosted();
    await box.locator('button[data-action="reloadModel"]').click();
    assert.deepEqual(await panel.posted(), [{ type: 'loadModel' }]);
    await closePanel(panel);
  });

  it('not-ready model: explains why, offers Start/Load/Settings, and does not send', async () => {
    const panel = await openPanel();
    const { page } = panel;
    await panel.send(stateMsg([], { server: { server: 'stopped', model: 'unloaded', reason: 'Docker is not running.', actions: ['startServer', 'loadModel', 'openSettings'] } }));
    const box = page.locator('.server-status');
    assert.equal(await box.isVisible(), true);
    assert.match(await box.textContent() ?? '', /not running[\s\S]*Docker is not running\./);
    await panel.clearPosted();
    await box.locator('button[data-action="startServer"]').click();
    await box.locator('button[data-action="loadModel"]').click();
    await box.locator('button[data-action="openSettings"]').click();
    await page.fill('textarea', 'hello');
    await page.press('textarea', 'Enter');
    assert.equal(await page.isDisabled('button[data-action="send"]'), true);
    assert.deepEqual(await panel.posted(), [{ type: 'startServer' }, { type: 'loadModel' }, { type: 'openSettings' }]);
    assert.equal(await page.inputValue('textarea'), 'hello', 'the draft is kept');
    // the host's error survives the state update that follows it, until dismissed
    await panel.send({ type: 'error', message: 'The model is not ready, so questions cannot be sent yet.' });
    await panel.send(stateMsg([]));
    assert.equal(await box.isVisible(), false);
    assert.match(await page.textContent('.error-banner[role="alert"]') ?? '', /not ready/);
    await page.click('button[data-action="dismissError"]');
    assert.equal(await page.locator('.error-banner *').count(), 0);
    await closePanel(panel);
  });

  it('marks partial answers (stopped, failed, interrupted); any answer can be regenerated, any question edited in place', async () => {
    const panel = await openPanel();
    const { page } = panel;
    await panel.send(stateMsg([
      user('u1', 'q1'), assistant('a1', 'half', 'stopped'),
      user('u2', 'q2'), assistant('a2', 'cut', 'failed', { error: 'connection reset' }),
      user('u3', 'last question'), assistant('a3', 'gone', 'interrupted'),
    ]));
    assert.match(await page.textContent('article[data-id="a1"] .message-marker') ?? '', /Stopped — partial answer/);
    assert.match(await page.textContent('article[data-id="a2"] .message-marker') ?? '', /Failed — partial answer: connection reset/);
    assert.match(await page.textContent('article[data-id="a3"] .message-marker') ?? '', /Interrupted/);
    await panel.clearPosted();
    await page.hover('article[data-id="a1"]');
    await page.click('article[data-id="a1"] button[data-action="regenerate"]');
    await page.hover('article[data-id="u2"]');
    await page.click('article[data-id="u2"] button[data-action="editQuestion"]');
    // the question turns into an input holding its text; what sending would replace is dimmed
    const editor = page.locator('article[data-id="u2"] .question-editor textarea');
    assert.equal(await editor.inputValue(), 'q2');
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('question-edit-input')), true);
    assert.deepEqual(await page.locator('article.superseded').evaluateAll((els) => els.map((e) => e.getAttribute('data-id'))), ['a2', 'u3', 'a3']);
    await page.keyboard.type(' (edited)');
    await page.keyboard.press('Enter');
    assert.deepEqual(await panel.posted(), [{ type: 'regenerate', messageId: 'a1' }, { type: 'editQuestion', messageId: 'u2', text: 'q2 (edited)' }]);
    assert.equal(await page.locator('.question-editor').count(), 0, 'the editor closes when sent');
    assert.equal(await page.locator('article.superseded').count(), 0);
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('input')), true, 'the focus goes back to the input');
    // Escape cancels an edit and leaves the question as it was; so does Cancel
    await page.click('article[data-id="u3"] button[data-action="editQuestion"]', { force: true });
    await page.keyboard.type(' changed');
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('.question-editor').count(), 0);
    assert.equal((await page.textContent('article[data-id="u3"] .message-body'))?.trim(), 'last question');
    await page.click('article[data-id="u1"] button[data-action="editQuestion"]', { force: true });
    await page.click('.question-editor button[data-action="cancelEdit"]');
    assert.equal(await page.locator('.question-editor').count(), 0);
    assert.equal((await panel.posted()).length, 2, 'nothing more was posted');
    await closePanel(panel);
  });

  it('the panel has no buttons of its own above the messages; l10n relabels it; malformed host messages are ignored', async () => {
    const panel = await openPanel();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', 'a')]));
    // New Chat and the history are the view's title actions (package.json), not text buttons in the panel
    for (const gone of ['newChat', 'toggleHistory', 'selectConversation', 'deleteConversation', 'editLast', 'cancelEdit']) {
      assert.equal(await page.locator(`[data-action="${gone}"]`).count(), 0, gone);
    }
    assert.equal(await page.locator('header.toolbar, nav.history, .history-list').count(), 0);
    await panel.send({ type: 'l10n', strings: { send: '发送', sendTooltip: '发送（Enter）', inputPlaceholder: '向 {0} 提问', regenerate: '重新生成' } });
    assert.equal(await page.getAttribute('button[data-action="send"]', 'aria-label'), '发送');
    assert.equal(await page.getAttribute('button[data-action="send"]', 'title'), '发送（Enter）');
    assert.equal(await page.getAttribute('textarea.input', 'placeholder'), '向 ChatGLM3-6B 提问');
    assert.equal(await page.getAttribute('article[data-id="a1"] button[data-action="regenerate"]', 'aria-label'), '重新生成');
    // malformed host messages are ignored
    await panel.send({ type: 'state', messages: 'nope' });
    await panel.send({ type: 'evil', html: '<img src=x>' });
    await panel.send({ ...(stateMsg([]) as Record<string, unknown>), conversations: [] });
    assert.equal(await page.locator('main.messages article').count(), 2);
    await closePanel(panel);
  });

  it('a huge code block streams and renders completely (plain text above the highlight limit)', async () => {
    const panel = await openPanel();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'big'), assistant('a1', '', 'streaming')]));
    const lines = Array.from({ length: 6000 }, (_, i) => `    value_${i} = compute(${i}) + 1  # line ${i}`);
    const text = `Big file:\n\n\`\`\`python\n${lines.join('\n')}\n\`\`\`\n\nDone.`;
    const chunk = 4000;
    for (let i = 0; i < text.length; i += chunk) {
      await panel.send({ type: 'delta', conversationId: 'c1', messageId: 'a1', text: text.slice(i, i + chunk) });
      if ((i / chunk) % 10 === 0) await panel.nextFrames(1);
    }
    await panel.nextFrames(2);
    assert.equal((await page.textContent('article[data-id="a1"] pre'))?.split('\n').filter((l) => l.includes('value_')).length, 6000);
    await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 'a1', status: 'complete', finishReason: 'stop' });
    const code = await page.textContent('article[data-id="a1"] .code-block pre code');
    assert.equal(code?.split('\n').filter((l) => l.includes('value_')).length, 6000);
    // Longer than WHOLE_RENDER_MAX (streaming.ts): the answer keeps its streamed groups, so the paragraph is in one.
    assert.equal(await page.locator('article[data-id="a1"] .message-body p').last().textContent(), 'Done.');
    await closePanel(panel);
  });

  it('while streaming, the incrementally rendered answer shows what the final one-shot render shows', async () => {
    const panel = await openPanel();
    const { page } = panel;
    const text = `${ANSWER}\n${syntheticTokens(1200).join('')}`;
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', '', 'streaming')]));
    for (let i = 0; i < text.length; i += 11) {
      await panel.send({ type: 'delta', conversationId: 'c1', messageId: 'a1', text: text.slice(i, i + 11) });
      if (i % 110 === 0) await panel.nextFrames(1);
    }
    await panel.nextFrames(2);
    const shape = () => page.evaluate(() => {
      const body = document.querySelector('article[data-id="a1"] .message-body') as HTMLElement;
      const count = (sel: string) => body.querySelectorAll(sel).length;
      return {
        text: (body.textContent ?? '').replace(/\s+/g, ' ').trim(),
        pre: count('pre'), li: count('li'), strong: count('strong'), h2: count('h2'), blockquote: count('blockquote'),
        inlineCode: count(':not(pre) > code'), keywords: count('.hljs-keyword') > 0,
      };
    });
    const streamed = await shape();
    await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 'a1', status: 'complete', finishReason: 'stop' });
    const final = await shape();
    // the streamed view lacks only the Copy/Insert/Open toolbar of the last (still open) block, if any
    assert.equal(streamed.text.replace(/Copy Insert at Cursor Open in Editor/g, '').replace(/\s+/g, ' '), final.text.replace(/Copy Insert at Cursor Open in Editor/g, '').replace(/\s+/g, ' '));
    assert.deepEqual({ ...streamed, text: '' }, { ...final, text: '' });
    await closePanel(panel);
  });

  it('follows the streamed answer at the bottom, but not after the user scrolls up', async () => {
    const panel = await openPanel();
    const { page } = panel;
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', '', 'streaming')]));
    const gap = () => page.evaluate(() => { const m = document.querySelector('main.messages') as HTMLElement; return m.scrollHeight - m.scrollTop - m.clientHeight; });
    for (let i = 0; i < 60; i += 1) await panel.send({ type: 'delta', conversationId: 'c1', messageId: 'a1', text: `Paragraph ${i}.\n\n` });
    await panel.nextFrames(2);
    assert.ok(await page.evaluate(() => { const m = document.querySelector('main.messages') as HTMLElement; return m.scrollHeight > m.clientHeight * 1.5; }), 'content overflows');
    assert.ok(await gap() < 5, 'pinned to the bottom');
    await page.evaluate(() => { const m = document.querySelector('main.messages') as HTMLElement; m.scrollTop = 0; m.dispatchEvent(new Event('scroll')); });
    for (let i = 0; i < 20; i += 1) await panel.send({ type: 'delta', conversationId: 'c1', messageId: 'a1', text: `More ${i}.\n\n` });
    await panel.nextFrames(2);
    assert.equal(await page.evaluate(() => (document.querySelector('main.messages') as HTMLElement).scrollTop), 0, 'reading position kept');
    await closePanel(panel);
  });

  it('render-cost helper: streams N tokens a few per frame and reports per-frame statistics', async () => {
    const panel = await openPanel();
    const r = await measureStreamingRenderCost(panel, { tokens: 600, tokensPerFrame: 8, priorTurns: 3 });
    assert.equal(r.tokens, 600);
    assert.equal(r.chars, syntheticTokens(600).join('').length);
    assert.ok(r.frames >= 600 / 8 - 1, `frames ${r.frames}`);
    assert.ok(Number.isFinite(r.totalMs) && Number.isFinite(r.finalizeMs));
    const rendered = await panel.page.evaluate(() => document.querySelector('article[data-id="mstream"] .message-body')?.textContent ?? '');
    assert.ok(rendered.includes('def count_keys_1(path: str) -> Counter:'), 'code of the first section is rendered');
    assert.ok(r.firstTenthAvgMs >= 0 && r.lastTenthAvgMs >= 0 && r.maxMs >= r.lastTenthAvgMs);
    await closePanel(panel);
  });
});
