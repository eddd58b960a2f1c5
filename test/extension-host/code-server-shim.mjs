#!/usr/bin/env node
// Stands in for the VS Code executable given to @vscode/test-electron's runTests({ vscodeExecutablePath }) on
// machines where desktop VS Code cannot be downloaded. It accepts the flags runTests passes
// (--extensionDevelopmentPath, --extensionTestsPath, --user-data-dir, --extensions-dir, a folder), runs code-server
// (a real VS Code server with a Node extension host) on loopback, and opens the web workbench in headless Chromium
// with those paths in the `payload` URL parameter: the workbench then runs the test module in the extension host,
// as desktop VS Code does, and reports the exit code through window.codeAutomationExit. Exits with that code.
// The environment runTests gives (extensionTestsEnv) reaches the extension host through code-server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { format } from 'node:util';
import { launchBrowser, startCodeServer, waitFor } from '../e2e/lib.mjs';

const opts = { dev: [], tests: undefined, userDataDir: undefined, extensionsDir: undefined, folder: undefined, locale: undefined };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const [key, inline] = argv[i].split(/=(.*)/s);
  const value = () => (inline !== undefined ? inline : argv[++i]);
  if (key === '--extensionDevelopmentPath') opts.dev.push(resolve(value()));
  else if (key === '--extensionTestsPath') opts.tests = resolve(value());
  else if (key === '--user-data-dir') opts.userDataDir = resolve(value());
  else if (key === '--extensions-dir') opts.extensionsDir = resolve(value());
  else if (key === '--locale') opts.locale = value();
  else if (key === '--version') { console.log('1.139.1\ncode-server-shim\nx64'); process.exit(0); }
  else if (!key.startsWith('-')) opts.folder = resolve(key);
  // Other flags runTests adds (--no-sandbox, --disable-updates, --skip-welcome, ...) only concern Electron.
}
if (!opts.tests) { console.error('code-server-shim: --extensionTestsPath is required'); process.exit(2); }

const work = mkdtempSync(join(tmpdir(), 'tcg-shim-'));
const timeoutMs = Number(process.env.CS_SHIM_TIMEOUT_MS || 600_000);
let server, context, code = 1;
// runTests forwards Ctrl+C as SIGINT: take code-server (its own process group) and Chromium down with us.
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    Promise.allSettled([context?.close(), server?.stop()]).finally(() => process.exit(130));
  });
}
try {
  server = await startCodeServer({
    dir: work,
    userDataDir: opts.userDataDir,
    extensionsDir: opts.extensionsDir ?? join(work, 'extensions'),
    folder: opts.folder ?? work,
    locale: opts.locale,
    testDriver: true,
  });
  ({ context } = await launchBrowser(work));
  const page = context.pages()[0];
  let reportExit;
  const exited = new Promise((r) => { reportExit = r; });
  // The same hooks VS Code's smoke tests and @vscode/test-web use.
  await page.exposeFunction('codeAutomationLog', (type, args) => (type === 'error' ? console.error : console.log)(format(...(args || []))));
  await page.exposeFunction('codeAutomationExit', (c) => reportExit(c));
  const authority = new URL(server.url).host;
  const payload = opts.dev.map((d) => ['extensionDevelopmentPath', `vscode-remote://${authority}${d}`]);
  payload.push(['extensionTestsPath', `vscode-remote://${authority}${opts.tests}`]);
  await page.goto(`${server.url}/?folder=${encodeURIComponent(server.folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);
  let reported = false; // the watcher below outlives the race: once the tests reported, stopping the server is no failure
  exited.then(() => { reported = true; });
  code = await Promise.race([
    exited,
    // Also notices code-server dying, instead of waiting for the whole timeout.
    waitFor(() => reported || server.exited, { timeout: timeoutMs, interval: 500, what: 'a test result' }).then(
      () => { if (!reported) console.error('code-server-shim: code-server exited before the tests finished'); return 1; },
      (e) => { console.error(`code-server-shim: ${e.message}`); return 1; }),
  ]);
  if (code !== 0 && process.env.CS_SHIM_SCREENSHOT) await page.screenshot({ path: process.env.CS_SHIM_SCREENSHOT }).catch(() => {});
} catch (e) {
  console.error(`code-server-shim: ${e?.stack ?? e}`);
  code = 1;
} finally {
  await context?.close().catch(() => {});
  await server?.stop();
  if (!process.env.E2E_KEEP) rmSync(work, { recursive: true, force: true });
}
process.exit(typeof code === 'number' ? code : 1);
