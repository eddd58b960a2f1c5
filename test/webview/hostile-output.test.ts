// Model output is untrusted: whatever it contains must render as inert text. Run WITHOUT the CSP first, so the
// sanitiser alone is tested (the CSP would block inline handlers anyway), then with it. A MutationObserver watches
// the whole document while the corpus renders (whole, streamed one character per frame, in chunks cut inside
// every tag, entity and fence marker, and in random chunks): no forbidden element or attribute may appear, not
// even for a moment, no payload may run, no request may leave the page and no prototype may change.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { evaluateLink } from '../../src/core/links/linkPolicy';
import { assistant, startHarness, stateMsg, user, type Harness, type Panel } from './support/harness';
import { ALL, CORPUS, LINK_TRICKS, randomCuts, SAFE_LINK_TARGETS, trickyCuts } from './support/hostile-corpus';
import { DOM_GUARD, FAST_FRAMES, PWN_SENTINEL } from './support/page-scripts';
import { everyCharacter, streamText } from './support/stream';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

/** Links that stay live but make the host show their real host first (user info before @). */
const CONFIRMED_LINK_TARGETS = new Set(['https://example.com@attacker.example/', 'https://example.com@attacker.example/auto']);
const ALLOWED_PATHS = new Set(['/panel.html', '/dist/webview.js', '/dist/webview.css', '/media/chat/chat.css', '/media/icons/chatglm.svg', '/theme.css', '/favicon.ico']);
/** ...and the codicon font the bundle's stylesheet names (dist/codicon-<hash>.ttf). */
const allowedPath = (path: string) => ALLOWED_PATHS.has(path) || /^\/dist\/codicon-[A-Z0-9]+\.ttf$/.test(path);

async function open(csp: boolean): Promise<Panel> {
  const panel = await harness.open({ csp, init: [PWN_SENTINEL, DOM_GUARD, FAST_FRAMES] });
  harness.requests.length = 0;
  return panel;
}

interface Report {
  pwned: unknown;
  guard: { mutations: number; checkedElements: number; violations: string[] };
  bad: string[];
  attrs: string[];
  links: Array<{ href: string; text: string }>;
  protoSame: boolean;
  polluted: string[];
  text: string;
  csp: string[];
}

async function report(panel: Panel): Promise<Report> {
  await panel.nextFrames(2);
  await panel.page.waitForTimeout(100); // let any (wrongly) created image or frame start loading
  return panel.page.evaluate(() => {
    const w = window as unknown as { __domGuardFlush(): void; __domGuard: Report['guard']; __pwned?: unknown; __protoKeys: string; __cspViolations: string[] };
    w.__domGuardFlush();
    const root = document.getElementById('root') as HTMLElement;
    const bad = root.querySelectorAll('img, script, iframe, frame, svg, math, style, object, embed, form, input, video, audio, link, meta, details, base, template, noscript');
    const attrs: string[] = [];
    for (const el of Array.from(root.querySelectorAll('*'))) {
      for (const a of Array.from(el.attributes)) if (/^on/i.test(a.name) || ['style', 'srcdoc', 'src', 'href', 'xlink:href', 'action'].includes(a.name)) attrs.push(`${el.tagName}.${a.name}`);
    }
    const links = Array.from(root.querySelectorAll('a[data-href]')).map((a) => ({ href: a.getAttribute('data-href') ?? '', text: (a.textContent ?? '').trim() }));
    const probe = {} as Record<string, unknown>;
    const polluted = ['polluted', 'isAdmin', 'href', 'innerHTML', 'x'].filter((k) => k in probe);
    return {
      pwned: w.__pwned, guard: w.__domGuard, bad: Array.from(bad).map((e) => e.tagName), attrs, links,
      protoSame: Object.getOwnPropertyNames(Object.prototype).sort().join(',') === w.__protoKeys, polluted,
      text: root.textContent ?? '', csp: w.__cspViolations,
    };
  });
}

function assertInert(r: Report, what: string): void {
  assert.equal(r.pwned, undefined, `${what}: no payload ran`);
  assert.ok(r.guard.mutations > 0 && r.guard.checkedElements > 0, `${what}: the observer saw the rendering (${JSON.stringify(r.guard)})`);
  assert.deepEqual(r.guard.violations, [], `${what}: nothing forbidden appeared, even transiently`);
  assert.deepEqual(r.bad, [], `${what}: no active elements`);
  assert.deepEqual(r.attrs, [], `${what}: no handler, style, src or href attributes`);
  for (const link of r.links) {
    assert.ok(SAFE_LINK_TARGETS.has(link.href) || CONFIRMED_LINK_TARGETS.has(link.href), `${what}: unexpected live link ${link.href}`);
    assert.notEqual(evaluateLink(link.href, link.text).action, 'reject');
  }
  assert.ok(r.protoSame && r.polluted.length === 0, `${what}: prototypes untouched`);
  assert.deepEqual(r.csp, [], `${what}: no CSP violation`);
  const unexpected = harness.requests.filter((u) => !u.startsWith(harness.origin) || !allowedPath(new URL(u).pathname));
  assert.deepEqual(unexpected, [], `${what}: no request left the page`);
}

async function streamCorpus(panel: Panel, id: string, cuts: readonly number[]): Promise<void> {
  await panel.send(stateMsg([user('u1', 'q'), assistant(id, '', 'streaming')]));
  await streamText(panel, 'c1', id, CORPUS, cuts);
}

describe('hostile model output', () => {
  for (const csp of [false, true]) {
    it(`stays inert rendered whole, and in titles, errors and server reasons (${csp ? 'with' : 'without'} CSP)`, async () => {
      const panel = await open(csp);
      await panel.send(stateMsg([
        // questions render their Markdown through the same sanitising renderer as answers
        user('u1', `<img src=x onerror="__pwn('user')"> question\n\n${CORPUS}`),
        assistant('a1', CORPUS),
      ]));
      const whole = await report(panel);
      assertInert(whole, 'whole');
      assert.ok(whole.text.includes('<script>__pwn("template")</script>'), 'raw HTML is shown as text');
      assert.ok(whole.text.includes('[image not loaded: local image]'), 'images are replaced by a marker');
      assert.deepEqual([...new Set(whole.links.map((l) => l.href))].sort(), [...SAFE_LINK_TARGETS, ...CONFIRMED_LINK_TARGETS].sort(), 'exactly the acceptable links stay live');
      await panel.send(stateMsg([user('u1', 'q'), assistant('a2', 'x', 'streaming')]));
      await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 'a2', status: 'failed', error: '<img src=x onerror="__pwn(\'error\')">' });
      await panel.send({ type: 'error', message: '<script>__pwn("banner")</script>' });
      await panel.send(stateMsg([user('u1', 'q')], { server: { server: 'failed', model: 'failed', reason: '<img src=x onerror="__pwn(\'reason\')">', actions: ['startServer'] } }));
      assertInert(await report(panel), 'chrome');
      assert.deepEqual(panel.errors, []);
      await panel.page.close();
    });

    it(`stays inert streamed in chunks cut inside every tag, entity and fence marker, and in random chunks (${csp ? 'with' : 'without'} CSP)`, async () => {
      const panel = await open(csp);
      const cuts = trickyCuts(CORPUS);
      assert.ok(cuts.length > 400, `${cuts.length} cuts`);
      await streamCorpus(panel, 'a1', cuts);
      assertInert(await report(panel), 'mid-tag chunks, while streaming');
      await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 'a1', status: 'complete' });
      assertInert(await report(panel), 'mid-tag chunks, final');
      await streamCorpus(panel, 'a2', randomCuts(CORPUS.length, 40, csp ? 7 : 3));
      await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 'a2', status: 'complete' });
      assertInert(await report(panel), 'random chunks');
      assert.deepEqual(panel.errors, []);
      await panel.page.close();
    });
  }

  it('the DOM guard reports elements and attribute values that exist only for a moment (self-check)', async () => {
    const panel = await open(true);
    const violations = await panel.page.evaluate(() => {
      const w = window as unknown as { __domGuardFlush(): void; __domGuard: { violations: string[] } };
      const root = document.getElementById('root') as HTMLElement;
      const s = document.createElement('span');
      root.append(s);
      s.setAttribute('onclick', 'x');
      s.removeAttribute('onclick');
      s.remove();
      const holder = document.createElement('div');
      root.append(holder);
      holder.append(document.createElement('object'));
      holder.remove();
      const a = document.createElement('b');
      root.append(a);
      a.setAttribute('title', 'javascript:alert(1)');
      a.setAttribute('title', 'fine');
      a.remove();
      w.__domGuardFlush();
      return w.__domGuard.violations;
    });
    assert.ok(violations.some((v) => /handler attribute onclick on SPAN/.test(v)), violations.join('; '));
    assert.ok(violations.some((v) => /added, then removed: element OBJECT/.test(v)), violations.join('; '));
    assert.ok(violations.some((v) => /earlier script-like value of title on B/.test(v)), violations.join('; '));
    await panel.page.close();
  });

  it('stays inert streamed one character per frame (without CSP: the sanitiser alone)', async () => {
    const panel = await open(false);
    await streamCorpus(panel, 'a1', everyCharacter(CORPUS));
    assertInert(await report(panel), 'per character, while streaming');
    await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 'a1', status: 'complete' });
    assertInert(await report(panel), 'per character, final');
    await panel.page.close();
  });

  it('shows every unsafe link as text, and every payload\'s text, rendered alone', async () => {
    const panel = await open(true);
    await panel.send(stateMsg([user('u1', 'q'), ...ALL.map((x, i) => assistant(`p${i}`, x.markdown))]));
    assertInert(await report(panel), 'one message per payload');
    const rendered = await panel.page.evaluate((n) => Array.from({ length: n }, (_, i) => {
      const body = document.querySelector(`article[data-id="p${i}"] .message-body`) as HTMLElement;
      return { text: body.textContent ?? '', live: Array.from(body.querySelectorAll('a[data-href]')).map((a) => a.getAttribute('data-href')) };
    }), ALL.length);
    ALL.forEach((x, i) => {
      const r = rendered[i]!;
      assert.ok(r.text.trim().length > 0, `${x.id} shows something`);
      if (LINK_TRICKS.includes(x) && !['safe', 'safe-mailto', 'userinfo', 'auto-userinfo'].includes(x.id)) assert.deepEqual(r.live, [], `${x.id} is not a live link`);
    });
    await panel.page.close();
  });
});
