import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildWebviewHtml, contentSecurityPolicy, makeNonce } from '../../../src/vscode/webviewHtml';

const base = { cspSource: 'https://file+.vscode-resource.vscode-cdn.net', title: 'Chat', lang: 'zh-cn', styles: ['s.css'], scripts: ['w.js'] };

test('the CSP allows only our resources and nonce-carrying scripts', () => {
  const csp = contentSecurityPolicy(base.cspSource, 'abcdefghijklmnopqrstuv==');
  assert.equal(csp, "default-src 'none'; script-src 'nonce-abcdefghijklmnopqrstuv=='; style-src https://file+.vscode-resource.vscode-cdn.net; img-src https://file+.vscode-resource.vscode-cdn.net data:; font-src https://file+.vscode-resource.vscode-cdn.net");
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:\/\/\*|connect-src/);
});

test('every script carries the nonce; the nonce is fresh and long', () => {
  const nonce = makeNonce();
  assert.notEqual(nonce, makeNonce());
  assert.ok(Buffer.from(nonce, 'base64').length >= 16);
  const html = buildWebviewHtml({ ...base, nonce, scripts: ['w.js', 'second.js'] });
  const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
  assert.equal(scripts.length, 2);
  for (const s of scripts) assert.ok(s.includes(`nonce="${nonce}"`), s);
  assert.ok(html.includes(`content="default-src &#39;none&#39;`) || html.includes("content=\"default-src 'none'"));
  assert.ok(html.includes('<html lang="zh-cn">'));
  assert.ok(html.includes('<div id="root"></div>'));
});

test('attribute values are escaped and no script is inline', () => {
  const html = buildWebviewHtml({ ...base, nonce: makeNonce(), scripts: ['w.js?a="><script>x'] });
  assert.ok(!html.includes('"><script>x'));
  for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
    assert.match(m[1]!, / src="/, 'every script is a file');
    assert.equal(m[2], '', 'and has no inline code');
  }
  assert.throws(() => buildWebviewHtml({ ...base, nonce: "x' 'unsafe-inline" }));
});
