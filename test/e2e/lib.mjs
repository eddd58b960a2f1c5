// Harness for the end-to-end stage: packages the extension, runs it in a real VS Code (code-server 4.139.1, see
// install-code-server.sh) and drives the web workbench with Debian's Chromium through playwright-core.
// Everything a run starts lives under one temporary "run root"; cleanup() kills every process whose command line
// or environment mentions that root (code-server, its extension host, Chromium, the fake docker's tritonservers),
// so nothing survives a failed or interrupted run. Waiting is always on a condition (waitFor), never a fixed sleep.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { freePort } from '../support/triton-process.mjs';
import { catalogConfigJson } from '../support/catalog-config.mjs';

export { freePort };
export const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
export const extensionId = 'triton-chatglm.triton-chatglm';
export const vsixPath = join(projectRoot, 'dist/triton-chatglm.vsix');
export const fakeDocker = join(projectRoot, 'test/fake-docker/docker');
export const resultsDir = join(projectRoot, 'test-results/e2e');
export const screenshotsDir = join(projectRoot, 'docs/screenshots');

const started = Date.now();
export function log(...args) {
  console.log(`[e2e ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s]`, ...args);
}

/** The code-server launcher installed by install-code-server.sh (code-server on its own node 24). */
export function codeServerBin() {
  const prefix = process.env.CODE_SERVER_PREFIX || join(projectRoot, '.cache/code-server');
  const bin = join(prefix, 'bin/code-server');
  if (!existsSync(bin)) throw new Error(`code-server is not installed at ${prefix}: run bash test/e2e/install-code-server.sh`);
  return bin;
}

/**
 * VS Code's own server from the same package (launcher by install-code-server.sh). The extension-host suite runs
 * in it: VS Code since about 1.10x reads the workbench's `payload` (extensionTestsPath...) only with
 * --enable-smoke-test-driver, which code-server's wrapper does not accept.
 */
export function vscodeServerBin() {
  const bin = join(dirname(codeServerBin()), 'vscode-server');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run bash test/e2e/install-code-server.sh`);
  return bin;
}

/** Thrown by a probe to end a waitFor at once (the awaited state can no longer come). */
export class FatalWait extends Error {}

/** Resolves when `probe()` returns something truthy (that value), polling; rejects after `timeout` ms naming `what`. */
export async function waitFor(probe, { timeout = 30_000, interval = 200, what = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let lastError;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (e) {
      if (e instanceof FatalWait) throw e;
      lastError = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout} ms waiting for ${what}${lastError ? ` (last error: ${lastError.message})` : ''}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

// ---------------------------------------------------------------------------------------------- run root + cleanup

let runRoot;
const cleanups = [];

/** The run's private temporary directory; every process and file of the run is placed under it. */
export function getRunRoot() {
  if (!runRoot) {
    runRoot = mkdtempSync(join(tmpdir(), 'tcg-e2e-'));
    // Last line of defence when the runner dies abruptly: synchronous, so it works inside 'exit'.
    process.once('exit', () => {
      killProcessesMentioning(runRoot, 'SIGKILL');
      if (!process.env.E2E_KEEP) rmSync(runRoot, { recursive: true, force: true, maxRetries: 5 });
    });
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
      process.once(sig, () => { cleanup().finally(() => process.exit(130)); });
    }
  }
  return runRoot;
}

/** Registers an async cleanup step; steps run in reverse order. */
export function onCleanup(fn) { cleanups.push(fn); }

let cleaning;
/** Runs registered cleanups, then kills anything still mentioning the run root and removes it (unless E2E_KEEP). */
export function cleanup() {
  cleaning ??= (async () => {
    while (cleanups.length) {
      const fn = cleanups.pop();
      try { await fn(); } catch (e) { log(`cleanup step failed: ${e.message}`); }
    }
    if (!runRoot) return;
    killProcessesMentioning(runRoot, 'SIGTERM');
    await waitFor(() => processesMentioning(runRoot).length === 0, { timeout: 10_000, what: 'run processes to exit' })
      .catch(() => killProcessesMentioning(runRoot, 'SIGKILL'));
    const left = processesMentioning(runRoot);
    if (left.length) log(`WARNING: processes still alive after cleanup: ${left.join(', ')}`);
    if (!process.env.E2E_KEEP) rmSync(runRoot, { recursive: true, force: true, maxRetries: 5 });
    else log(`kept run directory ${runRoot}`);
  })();
  return cleaning;
}

/** Pids (other than ours) whose command line or environment contains `marker`. Linux /proc only. */
export function processesMentioning(marker) {
  const pids = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    for (const file of ['cmdline', 'environ']) {
      try {
        if (readFileSync(`/proc/${name}/${file}`).includes(marker)) { pids.push(Number(name)); break; }
      } catch { /* gone or not ours */ }
    }
  }
  return pids.filter((pid) => !isZombie(pid));
}

function isZombie(pid) {
  try { return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8')); } catch { return true; }
}

function killProcessesMentioning(marker, signal) {
  for (const pid of processesMentioning(marker)) {
    try { process.kill(pid, signal); } catch { /* already gone */ }
  }
}

// ------------------------------------------------------------------------------------------------ extension + data

/**
 * Builds dist/triton-chatglm.vsix with the project's own packaging script (production bundle + vsce).
 * E2E_VSIX=<file> tests that package instead (a release candidate, a CI artifact) without building.
 */
export function packageExtension() {
  if (process.env.E2E_VSIX) {
    if (!existsSync(process.env.E2E_VSIX)) throw new Error(`E2E_VSIX=${process.env.E2E_VSIX} does not exist`);
    return process.env.E2E_VSIX;
  }
  rmSync(vsixPath, { force: true });
  const r = spawnSync('npm', ['run', 'package'], { cwd: projectRoot, encoding: 'utf8' });
  if (r.status !== 0 || !existsSync(vsixPath)) {
    throw new Error(`npm run package failed (exit ${r.status}):\n${(r.stdout + r.stderr).slice(-3000)}`);
  }
  return vsixPath;
}

/** Installs a .vsix into an extensions directory the way a user would (code-server --install-extension). */
export function installExtension({ vsix, extensionsDir, userDataDir }) {
  mkdirSync(extensionsDir, { recursive: true });
  const r = spawnSync(codeServerBin(), ['--user-data-dir', userDataDir, '--extensions-dir', extensionsDir, '--install-extension', vsix],
    { encoding: 'utf8', env: { ...process.env, VSCODE_CLI: '1' }, timeout: 120_000 });
  if (r.status !== 0) throw new Error(`installing ${vsix} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  const installed = readdirSync(extensionsDir).filter((n) => !n.endsWith('.json') && !n.startsWith('.'));
  if (installed.length === 0) throw new Error(`--install-extension reported success but ${extensionsDir} is empty`);
  return installed;
}

/**
 * A directory that passes the extension's checkpoint checks without being a real checkpoint (the fake docker serves
 * the tiny engine instead): the catalog model's config.json (its shape names the model), a tokenizer, a weights file.
 */
export function writeFakeCheckpoint(dir, model = 'chatglm3-6b') {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(catalogConfigJson(model), null, 2));
  writeFileSync(join(dir, 'tokenizer.model'), 'fake sentencepiece model for end-to-end tests\n');
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ tokenizer_class: 'ChatGLMTokenizer' }));
  // safetensors layout: 8-byte little-endian header length, JSON header, data.
  const header = Buffer.from(JSON.stringify({ __metadata__: { format: 'pt' } }));
  const len = Buffer.alloc(8); len.writeBigUInt64LE(BigInt(header.length));
  writeFileSync(join(dir, 'model.safetensors'), Buffer.concat([len, header]));
  return dir;
}

/** Runs the fake docker CLI against a state directory (for checks and cleanup), returning {status, stdout, stderr}. */
export function fakeDockerCli(stateDir, args) {
  const r = spawnSync(fakeDocker, args, { encoding: 'utf8', env: { ...process.env, FAKE_DOCKER_STATE: stateDir }, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/**
 * Ids of all containers (running or not) the fake docker knows in `stateDir`, read from its state files rather
 * than through the CLI, which refuses while a failure mode (daemon down...) is injected.
 */
export function fakeContainers(stateDir) {
  const dir = join(stateDir, 'containers');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -'.json'.length));
}

/** Removes every container of a fake docker state dir (which stops the tritonservers behind them). */
export function removeFakeContainers(stateDir) {
  if (!existsSync(fakeDocker) || !existsSync(stateDir)) return;
  try { rmSync(join(stateDir, 'fail'), { force: true }); } catch { /* none */ }
  let ids = [];
  try { ids = fakeContainers(stateDir); } catch (e) { log(`cleanup: ${e.message}`); }
  if (ids.length) fakeDockerCli(stateDir, ['rm', '-f', ...ids]);
}

// --------------------------------------------------------------------------------------------------- code-server

/**
 * Starts code-server for one "window" and returns { url, folder, userDataDir, stop() }. Its files go to
 * `dir` (default <run root>/<name>); `userDataDir` defaults to <dir>/user-data. `settings` are merged into the user
 * settings, `remoteSettings` into the remote (machine) settings; `env` reaches the extension host (and so the fake
 * docker). `locale` sets the display language (argv.json and --locale; a language other than English also needs a
 * language pack, see installStubLanguagePack). `extraArgs` are passed on (e.g. --enable-proposed-api). `testDriver`:
 * VS Code's own server with its smoke-test driver (the workbench then runs a `payload`'s extension tests; it shows
 * no notification toasts, so UI journeys run without it).
 */
export async function startCodeServer({ name, dir, userDataDir, extensionsDir, folder, settings = {}, remoteSettings = {}, env = {}, locale, extraArgs = [], testDriver = false }) {
  dir ??= join(getRunRoot(), name);
  userDataDir ??= join(dir, 'user-data');
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  mkdirSync(dir, { recursive: true });
  const settingsFile = join(userDataDir, 'User/settings.json');
  const existing = existsSync(settingsFile) ? JSON.parse(readFileSync(settingsFile, 'utf8') || '{}') : {};
  writeFileSync(settingsFile, JSON.stringify({
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
    'security.workspace.trust.enabled': false,
    'remote.autoForwardPorts': false, // code-server would offer to forward every port Triton opens
    // VS Code >= 1.10x opens its own Chat view in the secondary side bar at start: it takes the width the journeys'
    // side bar and diff editor need (a user closes it once; the setting is what that click writes).
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    // VS Code 1.13x opens some editors (Settings, walkthroughs, Language Models) as modal overlays, which have no
    // "View: Close Editor"; the journeys drive editors in tabs, as the setting's "off" keeps them.
    'workbench.editor.useModal': 'off',
    ...existing,
    ...settings,
  }, null, 2));
  writeRemoteSettings(userDataDir, remoteSettings);
  if (locale) writeFileSync(join(userDataDir, 'User/argv.json'), JSON.stringify({ locale }));
  // An empty config file: code-server would otherwise read ~/.config/code-server/config.yaml (auth, bind address).
  writeFileSync(join(dir, 'config.yaml'), '# end-to-end tests: the rest is given on the command line\ndisable-telemetry: true\n');
  const port = await freePort();
  // VS Code's server keeps the remote (Machine) settings under --server-data-dir: the same folder as code-server's.
  const args = testDriver
    ? ['--host', '127.0.0.1', '--port', String(port), '--without-connection-token', '--accept-server-license-terms',
      '--enable-smoke-test-driver', '--telemetry-level', 'off', '--disable-workspace-trust',
      '--user-data-dir', userDataDir, '--server-data-dir', userDataDir, '--extensions-dir', extensionsDir, '--default-folder', folder,
      ...(locale ? ['--locale', locale] : []), ...extraArgs]
    : ['--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--disable-getting-started-override', '--ignore-last-opened',
      '--config', join(dir, 'config.yaml'), '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir, ...(locale ? ['--locale', locale] : []), ...extraArgs, folder];
  const logFile = join(dir, 'code-server.log');
  const out = openSync(logFile, 'w');
  // VSCODE_CLI=1: otherwise the extension host re-resolves the login shell's environment and drops what we add.
  const child = spawn(testDriver ? vscodeServerBin() : codeServerBin(), args, { detached: true, stdio: ['ignore', out, out], env: { ...process.env, VSCODE_CLI: '1', ...env } });
  closeSync(out);
  let exitCode = null;
  child.on('exit', (c, s) => { exitCode = c ?? s; });
  const stop = async () => {
    if (exitCode !== null) return;
    try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
    await waitFor(() => exitCode !== null, { timeout: 10_000, what: 'code-server to exit' })
      .catch(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } });
  };
  onCleanup(stop);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => {
    if (exitCode !== null) throw new FatalWait(`code-server exited (${exitCode}); log: ${readFileSync(logFile, 'utf8').slice(-2000)}`);
    return (await fetch(`${url}/${testDriver ? 'version' : 'healthz'}`)).ok;
  }, { timeout: 90_000, interval: 250, what: `code-server /${testDriver ? 'version' : 'healthz'}` }).catch((e) => {
    if (e instanceof FatalWait) throw e;
    throw new Error(`${e.message}; log: ${readFileSync(logFile, 'utf8').slice(-2000)}`);
  });
  return { url, port, dir, folder, userDataDir, logFile, stop, get exited() { return exitCode !== null; } };
}

/**
 * The browser workbench is a *remote* window of the code-server machine: settings with `"scope": "machine"` (ours
 * that name programs, paths and ports) only apply from the remote settings (<user data>/Machine/settings.json, what
 * "Preferences: Open Remote Settings" edits); in the user settings they are ignored, sometimes only after a reload.
 */
export function writeRemoteSettings(userDataDir, remoteSettings) {
  const file = join(userDataDir, 'Machine/settings.json');
  mkdirSync(dirname(file), { recursive: true });
  const existing = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8') || '{}') : {};
  writeFileSync(file, JSON.stringify({ ...existing, ...remoteSettings }, null, 2));
}

// ------------------------------------------------------------------------------------------------------- Chromium

/** Launches Debian's Chromium with a profile under the run root (so cleanup can find it) and one page. */
export async function launchBrowser(dir) {
  const profile = join(dir, 'chromium-profile');
  mkdirSync(profile, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    // Our own signal handlers close the browser in order (see getRunRoot); Playwright's would exit first.
    handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  onCleanup(() => context.close().catch(() => {}));
  const page = context.pages()[0] ?? await context.newPage();
  return { context, page };
}

// ------------------------------------------------------------------------------------------------------ Workbench

/** One browser window on a code-server instance, with the interactions the journeys need. */
export class Workbench {
  constructor(server, page, name, extId = extensionId) {
    this.server = server;
    this.extId = extId;
    this.page = page;
    this.name = name;
    this.pageErrors = [];
    page.on('pageerror', (e) => this.pageErrors.push(String(e)));
  }

  static async open(server, name, extId) {
    const { page } = await launchBrowser(server.dir);
    const wb = new Workbench(server, page, name, extId);
    await wb.load();
    return wb;
  }

  /** Loads (or reloads) the workbench and waits until it is interactive. */
  async load() {
    await this.page.goto(`${this.server.url}/?folder=${encodeURIComponent(this.server.folder)}`);
    await this.waitForWorkbench();
  }

  async reload() {
    await this.page.reload();
    await this.waitForWorkbench();
  }

  async waitForWorkbench() {
    await this.page.locator('.monaco-workbench .part.statusbar').waitFor({ timeout: 120_000 });
    await this.page.locator('.monaco-workbench .part.activitybar').waitFor({ timeout: 60_000 });
  }

  /** Runs a command by its palette label ("ChatGLM: Start Server") through F1, as a user would. */
  async runCommand(label, { timeout = 30_000 } = {}) {
    const page = this.page;
    const widget = page.locator('.quick-input-widget');
    const input = widget.locator('.quick-input-box input');
    const row = widget.locator('.quick-input-list .monaco-list-row', {
      has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRegExp(label)}\\s*$`) }),
    }).first();
    // Open, type and pick as one step that starts over when the palette closes underneath us (a webview taking
    // focus, e.g. the chat panel after a reload, closes the quick input): only a completed click counts.
    try {
      await waitFor(async () => {
        // F1 also where another quick input is up (a quick pick of ours): the palette takes its place.
        if (!(await input.isVisible()) || !(await input.inputValue({ timeout: 2_000 })).startsWith('>')) await page.keyboard.press('F1');
        await input.waitFor({ state: 'visible', timeout: 2_000 });
        await input.fill(`>${label}`, { timeout: 2_000 });
        await row.waitFor({ state: 'visible', timeout: 5_000 });
        await row.click({ timeout: 2_000 });
        return true;
      }, { timeout, what: `the command "${label}" in the palette` });
    } catch (e) {
      const offered = await widget.locator('.quick-input-list .monaco-list-row .label-name').allTextContents().catch(() => []);
      await page.keyboard.press('Escape'); // leave the workbench usable for the next step
      throw new Error(`${e.message.split('\n')[0]} (offered: ${JSON.stringify(offered.slice(0, 5))})`);
    }
    // The palette closes, or another quick input takes its place (a command that asks: Color Theme, our pickers).
    await waitFor(async () => !(await input.isVisible()) || !(await input.inputValue({ timeout: 1_000 })).startsWith('>'),
      { timeout: 10_000, what: 'the palette to close' }).catch(() => log(`      (the palette stayed open 10 s after "${label}")`));
  }

  /** Text of our extension's status bar item(s) (their ids are "<extension id>.<item id>"); '' when none. */
  async statusBarText() {
    const items = this.page.locator(`.part.statusbar .statusbar-item[id^="${this.extId}."]`);
    const texts = await items.evaluateAll((els) => els.map((e) => (e.textContent || '').trim()).filter(Boolean));
    return texts.join(' | ');
  }

  /**
   * Waits until the status bar matches `re`. Fails at once when it shows an error state instead (`failOn`), with
   * the notifications of the moment, so that a broken start does not cost the whole timeout.
   * `leaving`: the bar's text before the action being waited on (a Start clicked while it shows "server error"):
   * the error is not held against the action until the bar has shown something else, since the click reaches the
   * status bar a moment later.
   */
  async waitForStatus(re, { timeout = 60_000, failOn = /server error|load failed/, leaving } = {}) {
    let last = '';
    let left = leaving === undefined;
    try {
      return await waitFor(async () => {
        last = await this.statusBarText();
        if (re.test(last)) return last;
        left ||= last.split(' | ')[0] !== leaving.split(' | ')[0]; // the lifecycle item, not the completion one
        if (left && failOn && failOn.test(last)) throw new FatalWait(`status bar shows "${last}"; notifications: ${JSON.stringify(await this.notifications())}`);
        return false;
      }, { timeout, what: `status bar ${re}` });
    } catch (e) {
      if (e instanceof FatalWait) throw e;
      throw new Error(`${e.message}; status bar shows "${last}"`);
    }
  }

  /** Texts of the visible notification toasts and the notification center list. */
  async notifications() {
    return this.page.locator('.notifications-toasts .notification-list-item, .notifications-center .notification-list-item')
      .evaluateAll((els) => els.map((e) => (e.textContent || '').replace(/\s+/g, ' ').trim()));
  }

  async waitForNotification(re, { timeout = 60_000 } = {}) {
    let last = [];
    try {
      return await waitFor(async () => { last = await this.notifications(); return last.find((t) => re.test(t)); }, { timeout, what: `notification ${re}` });
    } catch (e) {
      throw new Error(`${e.message}; notifications: ${JSON.stringify(last)}`);
    }
  }

  /** Dismisses every notification so that the next journey's messages are unambiguous. */
  async clearNotifications() {
    await this.runCommand('Notifications: Clear All Notifications').catch(() => {});
    // A progress notification cannot be cleared: waited for, then said in the log (it costs the wait).
    await waitFor(async () => (await this.notifications()).length === 0, { timeout: 5_000, what: 'notifications cleared' })
      .catch(async () => log(`      (still shown after Clear All Notifications: ${JSON.stringify((await this.notifications()).map((t) => t.slice(0, 80)))})`));
  }

  /** The first frame (webviews are nested iframes) that contains `selector`. */
  async frameWith(selector, { timeout = 30_000, what = selector } = {}) {
    return waitFor(async () => {
      for (const f of this.page.frames()) {
        if (f.isDetached()) continue;
        try { if (await f.$(selector)) return f; } catch { /* navigating */ }
      }
      return false;
    }, { timeout, what: `a webview frame with ${what}` });
  }

  /** Text currently shown in the panel's editor (Output view): only the rendered lines, as the user sees them. */
  async outputPanelText() {
    const text = await this.page.locator('.part.panel .monaco-editor .view-lines').evaluateAll((els) => els.map((e) => e.innerText).join('\n'));
    return text.replace(/\u00a0/g, ' '); // Monaco renders spaces as no-break spaces
  }

  async screenshot(file) {
    mkdirSync(dirname(file), { recursive: true });
    await this.page.screenshot({ path: file });
    return file;
  }
}

export function escapeRegExp(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }

/** Size of a file in bytes, 0 when it does not exist. */
export function fileSize(p) { try { return statSync(p).size; } catch { return 0; } }
