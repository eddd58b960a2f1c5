// Untrusted answers, round two (issue 22), in the built panel: mail links that carry more than their label, invisible
// and bidi characters outside code, labels that only look like their target, local targets, tooltips, and links that
// end up as code. Each payload is rendered alone and the corpus is delivered whole, one character per frame, cut
// inside every tag, entity and fence marker, and in random chunks: no link of the block still streaming is ever
// live, no link that ends as code is live at any moment, the final view equals the one-shot render, and every
// invisible character is marked and isolated wherever it stands.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { evaluateLink } from '../../src/core/links/linkPolicy';
import { assistant, startHarness, stateMsg, user, type Harness, type Panel } from './support/harness';
import { randomCuts, trickyCuts } from './support/hostile-corpus';
import { DOM_GUARD, FAST_FRAMES, LIVE_LINK_WATCH, PWN_SENTINEL } from './support/page-scripts';
import { everyCharacter, streamText } from './support/stream';
import { UNTRUSTED, UNTRUSTED_CORPUS, UNTRUSTED_LIVE } from './support/untrusted-answers';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const open = () => harness.open({ csp: true, init: [PWN_SENTINEL, DOM_GUARD, FAST_FRAMES, LIVE_LINK_WATCH] });

interface BodyView { html: string; live: string[]; marks: string[] }

const bodyOf = (panel: Panel, id: string) => panel.page.evaluate((id) => {
  const body = document.querySelector(`article[data-id="${id}"] .message-body`) as HTMLElement;
  return {
    html: body.innerHTML,
    live: Array.from(body.querySelectorAll('a[data-href]')).map((a) => a.getAttribute('data-href') ?? ''),
    marks: Array.from(body.querySelectorAll('.invisible-char')).map((m) => m.getAttribute('data-code-point') ?? ''),
  };
}, id) as Promise<BodyView>;

const liveLinks = (panel: Panel) => panel.page.evaluate(() => {
  const w = window as unknown as { __liveLinksFlush(): void; __liveLinks: { ever: string[]; inTail: string[] } };
  w.__liveLinksFlush();
  return w.__liveLinks;
});

/** Links of payloads that end as code (attacker.example/<letter><digit>). */
const CODE_LINK = /^https:\/\/attacker\.example\/[a-z]\d$/;

describe('untrusted answers, round two', () => {
  it('renders each payload alone with exactly its live links and its marks, as a question too', async () => {
    const panel = await open();
    await panel.send(stateMsg([user('q', UNTRUSTED_CORPUS), ...UNTRUSTED.map((x, i) => assistant(`p${i}`, x.markdown))]));
    await panel.nextFrames(2);
    for (const [i, x] of UNTRUSTED.entries()) {
      const view = await bodyOf(panel, `p${i}`);
      assert.deepEqual(view.live, x.live ?? [], `${x.id}: live links`);
      assert.deepEqual(view.marks, x.marks ?? [], `${x.id}: marks`);
      for (const url of view.live) assert.notEqual(evaluateLink(url, 'x').action, 'reject', `${x.id}: ${url} is openable`);
    }
    const question = await bodyOf(panel, 'q');
    assert.deepEqual(question.marks, UNTRUSTED.flatMap((x) => x.marks ?? []), 'the user\'s own message is marked the same');
    assert.deepEqual(panel.errors, []);
    await panel.page.close();
  });

  it('neutralises bidi controls outside code: marked, not rendered, isolated, reading order kept', async () => {
    const panel = await open();
    const text = 'Run \u202E`rm -rf ~ #txt.elif tac`\u202C to print the file. [\u202Egepj.exe](https://example.com/file)';
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', text)]));
    await panel.nextFrames(2);
    const r = await panel.page.evaluate(() => {
      const body = document.querySelector('article[data-id="a1"] .message-body') as HTMLElement;
      const code = body.querySelector('code') as HTMLElement;
      const link = body.querySelector('a') as HTMLElement;
      const mark = body.querySelector('.invisible-char') as HTMLElement;
      const raw = body.querySelector('.invisible-char-raw') as HTMLElement;
      // Positions of the first and last character of the code: left to right if nothing reorders them.
      const textNode = Array.from(code.childNodes).find((n) => n.nodeType === Node.TEXT_NODE) as Text;
      const at = (i: number) => { const range = document.createRange(); range.setStart(textNode, i); range.setEnd(textNode, i + 1); return range.getBoundingClientRect().left; };
      const linkText = Array.from(link.childNodes).find((n) => n.nodeType === Node.TEXT_NODE) as Text;
      const linkAt = (i: number) => { const range = document.createRange(); range.setStart(linkText, i); range.setEnd(linkText, i + 1); return range.getBoundingClientRect().left; };
      return {
        codeBidi: getComputedStyle(code).unicodeBidi, linkBidi: getComputedStyle(link).unicodeBidi, markBidi: getComputedStyle(mark).unicodeBidi,
        rawDisplay: getComputedStyle(raw).display, markTitle: mark.title, markShown: getComputedStyle(mark, '::before').content,
        codeOrder: at(0) < at(textNode.length - 1), linkOrder: linkAt(0) < linkAt(linkText.length - 1), linkText: linkText.data,
      };
    });
    assert.deepEqual([r.codeBidi, r.linkBidi, r.markBidi, r.rawDisplay], ['isolate', 'isolate', 'isolate', 'none']);
    assert.equal(r.markTitle, 'Invisible character U+202E: RIGHT-TO-LEFT OVERRIDE');
    assert.equal(r.markShown, '"U+202E"');
    assert.ok(r.codeOrder, 'the inline code reads left to right: `rm -rf ~ …`, not reversed');
    assert.ok(r.linkOrder, `the link text reads ${r.linkText} left to right`);
    await panel.page.close();
  });

  it('puts the real URL first in a link\'s tooltip, the answer\'s title after it, said to be the answer\'s', async () => {
    const panel = await open();
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', '[docs](https://example.com/real "https://docs.google.com/\u202Efake")')]));
    await panel.nextFrames(2);
    const title = await panel.page.evaluate(() => document.querySelector('article[data-id="a1"] a')?.getAttribute('title'));
    assert.equal(title, 'https://example.com/real\nTitle from the answer: https://docs.google.com/<U+202E>fake');
    await panel.page.close();
  });

  const modes: Array<[string, (text: string) => number[]]> = [
    ['whole', () => []],
    ['one character per frame', everyCharacter],
    ['cut inside every tag, entity and fence marker', trickyCuts],
    ['random chunks', (t) => randomCuts(t.length, 40, 5)],
  ];
  for (const [mode, cutsOf] of modes) {
    it(`streamed ${mode}: no link of the open block is live, none that ends as code ever is; the final view is the one-shot render`, async () => {
      const panel = await open();
      await panel.send(stateMsg([user('u1', 'q'), assistant('ref', UNTRUSTED_CORPUS), assistant('a1', '', 'streaming')]));
      await streamText(panel, 'c1', 'a1', UNTRUSTED_CORPUS, cutsOf(UNTRUSTED_CORPUS));
      await panel.nextFrames(2);
      const during = await liveLinks(panel);
      assert.deepEqual(during.inTail, [], `${mode}: no live link in the block still streaming`);
      // ...while the links of blocks already complete are live before the answer ends (all but the last payload's)
      const early = UNTRUSTED.slice(0, -1).flatMap((x) => x.live ?? []);
      assert.deepEqual(early.filter((u) => !during.ever.includes(u)), [], `${mode}: links of complete blocks are live while streaming`);
      await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 'a1', status: 'complete' });
      await panel.nextFrames(2);
      const seen = await liveLinks(panel);
      assert.deepEqual(seen.ever.filter((u) => CODE_LINK.test(u)), [], `${mode}: links that end as code were never live`);
      assert.deepEqual(seen.ever.filter((u) => !UNTRUSTED_LIVE.has(u)), [], `${mode}: nothing else was ever live`);
      const [streamed, whole] = [await bodyOf(panel, 'a1'), await bodyOf(panel, 'ref')];
      assert.equal(streamed.html, whole.html, `${mode}: the final view is the one-shot render`);
      assert.deepEqual(new Set(streamed.live), UNTRUSTED_LIVE);
      assert.deepEqual(streamed.marks, UNTRUSTED.flatMap((x) => x.marks ?? []));
      const guard = await panel.page.evaluate(() => { const w = window as unknown as { __domGuardFlush(): void; __domGuard: { violations: string[] }; __pwned?: unknown }; w.__domGuardFlush(); return { v: w.__domGuard.violations, pwned: w.__pwned }; });
      assert.deepEqual(guard, { v: [], pwned: undefined });
      assert.deepEqual(await panel.cspViolations(), []);
      assert.deepEqual(panel.errors, []);
      await panel.page.close();
    });
  }

  it('counts invisible characters in prose for Copy Message: no "Copied" before the host has asked', async () => {
    const panel = await open();
    await panel.send(stateMsg([user('u1', 'q'), assistant('a1', 'plain answer'), assistant('a2', 'looks plain\u{E0041}\u{E0042}')]));
    await panel.nextFrames(2);
    const copied = async (id: string) => {
      await panel.page.click(`article[data-id="${id}"] [data-action="copyMessage"]`);
      return panel.page.evaluate((id) => document.querySelector(`article[data-id="${id}"] [data-action="copyMessage"]`)?.hasAttribute('data-copied'), id);
    };
    assert.equal(await copied('a1'), true);
    assert.equal(await copied('a2'), false, 'the host warns first (tag characters count)');
    const posted = (await panel.posted()).filter((m) => m.type === 'copyMessage');
    assert.equal(posted.length, 2);
    await panel.page.close();
  });
});
