// Test harness for the webviews (the chat panel and the Server Status view): builds the real bundles with esbuild
// (the options of esbuild.mjs, with the chat's benchmark-only RENDER_STATS on), serves them with their stylesheets
// from a loopback HTTP server, and opens them in headless Debian Chromium inside the HTML and CSP the extension
// uses, with a stand-in for acquireVsCodeApi that records posted messages and keeps setState in sessionStorage (so
// a reload behaves like VS Code re-showing a hidden panel).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import * as esbuild from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildWebviewHtml } from '../../../src/vscode/webviewHtml';
import type { HostToWebview, ServerView, WebviewToHost } from '../../../src/protocol';

const root = resolve(__dirname, '../../..');
export const NONCE = 'dGVzdG5vbmNlMTIzNDU2Nzg=';

export async function buildWebviewBundle(outdir: string): Promise<void> {
  await esbuild.build({
    entryPoints: { webview: join(root, 'src/webview/chat/main.ts'), status: join(root, 'src/webview/status/main.ts') },
    outdir,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
    sourcemap: false,
    logLevel: 'error',
    legalComments: 'none',
    loader: { '.css': 'css', '.ttf': 'file' },
    define: { RENDER_STATS: 'true' },
  });
}

/** The pages the harness serves: each webview's title, stylesheet and bundle, as the extension's HTML names them. */
const PAGES = {
  chat: { title: 'ChatGLM chat', styles: ['/dist/webview.css', '/media/chat/chat.css'], script: '/dist/webview.js', ready: '.composer' },
  status: { title: 'ChatGLM Server Status', styles: ['/media/status-panel.css'], script: '/dist/status.js', ready: undefined },
} as const;
export type PageName = keyof typeof PAGES;

/** Stand-in for VS Code's webview API; runs before the bundle (nonce'd like it). */
const STUB = `
// tsx compiles test functions passed to page.evaluate with esbuild's keepNames, which calls a __name helper.
window.__name = (f) => f;
window.__posted = [];
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));
window.acquireVsCodeApi = (() => {
  let acquired = false;
  return () => {
    if (acquired) throw new Error('acquireVsCodeApi called twice');
    acquired = true;
    return {
      postMessage: (m) => window.__posted.push(JSON.parse(JSON.stringify(m))),
      getState: () => { const s = sessionStorage.getItem('vscodeState'); return s ? JSON.parse(s) : undefined; },
      setState: (s) => sessionStorage.setItem('vscodeState', JSON.stringify(s)),
    };
  };
})();
`;

export interface Harness {
  origin: string;
  browser: Browser;
  /** Every URL the pages asked for (to prove nothing outside the extension's files was fetched). */
  requests: string[];
  /**
   * Opens a page (the chat panel unless `page` says otherwise) once it has posted its first message. `init`: scripts
   * run in the page before any of its own (test/webview/support/page-scripts.ts).
   */
  open(options?: { csp?: boolean; page?: PageName; init?: readonly string[]; themeVariables?: boolean }): Promise<Panel>;
  close(): Promise<void>;
}

export interface Panel {
  page: Page;
  /** Uncaught page errors and console.error output. */
  errors: string[];
  /** Delivers a host message the way VS Code does (a message event on window). */
  send(msg: HostToWebview | object): Promise<void>; // `object`: tests also send malformed messages
  /** What the page posted, its focus reports (focusChanged) aside: see focusReports(). */
  posted(): Promise<WebviewToHost[]>;
  /** The `focused` values of the page's focusChanged messages, in order. */
  focusReports(): Promise<boolean[]>;
  clearPosted(): Promise<void>;
  cspViolations(): Promise<string[]>;
  /** Waits for requestAnimationFrame callbacks to have run. */
  nextFrames(n?: number): Promise<void>;
}

/** Closes a panel a test is done with, after checking it raised no page error and broke no CSP rule (`what`). */
export async function closeChecked(panel: Panel, what = 'no CSP violation'): Promise<void> {
  assert.deepEqual(panel.errors, [], 'no page errors');
  assert.deepEqual(await panel.cspViolations(), [], what);
  await panel.page.close();
}

export async function startHarness(): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'chat-webview-'));
  await buildWebviewBundle(dir);
  const files: Record<string, { body: Buffer; type: string }> = {
    '/dist/webview.js': { body: await readFile(join(dir, 'webview.js')), type: 'text/javascript' },
    '/dist/webview.css': { body: await readFile(join(dir, 'webview.css')), type: 'text/css' },
    '/dist/status.js': { body: await readFile(join(dir, 'status.js')), type: 'text/javascript' },
    '/media/chat/chat.css': { body: await readFile(join(root, 'media/chat/chat.css')), type: 'text/css' },
    '/media/status-panel.css': { body: await readFile(join(root, 'media/status-panel.css')), type: 'text/css' },
    '/media/icons/chatglm.svg': { body: await readFile(join(root, 'media/icons/chatglm.svg')), type: 'image/svg+xml' },
    '/theme.css': { body: await readFile(join(__dirname, 'vscode-dark-theme.css')), type: 'text/css' },
    '/vscode-default-styles.css': { body: await readFile(join(__dirname, 'vscode-default-styles.css')), type: 'text/css' },
  };
  // The codicon font the bundle's stylesheet names (dist/codicon-<hash>.ttf).
  for (const font of (await readdir(dir)).filter((f) => f.endsWith('.ttf'))) files[`/dist/${font}`] = { body: await readFile(join(dir, font)), type: 'font/ttf' };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const page = url.pathname === '/panel.html' ? PAGES.chat : url.pathname === '/status.html' ? PAGES.status : undefined;
    if (page) {
      // The extension's own HTML shell and CSP (src/vscode/webviewHtml.ts), with the view's resources.
      let html = buildWebviewHtml({
        cspSource: origin, nonce: NONCE, title: page.title, lang: 'en',
        styles: page.styles.map((style) => `${origin}${style}`), scripts: [`${origin}${page.script}`],
      });
      if (url.searchParams.get('csp') === 'off') html = html.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, '');
      html = html.replace('<script nonce=', `<script nonce="${NONCE}">${STUB}</script>\n  <script nonce=`);
      // VS Code defines the theme variables itself and adds its default webview styles; here same-origin stylesheets
      // stand in for them (?theme=none: no variables, the test sets a captured theme's itself, see themes.ts).
      const theme = url.searchParams.get('theme') === 'none' ? '' : `<link rel="stylesheet" href="${origin}/theme.css">\n`;
      html = html.replace('<link rel="stylesheet"', `${theme}<link rel="stylesheet" href="${origin}/vscode-default-styles.css">\n<link rel="stylesheet"`);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      return;
    }
    if (url.pathname === '/favicon.ico') { res.writeHead(204).end(); return; } // Chromium asks; VS Code does not
    const f = files[url.pathname];
    if (f) res.writeHead(200, { 'content-type': f.type }).end(f.body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--headless=new'] });
  const requests: string[] = [];

  return {
    origin,
    browser,
    requests,
    async open(options = {}) {
      const page = await browser.newPage({ viewport: { width: 520, height: 900 } });
      page.on('request', (r) => requests.push(r.url()));
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
      for (const script of options.init ?? []) await page.addInitScript(script);
      const name = options.page ?? 'chat';
      const query = new URLSearchParams({ ...(options.csp === false ? { csp: 'off' } : {}), ...(options.themeVariables === false ? { theme: 'none' } : {}) });
      await page.goto(`${origin}/${name === 'chat' ? 'panel' : name}.html${query.size ? `?${query}` : ''}`);
      const ready = PAGES[name].ready;
      if (ready) await page.waitForSelector(ready);
      await page.waitForFunction(() => (window as unknown as { __posted: unknown[] }).__posted.length > 0);
      return panelOf(page, errors);
    },
    async close() {
      await browser.close().catch(() => undefined);
      await new Promise((r) => server.close(r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function panelOf(page: Page, errors: string[] = []): Panel {
  return {
    page,
    errors,
    send: (msg) => page.evaluate((m) => { window.dispatchEvent(new MessageEvent('message', { data: m })); }, msg as unknown),
    posted: () => page.evaluate(() => (window as unknown as { __posted: WebviewToHost[] }).__posted.filter((m) => m.type !== 'focusChanged')),
    focusReports: () => page.evaluate(() => (window as unknown as { __posted: WebviewToHost[] }).__posted
      .flatMap((m) => (m.type === 'focusChanged' ? [m.focused] : []))),
    clearPosted: () => page.evaluate(() => { (window as unknown as { __posted: unknown[] }).__posted.length = 0; }),
    cspViolations: () => page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations),
    nextFrames: (n = 2) => page.evaluate(async (k) => {
      for (let i = 0; i < k; i += 1) await new Promise((r) => requestAnimationFrame(() => r(undefined)));
    }, n),
  };
}

// ---- message builders ----
export const READY_SERVER: ServerView = { server: 'running', model: 'ready', actions: [] };

export function stateMsg(messages: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): HostToWebview {
  return {
    type: 'state',
    activeId: 'c1',
    messages,
    server: READY_SERVER,
    busy: messages.some((m) => m.status === 'streaming'),
    modelName: 'ChatGLM3-6B',
    ...extra,
  } as unknown as HostToWebview;
}

export const user = (id: string, content: string) => ({ id, role: 'user', content, status: 'complete' });
export const assistant = (id: string, content: string, status = 'complete', more: Record<string, unknown> = {}) =>
  ({ id, role: 'assistant', content, status, ...more });
