#!/usr/bin/env node
// The end-to-end stage: the PACKAGED extension (.vsix) in a real VS Code (code-server 4.99.4), driven by Chromium,
// with the fake docker (test/fake-docker/docker) whose containers run the real tritonserver with our model
// repository and the tiny engine. Journeys 1-7 share one window (as a user's session would); the failure and
// Chinese journeys get fresh ones; the extension-host mocha suite runs last through @vscode/test-electron's runTests
// with code-server standing in for the VS Code executable. Results: console + JUnit XML (--junit=<file>).
// Options: --only=main|failures|zh|extension-host runs one group; see README.md for the environment knobs.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  cleanup, codeServerBin, extensionId, fakeContainers, fakeDocker, freePort, getRunRoot, installExtension, log,
  FatalWait, packageExtension, processesMentioning, projectRoot, removeFakeContainers, resultsDir, screenshotsDir, startCodeServer,
  waitFor, Workbench, writeFakeCheckpoint, writeRemoteSettings, onCleanup,
} from './lib.mjs';
import { installStubLanguagePack } from './language-pack.mjs';
import { runExtensionHostSuite } from './extension-host.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split(/=(.*)/s)).map(([k, v]) => [k, v ?? true]));
const junitFile = args.junit || join(projectRoot, 'test-results/e2e.xml');
const MODEL = 'chatglm3-6b';
const nls = JSON.parse(readFileSync(join(projectRoot, 'package.nls.json'), 'utf8'));
const title = (key, table = nls) => `${table['command.category']}: ${table[`command.${key}.title`]}`;

/** One result per journey (and per extension-host test): { name, ok, ms, error }. */
const results = [];
const stageStart = Date.now();

async function journey(name, fn, { wb, needs = [] } = {}) {
  const missing = needs.filter((n) => !results.find((r) => r.name === n && r.ok));
  if (missing.length) {
    results.push({ name, ok: false, ms: 0, error: `not run: it needs "${missing.join('", "')}", which did not pass` });
    log(`FAIL  ${name}: not run (needs ${missing.join(', ')})`);
    return false;
  }
  const t = Date.now();
  log(`----  ${name}`);
  try {
    await fn();
    results.push({ name, ok: true, ms: Date.now() - t });
    log(`PASS  ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
    return true;
  } catch (e) {
    const slug = name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
    const shot = join(resultsDir, `${slug}.png`);
    const w = typeof wb === 'function' ? wb() : wb;
    let evidence = '';
    if (w) {
      await w.screenshot(shot).catch(() => {});
      evidence = `\nscreenshot: ${shot}\nlogs: ${saveLogs(w.server, join(resultsDir, slug))}`;
    }
    results.push({ name, ok: false, ms: Date.now() - t, error: `${e?.stack ?? e}${evidence}` });
    log(`FAIL  ${name}: ${e?.message ?? e}`);
    return false;
  }
}

/** Copies the extension's log channel and code-server's log of a window next to the failure screenshot. */
function saveLogs(server, dest) {
  try {
    mkdirSync(dest, { recursive: true });
    copyFileSync(server.logFile, join(dest, 'code-server.log'));
    const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
    const channels = walk(join(server.userDataDir, 'logs')).filter((f) => f.includes(`/${extensionId}/`));
    channels.forEach((f, i) => copyFileSync(f, join(dest, `extension-${i + 1}-${basename(dirname(dirname(f)))}.log`)));
    return dest;
  } catch (e) {
    return `not saved (${e.message})`;
  }
}

// ------------------------------------------------------------------------------------------------------- fixtures

const root = getRunRoot();
const checkpoint = writeFakeCheckpoint(join(root, 'weights/chatglm3-6b'));
const workspace = join(root, 'workspace');
mkdirSync(workspace, { recursive: true });
const SAMPLE = 'geometry.py';
writeFileSync(join(workspace, SAMPLE), [
  'import math',
  '',
  'def circle_area(radius):',
  '    return math.pi * radius ** 2',
  '',
  'def hypotenuse(a, b):',
  '    return math.sqrt(a * a + b * b)',
  '',
  'def mean(values):',
  '    return sum(values) / len(values)',
  '',
].join('\n'));

/** Settings and environment of one window: its own fake docker state, ports and prompt log. */
async function windowConfig(name, overrides = {}) {
  const stateDir = join(root, name, 'docker-state');
  mkdirSync(stateDir, { recursive: true });
  onCleanup(() => removeFakeContainers(stateDir));
  const [http, grpc, metrics] = [await freePort(), await freePort(), await freePort()];
  return {
    stateDir, http, grpc, metrics,
    promptLog: join(root, name, 'prompts.jsonl'),
    settings: {
      'tritonChatglm.dockerPath': fakeDocker,
      'tritonChatglm.weightsPath': checkpoint,
      'tritonChatglm.httpPort': http,
      'tritonChatglm.grpcPort': grpc,
      'tritonChatglm.metricsPort': metrics,
      'tritonChatglm.containerName': `tcg-e2e-${name}-${process.pid}`,
      // Answers of the tiny engine never stop by themselves: keep them short but long enough to watch them stream.
      'tritonChatglm.maxNewTokens': 96,
      // Gives the dynamic batcher room to merge concurrent requests on a busy 2-core machine.
      'tritonChatglm.queueDelayMs': 200,
      ...overrides,
    },
  };
}

function windowEnv(cfg, extra = {}) {
  return {
    FAKE_DOCKER_STATE: cfg.stateDir,
    TINY_ENGINE_PROMPT_LOG: cfg.promptLog,
    // A decode step every 25 ms: answers take a few seconds, so streaming and Stop can be observed.
    TINY_ENGINE_STEP_DELAY_MS: '25',
    OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1',
    ...extra,
  };
}

const tritonGet = async (cfg, path) => {
  const res = await fetch(`http://127.0.0.1:${cfg.http}${path}`);
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text() };
};
const runningContainers = (cfg) => fakeContainers(cfg.stateDir).map((id) => inspect(cfg, id)).filter((c) => c?.State?.Running);
function inspect(cfg, id) {
  try { return JSON.parse(readFileSync(join(cfg.stateDir, 'containers', `${id}.json`), 'utf8')); } catch { return undefined; }
}
const tritonProcesses = (cfg) => processesMentioning(cfg.stateDir).filter((pid) => {
  try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('tritonserver'); } catch { return false; }
});

// ----------------------------------------------------------------------------------------------- chat panel helpers

async function openChat(wb) {
  await wb.runCommand(title('openChat'));
  return wb.frameWith('#root textarea.input', { what: 'the chat panel' });
}

/** Types a question into the panel and sends it with the Send button. */
async function ask(frame, text) {
  await frame.locator('textarea.input').fill(text);
  const send = frame.locator('button[data-action="send"]');
  await waitFor(async () => (await send.isVisible()) && (await send.isEnabled()), { what: 'the Send button to be enabled' });
  await send.click();
}

const assistantArticles = (frame) => frame.locator('main.messages article.message.assistant');
const messageTexts = (frame) => frame.locator('main.messages article.message .message-body')
  .evaluateAll((els) => els.map((e) => e.textContent ?? ''));

/**
 * Waits for the n-th (0-based) answer to stream and finish. Returns what was observed: the distinct partial texts
 * seen while its status was "streaming" and the final text.
 */
async function watchAnswer(frame, n, { timeout = 120_000, until = 'complete' } = {}) {
  const article = assistantArticles(frame).nth(n);
  const partials = new Set();
  const final = await waitFor(async () => {
    if (!(await article.count())) return false;
    const status = await article.getAttribute('data-status');
    const text = (await article.locator('.message-body').textContent()) ?? '';
    if (status === 'streaming' && text.trim()) partials.add(text);
    if (status === 'failed') throw new Error(`answer failed: ${await article.textContent()}`);
    return status === until ? { status, text } : false;
  }, { timeout, interval: 100, what: `answer #${n + 1} to be ${until}` });
  return { partials: [...partials], ...final };
}

/** The prompt of a log line ends with the assistant's opening tag, so the question is the last *user* message. */
const lastUserMessage = (line) => line.messages?.filter((m) => m.role === 'user').at(-1);

function promptLogLines(cfg) {
  if (!existsSync(cfg.promptLog)) return [];
  return readFileSync(cfg.promptLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

// -------------------------------------------------------------------------------------------------------- journeys

async function mainWindowJourneys(extensionsDir) {
  const cfg = await windowConfig('main');
  const server = await startCodeServer({ name: 'main', extensionsDir, folder: workspace, remoteSettings: cfg.settings, env: windowEnv(cfg) });
  let wb;
  const current = () => wb;
  let chat;
  let containerId;

  await journey('1 fresh install: start server from the palette', async () => {
    wb = await Workbench.open(server, 'main');
    await wb.waitForStatus(/ChatGLM: stopped/);
    if (fakeContainers(cfg.stateDir).length) throw new Error('a container exists before Start');
    await wb.runCommand(title('startServer'));
    await wb.waitForStatus(/ChatGLM: starting|ChatGLM: not loaded/, { timeout: 30_000 });
    await wb.waitForStatus(/ChatGLM: not loaded/, { timeout: 180_000 });
    const running = runningContainers(cfg);
    if (running.length !== 1) throw new Error(`expected 1 running container, found ${running.length}`);
    containerId = running[0].Id;
    const live = await tritonGet(cfg, '/v2/health/live');
    if (live.status !== 200) throw new Error(`Triton is not live on the configured port ${cfg.http}: ${live.status}`);
    // The log channel shows the container's output (Triton's own startup lines).
    await wb.runCommand(title('showServerLogs'));
    const containerLog = readFileSync(join(cfg.stateDir, 'containers', containerId, 'log'), 'utf8');
    if (!/Started HTTPService/.test(containerLog)) throw new Error('the container log has no Triton startup line');
    let shown = '';
    await waitFor(async () => /Started\s+HTTPService|Started\s+GRPCInferenceService|Started\s+Metrics\s+Service/.test(shown = await wb.outputPanelText()),
      { timeout: 30_000, what: "the container's startup lines in the Output panel" })
      .catch((e) => { throw new Error(`${e.message}; the panel shows: ${shown.slice(-600)}`); });
  }, { wb: current });

  await journey('2 load model: progress, then ready', async () => {
    await wb.clearNotifications();
    await wb.runCommand(title('loadModel'));
    // The progress notification names the step while the model loads.
    const seen = await waitFor(async () => {
      const bar = await wb.statusBarText();
      if (/ChatGLM: loading/.test(bar)) return `status bar: ${bar}`;
      const toast = (await wb.notifications()).find((t) => /Loading ChatGLM3/.test(t));
      if (toast) return `notification: ${toast}`;
      if (/ChatGLM: ready|load failed/.test(bar)) throw new FatalWait(`the bar went to "${bar}" without showing progress`);
      return false;
    }, { timeout: 60_000, interval: 100, what: 'load progress in the status bar or a notification' });
    log(`      load progress seen in ${seen}`);
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 240_000 });
    const ready = await tritonGet(cfg, `/v2/models/${MODEL}/ready`);
    if (ready.status !== 200) throw new Error(`model not ready in Triton: ${ready.status}`);
  }, { wb: current, needs: ['1 fresh install: start server from the palette'] });

  const q1 = 'What does a dynamic batcher do?';
  const q2 = 'And why does it help a GPU?';
  await journey('3 chat: streamed answer, follow-up carries the first exchange', async () => {
    chat = await openChat(wb);
    await ask(chat, q1);
    const a1 = await watchAnswer(chat, 0);
    if (a1.partials.length < 2) throw new Error(`the first answer was not seen growing while streaming (${a1.partials.length} partial renderings)`);
    if (!a1.text.trim()) throw new Error('the first answer is empty');
    log(`      answer 1: ${a1.partials.length} partial renderings, ${a1.text.length} chars`);
    await ask(chat, q2);
    const a2 = await watchAnswer(chat, 1);
    if (!a2.text.trim()) throw new Error('the follow-up answer is empty');
    await wb.runCommand('View: Hide Panel'); // the Output panel from journey 1 would crowd the image
    await docScreenshot(wb, 'chat-panel.png');
    const followUp = await waitFor(() => promptLogLines(cfg).find((l) => lastUserMessage(l)?.content?.includes(q2)),
      { timeout: 10_000, what: 'the follow-up in the engine prompt log' });
    const roles = followUp.messages.map((m) => m.role);
    const first = followUp.messages.findIndex((m) => m.role === 'user' && m.content.includes(q1));
    if (first < 0 || roles[first + 1] !== 'assistant' || !followUp.messages[first + 1].content.trim()) {
      throw new Error(`the follow-up did not carry the first exchange: roles ${roles.join(',')}`);
    }
  }, { wb: current, needs: ['2 load model: progress, then ready'] });

  await journey('4 reload: conversation kept, same container re-attached', async () => {
    const before = (await messageTexts(chat)).filter(Boolean);
    await wb.reload();
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 60_000 });
    const ids = fakeContainers(cfg.stateDir);
    if (ids.length !== 1 || ids[0] !== containerId) throw new Error(`expected the same single container ${containerId}, found ${ids.join(', ') || 'none'}`);
    chat = await openChat(wb);
    // Compared as the user reads it (a live streamed rendering and a fresh one may differ in whitespace only). The
    // panel may first show the state it saved itself, then the host's: wait for the host's to match.
    const norm = (texts) => texts.filter(Boolean).map((t) => t.replace(/\s+/g, ' ').trim());
    let after = [];
    await waitFor(async () => {
      after = norm(await messageTexts(chat));
      return after.length === before.length && after.every((t, i) => t === norm(before)[i]);
    }, { timeout: 30_000, what: 'the same conversation after the reload' }).catch(async () => {
      const changed = norm(before).map((b, i) => [b, after[i] ?? '']).filter(([b, a]) => b !== a);
      const statuses = await chat.locator('main.messages article.message').evaluateAll((els) => els.map((e) => e.getAttribute('data-status')));
      throw new Error(`the conversation differs after the reload: ${JSON.stringify(changed.slice(0, 2))} (${before.length} -> ${after.length} messages, statuses ${statuses.join(',')})`);
    });
    for (const q of [q1, q2]) if (!after.some((t) => t.includes(q))) throw new Error(`question "${q}" is missing after the reload`);
  }, { wb: current, needs: ['3 chat: streamed answer, follow-up carries the first exchange'] });

  await journey('5 explain three selections: comment threads, batched by Triton', async () => {
    const statsBefore = batchStats((await tritonGet(cfg, `/v2/models/${MODEL}/stats`)).body);
    await openFile(wb, SAMPLE);
    await selectLines(wb, [4, 7, 10]);
    await wb.runCommand(title('explainSelection'));
    const threads = wb.page.locator('.monaco-editor .review-widget');
    const bodies = await waitFor(async () => {
      if ((await threads.count()) !== 3) return false;
      const texts = await threads.evaluateAll((els) => els.map((e) => ({
        body: e.querySelector('.comment-body')?.textContent ?? '',
        all: e.textContent ?? '',
      })));
      // While a thread streams, its comment is labelled "waiting…" or "answering…"; finished ones have no label.
      const done = texts.every((t) => t.body.trim() && !/Waiting for the server|waiting…|answering…/.test(t.all));
      return done && texts;
    }, { timeout: 180_000, interval: 250, what: 'three finished explanations next to the code' });
    log(`      explanations: ${bodies.map((b) => b.body.length).join(', ')} chars`);
    await docScreenshot(wb, 'explain-selection.png');
    const statsAfter = batchStats((await tritonGet(cfg, `/v2/models/${MODEL}/stats`)).body);
    const batched = Object.entries(statsAfter).filter(([size, n]) => Number(size) >= 2 && n > (statsBefore[size] ?? 0));
    if (!batched.length) throw new Error(`no execution with batch size >= 2 during explain: before ${JSON.stringify(statsBefore)}, after ${JSON.stringify(statsAfter)}`);
    log(`      batch executions (size: count): ${JSON.stringify(statsAfter)}`);
  }, { wb: current, needs: ['2 load model: progress, then ready'] });

  await journey('6 stop during a long answer: cancelled on the server, partial kept', async () => {
    const cancelledBefore = await cancelledCount(cfg);
    // A long answer (about 40 s with the engine's step delay): the user raises the limit in the settings.
    await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 1500 }, /settings changed: .*maxNewTokens/);
    chat = await openChat(wb);
    const n = await assistantArticles(chat).count();
    await ask(chat, 'Tell me a long story about GPUs.');
    const article = assistantArticles(chat).nth(n);
    const state = () => article.evaluate((e) => ({ status: e.getAttribute('data-status'), text: e.querySelector('.message-body')?.textContent ?? '' }));
    await waitFor(async () => {
      if (!(await article.count())) return false;
      const { status, text } = await state();
      if (status !== 'streaming' && status !== null) throw new FatalWait(`the answer was "${status}" before Stop could be pressed`);
      return status === 'streaming' && text.trim().length > 0;
    }, { timeout: 60_000, interval: 100, what: 'the answer to start streaming' });
    await chat.locator('button[data-action="stop"]').click();
    const { text } = await watchAnswer(chat, n, { until: 'stopped', timeout: 30_000 });
    if (!text.trim()) throw new Error('the partial answer was not kept');
    await article.locator('.message-marker.stopped').waitFor({ timeout: 10_000 });
    const after = await waitFor(async () => { const c = await cancelledCount(cfg); return c > cancelledBefore && c; },
      { timeout: 30_000, what: 'chatglm3_cancelled_requests_total to grow' });
    log(`      cancelled requests counter: ${cancelledBefore} -> ${after}; partial answer ${text.length} chars`);
    await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 96 }, /settings changed: .*maxNewTokens/);
  }, { wb: current, needs: ['2 load model: progress, then ready'] });

  await journey('6b live activity: the bar says generating, Server Status shows the running answer as it happens', async () => {
    await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 1500 }, /settings changed: .*maxNewTokens/);
    chat = await openChat(wb);
    const n = await assistantArticles(chat).count();
    await ask(chat, 'Tell me another long story about GPUs.');
    await wb.waitForStatus(/ChatGLM: generating \(1\)/, { timeout: 60_000 });
    const spinner = wb.page.locator(`.part.statusbar .statusbar-item[id^="${extensionId}."] .codicon-loading`);
    if (!(await spinner.count())) throw new Error('the generating status has no spinner icon');
    await wb.runCommand(title('showServerStatus'));
    const status = await wb.frameWith('#figure-activeRows', { what: 'the Server Status view' });
    const text = async (selector) => ((await status.locator(selector).textContent()) ?? '').trim();
    const rows = await waitFor(async () => { const t = await text('#figure-activeRows'); return Number(t) >= 1 && t; },
      { timeout: 30_000, what: 'the Server Status view to show the running row' });
    await waitFor(async () => /^1\D/.test(await text('#figure-thisWindow')), { timeout: 10_000, what: 'the answer of this window in the view' });
    // The tokens/s sparkline moves while the answer streams: its path changes from one refresh to the next.
    const path = () => status.locator('#path-generatedTokensPerSecond').getAttribute('d');
    const first = await waitFor(async () => (await path()) || false, { timeout: 20_000, what: 'a tokens/s point' });
    await waitFor(async () => { const d = await path(); return d && d !== first; }, { timeout: 20_000, what: 'the tokens/s sparkline to move' });
    const tokensPerSecond = await text('#last-generatedTokensPerSecond');
    if (!(Number.parseFloat(tokensPerSecond.replace(/,/g, '')) > 0)) throw new Error(`tokens/s while streaming: "${tokensPerSecond}"`);
    // The CPU test server reports no GPU metrics: no empty GPU cards.
    for (const gpu of ['#section-gpus', '#section-gpuCharts']) if (await status.locator(gpu).isVisible()) throw new Error(`${gpu} is shown without GPU metrics`);
    if (!(await status.locator('#section-schedulerCharts').isVisible())) throw new Error('the continuous-batching charts are hidden');
    log(`      server status while streaming: ${rows} active row(s), ${tokensPerSecond} tokens/s; bar: ${await wb.statusBarText()}`);
    await docScreenshot(wb, 'server-status.png');
    await chat.locator('button[data-action="stop"]').click();
    await watchAnswer(chat, n, { until: 'stopped', timeout: 30_000 });
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 30_000 });
    await waitFor(async () => (await text('#figure-activeRows')) === '0', { timeout: 30_000, what: 'the view to show no running row after Stop' });
    await wb.runCommand('View: Close All Editors');
    await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 96 }, /settings changed: .*maxNewTokens/);
  }, { wb: current, needs: ['2 load model: progress, then ready'] });

  await journey('7 unload model, stop server: no container left', async () => {
    let t = Date.now();
    await wb.runCommand(title('unloadModel'));
    await wb.waitForStatus(/ChatGLM: not loaded/, { timeout: 120_000 });
    log(`      unloaded in ${Date.now() - t} ms`);
    const ready = await tritonGet(cfg, `/v2/models/${MODEL}/ready`);
    if (ready.status === 200) throw new Error('Triton still reports the model ready after Unload');
    t = Date.now();
    await wb.runCommand(title('stopServer'));
    await wb.waitForStatus(/ChatGLM: stopped/, { timeout: 120_000 });
    await waitFor(() => fakeContainers(cfg.stateDir).length === 0, { timeout: 30_000, what: 'no container left' });
    await waitFor(() => tritonProcesses(cfg).length === 0, { timeout: 30_000, what: 'the tritonserver process to exit' });
    log(`      stopped and removed in ${Date.now() - t} ms`);
  }, { wb: current, needs: ['1 fresh install: start server from the palette'] });

  await server.stop();
}

/**
 * README images: always saved with the results; copied to docs/screenshots only with E2E_UPDATE_SCREENSHOTS=1, so
 * that a test run does not rewrite committed files.
 */
async function docScreenshot(wb, name) {
  const file = await wb.screenshot(join(resultsDir, 'screenshots', name));
  if (process.env.E2E_UPDATE_SCREENSHOTS === '1') {
    mkdirSync(screenshotsDir, { recursive: true });
    copyFileSync(file, join(screenshotsDir, name));
    log(`      updated docs/screenshots/${name}`);
  }
}

/**
 * Changes settings as the user would in "Preferences: Open Remote Settings" and waits until the extension reports
 * the change in its log channel (VS Code delivers file changes asynchronously).
 */
async function changeRemoteSettings(server, values, logged) {
  const before = extensionLog(server).length;
  writeRemoteSettings(server.userDataDir, values);
  await waitFor(() => logged.test(extensionLog(server).slice(before)), { timeout: 30_000, what: `the extension to see ${JSON.stringify(values)}` });
}

/** The current window's log channel of the extension (the newest extension host's file). */
function extensionLog(server) {
  const logs = join(server.userDataDir, 'logs');
  const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
  const files = walk(logs).filter((f) => f.includes(`/${extensionId}/`)).sort();
  return files.length ? readFileSync(files.at(-1), 'utf8') : '';
}

/** { batchSize: executionCount } from Triton's statistics extension. */
function batchStats(stats) {
  const out = {};
  for (const b of stats?.model_stats?.[0]?.batch_stats ?? []) out[b.batch_size] = Number(b.compute_infer?.count ?? 0);
  return out;
}

async function cancelledCount(cfg) {
  const text = await (await fetch(`http://127.0.0.1:${cfg.metrics}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('chatglm3_cancelled_requests_total'))
    .reduce((sum, l) => sum + Number(l.split(/\s+/).at(-1)), 0);
}

/** Opens a workspace file from the Explorer, as a user would (Quick Open depends on the search index being ready). */
async function openFile(wb, name) {
  await wb.runCommand('View: Show Explorer');
  const row = wb.page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first();
  await row.waitFor({ timeout: 30_000 });
  await row.click();
  await wb.page.locator(`.tabs-container .tab[aria-label^="${name}"]`).waitFor();
  await wb.page.locator('.editor-instance .monaco-editor .view-lines').first().waitFor();
}

/** Puts one cursor on each (1-based) line with Alt+Click, then selects the lines (multi-cursor, as a user would). */
async function selectLines(wb, lines) {
  const page = wb.page;
  const editor = page.locator('.editor-instance .monaco-editor').first();
  const lineAt = async (n) => {
    // Monaco renders lines absolutely positioned; the line-number gutter tells which row is which.
    const numbers = editor.locator('.margin-view-overlays .line-numbers');
    const tops = await numbers.evaluateAll((els) => els.map((e) => ({ n: Number(e.textContent), top: e.parentElement.getBoundingClientRect().top })));
    const row = tops.find((t) => t.n === n);
    if (!row) throw new Error(`line ${n} is not rendered`);
    const box = await editor.locator('.view-lines').boundingBox();
    return { x: box.x + 40, y: row.top + 8 };
  };
  for (const [i, n] of lines.entries()) {
    const p = await lineAt(n);
    if (i > 0) await page.keyboard.down('Alt'); // Alt+Click adds a cursor (editor.multiCursorModifier default)
    await page.mouse.click(p.x, p.y);
    if (i > 0) await page.keyboard.up('Alt');
  }
  await wb.runCommand('Expand Line Selection');
  const count = await waitFor(async () => {
    const text = await page.locator('.statusbar-item[id="status.editor.selection"]').textContent().catch(() => '');
    return /\(3 selections\)|3 selections/.test(text ?? '') && text;
  }, { timeout: 10_000, what: 'three selections in the editor' });
  log(`      editor: ${count}`);
}

async function failureJourneys(extensionsDir) {
  const cfg = await windowConfig('failures', { 'tritonChatglm.dockerPath': join(root, 'failures/bin/docker') });
  const server = await startCodeServer({ name: 'failures', extensionsDir, folder: workspace, remoteSettings: cfg.settings, env: windowEnv(cfg) });
  let wb;
  const current = () => wb;
  const failFile = join(cfg.stateDir, 'fail');
  const expectStartFailure = async (re) => {
    await wb.clearNotifications();
    await wb.runCommand(title('startServer'));
    const text = await wb.waitForNotification(re, { timeout: 60_000 });
    await wb.waitForStatus(/ChatGLM: server error|ChatGLM: stopped/, { timeout: 30_000 });
    if (runningContainers(cfg).length) throw new Error('a container is running after a failed start');
    log(`      message: ${text}`);
  };
  const opened = await journey('8a failure: docker missing', async () => {
    wb = await Workbench.open(server, 'failures');
    await wb.waitForStatus(/ChatGLM: stopped/);
    await expectStartFailure(/Docker was not found.*(Install Docker Engine|path of the docker command)/);
  }, { wb: current });
  // The fix for 8a is to install docker where the setting points: from here on the fake docker is there.
  mkdirSync(join(root, 'failures/bin'), { recursive: true });
  symlinkSync(fakeDocker, join(root, 'failures/bin/docker'));
  const cases = [
    ['8b failure: docker daemon down', 'daemon-down', /Docker daemon is not running.*(systemctl start docker|Start Docker)/],
    ['8c failure: no NVIDIA runtime', 'no-nvidia', /NVIDIA Container Toolkit.*nvidia-ctk runtime configure/],
    ['8d failure: serving image missing', 'image-missing', /serving image is not available.*Build it now/],
  ];
  for (const [name, mode, re] of cases) {
    await journey(name, async () => {
      if (!opened) wb = await Workbench.open(server, 'failures');
      writeFileSync(failFile, mode);
      await expectStartFailure(re);
    }, { wb: current });
  }
  await journey('8e after the cause is gone, Start works', async () => {
    rmSync(failFile, { force: true });
    await wb.clearNotifications();
    await wb.runCommand(title('startServer'));
    // The bar still shows the previous failure until the new start begins.
    await wb.waitForStatus(/ChatGLM: starting|ChatGLM: not loaded/, { timeout: 30_000, failOn: null });
    await wb.waitForStatus(/ChatGLM: not loaded/, { timeout: 180_000 });
    if (runningContainers(cfg).length !== 1) throw new Error('no running container after the fixed start');
    await wb.runCommand(title('stopServer'));
    await wb.waitForStatus(/ChatGLM: stopped/, { timeout: 120_000 });
    await waitFor(() => fakeContainers(cfg.stateDir).length === 0, { timeout: 30_000, what: 'no container left' });
  }, { wb: current, needs: ['8a failure: docker missing'] });
  await server.stop();
}

async function chineseJourney(vsix) {
  const nlsZh = JSON.parse(readFileSync(join(projectRoot, 'package.nls.zh-cn.json'), 'utf8'));
  const bundleFile = join(projectRoot, 'l10n/bundle.l10n.zh-cn.json');
  const cfg = await windowConfig('zh');
  let wb;
  await journey('9 display language Simplified Chinese', async () => {
    if (!existsSync(bundleFile)) throw new Error('l10n/bundle.l10n.zh-cn.json does not exist');
    const bundle = JSON.parse(readFileSync(bundleFile, 'utf8'));
    const zh = (key) => {
      const v = bundle[key];
      const text = typeof v === 'string' ? v : v?.message; // bundle entries are strings or { message, comment }
      if (!text) throw new Error(`no Chinese translation for "${key}"`);
      return text;
    };
    const extensionsDir = join(root, 'zh/extensions');
    const userDataDir = join(root, 'zh/user-data');
    installExtension({ vsix, extensionsDir, userDataDir });
    await installStubLanguagePack({ locale: 'zh-cn', extensionsDir, userDataDir });
    const server = await startCodeServer({ name: 'zh', extensionsDir, folder: workspace, remoteSettings: cfg.settings, env: windowEnv(cfg), locale: 'zh-cn' });
    wb = await Workbench.open(server, 'zh');
    // Status bar (l10n bundle), a command title in the palette (package.nls.zh-cn.json), the chat panel (strings).
    await wb.waitForStatus(new RegExp(escape(zh('ChatGLM: stopped'))));
    await wb.runCommand(title('openChat', nlsZh));
    const chat = await wb.frameWith('#root textarea.input', { what: 'the chat panel' });
    const sendText = await waitFor(async () => {
      const t = (await chat.locator('button[data-action="send"]').textContent())?.trim();
      return t && t !== 'Send' && t;
    }, { timeout: 20_000, what: 'the Send button in Chinese' });
    if (sendText !== zh('Send')) throw new Error(`Send button reads "${sendText}", expected "${zh('Send')}"`);
    const serverBox = await chat.locator('.server-status').textContent();
    if (!serverBox?.includes(zh('The Triton server is not running.'))) throw new Error(`server box reads "${serverBox}"`);
    await wb.screenshot(join(resultsDir, 'zh-cn-chat-panel.png'));
    await server.stop();
  }, { wb: () => wb });
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// ------------------------------------------------------------------------------------------------------ the stage

async function main() {
  mkdirSync(resultsDir, { recursive: true });
  if (!existsSync(fakeDocker)) throw new Error(`the fake docker is missing: ${fakeDocker}`);
  log(`run directory ${root}`);
  const only = typeof args.only === 'string' ? args.only : '';
  const want = (...keys) => !only || keys.some((k) => only === k || only.startsWith(k));
  const ui = want('1', '2', '3', '4', '5', '6', '7', 'main', '8', 'failures', '9', 'zh');
  const desktopSuite = want('extension-host') && process.env.E2E_VSCODE;
  if (ui || !desktopSuite) codeServerBin(); // fails early with the install hint
  let vsix, extensionsDir;
  if (ui) {
    log('packaging the extension (npm run package)');
    vsix = packageExtension();
    extensionsDir = join(root, 'extensions');
    log(`installing ${vsix}: ${installExtension({ vsix, extensionsDir, userDataDir: join(root, 'install-user-data') }).join(', ')}`);
  }
  if (want('1', '2', '3', '4', '5', '6', '7', 'main')) await mainWindowJourneys(extensionsDir);
  if (want('8', 'failures')) await failureJourneys(extensionsDir);
  if (want('9', 'zh')) await chineseJourney(vsix);
  if (want('extension-host')) {
    const cfg = await windowConfig('exthost');
    const r = await runExtensionHostSuite({ cfg, env: windowEnv(cfg), folder: workspace, dir: join(root, 'exthost') });
    results.push(...r);
  }
}

let crash;
try {
  await main();
} catch (e) {
  crash = e;
  log(`e2e stage crashed: ${e?.stack ?? e}`);
  results.push({ name: 'e2e harness', ok: false, ms: 0, error: String(e?.stack ?? e) });
} finally {
  try { collectActivationTimes(); } catch (e) { log(`activation times not collected: ${e?.message ?? e}`); }
  await cleanup();
}
writeJUnit(junitFile, results, Date.now() - stageStart);
const failed = results.filter((r) => !r.ok);
log(`${results.length - failed.length} passed, ${failed.length} failed in ${((Date.now() - stageStart) / 1000).toFixed(0)} s; JUnit: ${junitFile}`);
for (const f of failed) log(`  failed: ${f.name}: ${f.error?.split('\n')[0]}`);
process.exit(crash || failed.length ? 1 : 0);

/**
 * The extension logs "activation: commands registered in X ms" on every activation (each window and reload);
 * VS Code keeps output channels as files under the user-data dirs of this run. bench/activation.mjs reads the
 * figures from test-results/e2e/activation.json.
 */
function collectActivationTimes() {
  const runs = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.name.endsWith('.log')) {
        for (const m of readFileSync(p, 'utf8').matchAll(/activation: commands registered in ([\d.]+) ms/g)) runs.push(Number(m[1]));
      }
    }
  };
  walk(root);
  if (!runs.length) return;
  writeFileSync(join(resultsDir, 'activation.json'), `${JSON.stringify({ runs_ms: runs, source: 'extension log lines in the e2e run (code-server 4.99.4)' }, null, 2)}\n`);
  log(`activation: ${runs.length} activations, ${runs.map((r) => r.toFixed(0)).join(', ')} ms`);
}

function writeJUnit(file, rs, ms) {
  const x = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c])).replace(/[^\t\n\r\u0020-\u{10ffff}]/gu, ''); // XML 1.0 forbids other control characters
  const cases = rs.map((r) => {
    const [suite, name] = r.name.startsWith('extension host: ') ? ['e2e.extension-host', r.name.slice(16)] : ['e2e.journeys', r.name];
    const body = r.ok ? '' : `<failure message="${x(r.error?.split('\n')[0] ?? 'failed')}">${x(r.error ?? '')}</failure>`;
    return `  <testcase classname="${suite}" name="${x(name)}" time="${(r.ms / 1000).toFixed(3)}">${body}</testcase>`;
  });
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="e2e" tests="${rs.length}" failures="${rs.filter((r) => !r.ok).length}" time="${(ms / 1000).toFixed(3)}">\n<testsuite name="e2e" tests="${rs.length}" failures="${rs.filter((r) => !r.ok).length}">\n${cases.join('\n')}\n</testsuite>\n</testsuites>\n`);
}

