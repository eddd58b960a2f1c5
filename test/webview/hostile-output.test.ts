// Model output is untrusted: whatever it contains must render as inert text. Run WITHOUT the CSP first, so the
// sanitiser alone is tested (the CSP would block inline handlers anyway), then with it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assistant, startHarness, stateMsg, user, type Harness, type Panel } from './support/harness';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const PAYLOADS = [
  '<img src=x onerror="window.__pwned=\'img\'">',
  '<script>window.__pwned="script"</script>',
  '<svg onload="window.__pwned=\'svg\'"><circle r="5"/></svg>',
  '<iframe src="https://attacker.example/frame"></iframe>',
  '<style>body{background:url(https://attacker.example/css.png)}</style>',
  '<a href="https://example.com" onclick="window.__pwned=\'a\'">raw html link</a>',
  '[js link](javascript:window.__pwned=\'js\')',
  '[mixed case](  JaVaScRiPt:window.__pwned=\'js2\')',
  '[entity](jav&#x61;script:window.__pwned=\'js3\')',
  '[data link](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0nZGF0YSc8L3NjcmlwdD4=)',
  '[vb](vbscript:msgbox(1))',
  '[file](file:///etc/passwd)',
  '<javascript:window.__pwned=\'autolink\'>',
  '[ref link][r]\n\n[r]: javascript:window.__pwned=\'ref\'',
  '![remote image](https://attacker.example/pixel.png)',
  '![local image](/media/chat/track.png)',
  '![data image](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9IndpbmRvdy5fX3B3bmVkPTEiLz4=)',
  '```"><img src=x onerror="window.__pwned=\'fence\'">\ncode\n```',
  '&lt;img src=x onerror="window.__pwned=\'entity\'"&gt;',
  '<details open ontoggle="window.__pwned=\'details\'">x</details>',
  '<math><mi xlink:href="javascript:window.__pwned=1">m</mi></math>',
  '[ok link](https://example.com/docs "title")',
].join('\n\n');

async function assertInert(panel: Panel, origin: string): Promise<void> {
  const { page } = panel;
  await panel.nextFrames(3);
  await page.waitForTimeout(200); // let any (wrongly) created image or frame start loading
  const report = await page.evaluate(() => {
    const root = document.getElementById('root') as HTMLElement;
    const bad = root.querySelectorAll('img, script, iframe, frame, svg, math, style, object, embed, form, input:not([type]), video, audio, link, meta, details, base');
    const attrs: string[] = [];
    for (const el of Array.from(root.querySelectorAll('*'))) {
      for (const a of Array.from(el.attributes)) if (/^on/i.test(a.name) || a.name === 'style' || a.name === 'srcdoc' || a.name === 'src') attrs.push(`${el.tagName}.${a.name}`);
    }
    const hrefs = Array.from(root.querySelectorAll('a')).map((a) => a.getAttribute('href'));
    return { pwned: (window as unknown as { __pwned?: unknown }).__pwned, bad: Array.from(bad).map((e) => e.tagName), attrs, hrefs, text: root.textContent ?? '' };
  });
  assert.equal(report.pwned, undefined, 'no script ran');
  assert.deepEqual(report.bad, [], 'no active elements');
  assert.deepEqual(report.attrs, [], 'no handler/style/src attributes');
  for (const href of report.hrefs) if (href !== null) assert.match(href, /^(https?:|mailto:)/, `unsafe href ${href}`);
  assert.ok(report.hrefs.includes('https://example.com/docs'), 'a safe link survives');
  assert.ok(report.text.includes('<script>window.__pwned="script"</script>'), 'raw HTML is shown as text');
  assert.ok(report.text.includes('[image not loaded: remote image]'), 'images are replaced by a marker');
  const allowed = new Set(['/panel.html', '/dist/webview.js', '/dist/webview.css', '/media/chat/chat.css', '/media/icons/chatglm.svg', '/theme.css', '/favicon.ico']);
  // ...and the codicon font the bundle's stylesheet names (dist/codicon-<hash>.ttf)
  const unexpected = harness.requests.filter((u) => !u.startsWith(origin) || !(allowed.has(new URL(u).pathname) || /^\/dist\/codicon-[A-Z0-9]+\.ttf$/.test(new URL(u).pathname)));
  assert.deepEqual(unexpected, [], 'no request left the page');
}

describe('hostile model output', () => {
  for (const csp of [false, true]) {
    it(`stays inert when rendered whole and when streamed (${csp ? 'with' : 'without'} CSP)`, async () => {
      const panel = await harness.open({ csp });
      harness.requests.length = 0;
      await panel.send(stateMsg([
        // questions render their Markdown through the same sanitising renderer as answers
        user('u1', `<img src=x onerror="window.__pwned='user'"> question\n\n${PAYLOADS}`),
        assistant('a1', PAYLOADS),
        user('u2', 'again'),
        assistant('a2', '', 'streaming'),
      ]));
      for (let i = 0; i < PAYLOADS.length; i += 13) {
        await panel.send({ type: 'delta', conversationId: 'c1', messageId: 'a2', text: PAYLOADS.slice(i, i + 13) });
        if (i % 130 === 0) await panel.nextFrames(1);
      }
      await panel.nextFrames(2);
      await assertInert(panel, harness.origin);
      await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 'a2', status: 'failed', error: '<img src=x onerror="window.__pwned=\'error\'">' });
      await panel.send({ type: 'error', message: '<script>window.__pwned="banner"</script>' });
      await panel.send(stateMsg([user('u1', 'q')], { server: { server: 'failed', model: 'failed', reason: '<img src=x onerror="window.__pwned=\'reason\'">', actions: ['startServer'] } }));
      await panel.send(stateMsg([user('u1', 'q'), assistant('a1', PAYLOADS), user('u2', 'again'), assistant('a2', PAYLOADS, 'failed', { error: '<b>x</b>' })]));
      await assertInert(panel, harness.origin);
      // unsafe links are not links at all: their markdown is shown as text
      assert.equal(await panel.page.locator('article[data-id="a1"] a', { hasText: 'js link' }).count(), 0);
      assert.match(await panel.page.textContent('article[data-id="a1"]') ?? '', /\[js link\]\(javascript:/);
      // clicking every remaining link runs nothing (safe http(s) links are left to VS Code to open)
      for (const a of await panel.page.locator('#root a:not([href])').all()) await a.click();
      assert.equal(await panel.page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned), undefined);
      assert.deepEqual(panel.errors, []);
      await panel.page.close();
    });
  }
});
