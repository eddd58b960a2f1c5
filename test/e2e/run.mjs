#!/usr/bin/env node
// The end-to-end stage: the PACKAGED extension (.vsix) in a real VS Code (code-server 4.139.1), driven by Chromium,
// with the fake docker (test/fake-docker/docker) whose containers run the real tritonserver with our model
// repository and the tiny engine. Journeys 1-7 share one window (as a user's session would); the failure and
// Chinese journeys get fresh ones; the extension-host mocha suite runs last through @vscode/test-electron's runTests
// with code-server standing in for the VS Code executable. Results: console + JUnit XML (--junit=<file>).
// Options: --only=main|failures|zh|setup|untrusted|edit|theme|context|download|lm|complete|glm4|extension-host runs one group; see README.md for the environment knobs.
// --only=docker (the real Docker Engine; only when named) is run by test/docker/run-stage.mjs, which starts the daemon.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';
import {
  cleanup, codeServerBin, escapeRegExp, extensionId, fakeContainers, fakeDocker, freePort, getRunRoot, installExtension, log,
  FatalWait, packageExtension, processesMentioning, projectRoot, removeFakeContainers, resultsDir, screenshotsDir, startCodeServer,
  waitFor, Workbench, writeFakeCheckpoint, writeRemoteSettings, onCleanup,
} from './lib.mjs';
import { installStubLanguagePack } from './language-pack.mjs';
import { modelPickerJourney } from './modelPicker.mjs';
import { realDockerJourneys } from './realDocker.mjs';
import { completionJourney } from './completion.mjs';
import { glm4Journey } from './glm4.mjs';
import { runExtensionHostSuite } from './extension-host.mjs';
import { pictureQuestions, scriptedAnswers } from './scripted-answers.mjs';

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
// Editor context journeys: a file whose own code fence needs a longer fence, a file Add File… must not offer (the
// default search.exclude hides node_modules), and one over the model's input budget on its own.
const NOTES = 'docs/notes.md';
mkdirSync(join(workspace, 'docs'), { recursive: true });
writeFileSync(join(workspace, NOTES), ['# Geometry notes', '', 'Run the examples with:', '', '```sh', 'python geometry.py', '```', ''].join('\n'));
mkdirSync(join(workspace, 'node_modules/left-pad'), { recursive: true });
writeFileSync(join(workspace, 'node_modules/left-pad/index.js'), 'module.exports = (s) => s;\n');
const TABLE = 'data/table.py';
mkdirSync(join(workspace, 'data'), { recursive: true });
writeFileSync(join(workspace, TABLE), `TABLE = [\n${'    (1, 2, 3, 4),\n'.repeat(1_500)}]\n`);
// The tiny engine's scripted answers for the picture steps (scripted-answers.mjs); other questions get random text.
const scriptsFile = join(root, 'scripted-answers.json');
writeFileSync(scriptsFile, JSON.stringify(scriptedAnswers));

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
      // Gives the idle engine room to gather concurrent requests on a busy 2-core machine.
      'tritonChatglm.queueDelayMs': 200,
      ...overrides,
    },
  };
}

function windowEnv(cfg, extra = {}) {
  return {
    FAKE_DOCKER_STATE: cfg.stateDir,
    // The fake host has the NVIDIA toolkit's hook (and, like most real hosts, no "nvidia" runtime): the preflight finds it.
    PATH: [join(projectRoot, 'test/fake-docker/bin'), process.env.PATH].filter(Boolean).join(delimiter),
    TINY_ENGINE_PROMPT_LOG: cfg.promptLog,
    // A decode step every 25 ms: answers take a few seconds, so streaming and Stop can be observed.
    TINY_ENGINE_STEP_DELAY_MS: '25',
    TINY_ENGINE_SCRIPTS: scriptsFile,
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

/** What each attachment chip of a locator reads (its glyphs, such as the ×, and its token figure left out). */
const chipTexts = (chips) => chips.evaluateAll((els) => els.map((e) => {
  const copy = e.cloneNode(true);
  for (const g of copy.querySelectorAll('.chip-glyph, .chip-tokens')) g.remove();
  return (copy.textContent ?? '').trim();
}));

/** The prompt of a log line ends with the assistant's opening tag, so the question is the last *user* message. */
const lastUserMessage = (line) => line.messages?.filter((m) => m.role === 'user').at(-1);

function promptLogLines(cfg) {
  if (!existsSync(cfg.promptLog)) return [];
  return readFileSync(cfg.promptLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** Waits until the panel shows `count` messages and its last answer is `status`; returns the articles. */
async function waitForTurns(frame, count, { status = 'complete', timeout = 120_000 } = {}) {
  const articles = frame.locator('main.messages article.message');
  await waitFor(async () => {
    if ((await articles.count()) !== count) return false;
    const last = await articles.nth(count - 1).getAttribute('data-status');
    if (last === 'failed') throw new FatalWait(`the answer failed: ${await articles.nth(count - 1).textContent()}`);
    return last === status;
  }, { timeout, interval: 100, what: `${count} messages, the last one ${status}` });
  return articles;
}

const CONTINUE_PROMPT_START = 'Continue your last answer';
const shot = (wb, name) => wb.screenshot(join(resultsDir, 'screenshots', name));

/**
 * Edits the first question of the conversation in place (as Copilot Chat does) and sends it: the turns after it
 * go, the edited question is answered without them.
 */
async function editEarlierQuestion(wb, chat, cfg, { replaced }) {
  const articles = await waitForTurns(chat, 4);
  const first = chat.locator('main.messages article.message.user').first();
  await first.hover();
  await first.locator('button[data-action="editQuestion"]').click();
  const editor = first.locator('.question-editor textarea');
  await editor.waitFor();
  const edited = 'What does Triton\'s dynamic batcher do, in one paragraph?';
  await editor.fill(edited);
  const dimmed = await chat.locator('main.messages article.superseded').count();
  if (dimmed !== 3) throw new Error(`expected the 3 later messages dimmed while editing, found ${dimmed}`);
  await shot(wb, 'chat-edit-question.png');
  await editor.press('Enter');
  await waitForTurns(chat, 2);
  const texts = await messageTexts(chat);
  if (!texts[0].includes(edited)) throw new Error(`the first question reads "${texts[0]}"`);
  if (texts.some((t) => t.includes(replaced))) throw new Error('the later question is still shown');
  const asked = await waitFor(() => promptLogLines(cfg).find((l) => lastUserMessage(l)?.content === edited),
    { timeout: 10_000, what: 'the edited question in the engine prompt log' });
  const others = asked.messages.filter((m) => m.role === 'user' && m.content !== edited);
  if (others.length) throw new Error(`the edited question was sent with the replaced turns: ${JSON.stringify(others)}`);
  log(`      edited question answered alone: ${await articles.count()} messages left`);
}

/** With a low max_new_tokens the tiny engine stops at the limit: Continue appends to the same answer. */
async function continueAfterLength(wb, chat, cfg, server) {
  await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 16 }, /settings changed: .*maxNewTokens/);
  try {
    // In a chat of its own (named after the question: the history journey finds it by that name).
    await wb.runCommand(title('newChat'));
    await chat.locator('.empty-state').waitFor({ timeout: 20_000 });
    const question = 'Count slowly from one to fifty.';
    await ask(chat, question);
    const articles = await waitForTurns(chat, 2);
    const answer = articles.nth(1);
    const answerId = await answer.getAttribute('data-id');
    const go = answer.locator('.message-continue button[data-action="continueAnswer"]');
    await go.waitFor({ timeout: 10_000 });
    const firstPart = ((await answer.locator('.message-body').textContent()) ?? '').replace(/\s+/g, ' ').trim();
    const usage = await answer.locator('.message-usage').getAttribute('title');
    if (!/\d+ prompt tokens, 16 answer tokens/.test(usage ?? '')) throw new Error(`token figures of the cut answer: "${usage}"`);
    await shot(wb, 'chat-continue.png');
    await go.click();
    await waitFor(async () => (await answer.getAttribute('data-status')) === 'streaming' || (await answer.locator('.message-usage').getAttribute('title').catch(() => '')) !== usage,
      { timeout: 30_000, interval: 50, what: 'the answer to be continued' });
    await waitForTurns(chat, 2);
    // The tiny engine writes random ASCII and CJK text, markup characters included, so the whole answer may render
    // its first part differently: compared are the message (the same one), its length and the request.
    const whole = ((await answer.locator('.message-body').textContent()) ?? '').replace(/\s+/g, ' ').trim();
    if (await answer.getAttribute('data-id') !== answerId || whole.length <= firstPart.length) {
      throw new Error(`the answer did not grow in place: "${firstPart}" -> "${whole}"`);
    }
    const total = await answer.locator('.message-usage').getAttribute('title');
    if (!/32 answer tokens/.test(total ?? '')) throw new Error(`both parts' tokens are counted: "${total}"`);
    const line = await waitFor(() => promptLogLines(cfg).findLast((l) => lastUserMessage(l)?.content?.startsWith(CONTINUE_PROMPT_START)),
      { timeout: 10_000, what: 'the continuation request in the engine prompt log' });
    // The prompt ends with the assistant's opening tag (an empty assistant message): before it the instruction,
    // and before that the cut answer after its question.
    const at = line.messages.findLastIndex((m) => m.role === 'user');
    const [q, cut] = [line.messages[at - 2], line.messages[at - 1]];
    if (q?.role !== 'user' || q.content !== question || cut?.role !== 'assistant' || !cut.content.trim()) {
      throw new Error(`the continuation did not carry the cut answer as the last turn: ${JSON.stringify(line.messages.slice(-4))}`);
    }
    log(`      continued: ${firstPart.length} -> ${whole.length} chars, ${total}`);
  } finally {
    await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 96 }, /settings changed: .*maxNewTokens/);
  }
}

/** The chat's keybindings (package.json): focus from the editor, a new chat inside the view; ArrowUp recall. */
async function chatKeys(wb) {
  await openFile(wb, SAMPLE);
  await wb.page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  const lastQuestion = 'Count slowly from one to fifty.';
  await wb.page.keyboard.press('Control+Alt+J');
  const chat = await wb.frameWith('#root textarea.input', { what: 'the chat panel' });
  await waitFor(() => chat.evaluate(() => document.hasFocus() && document.activeElement?.classList.contains('input')),
    { timeout: 20_000, what: 'the chat input to have the keyboard focus after Ctrl+Alt+J' });
  // Ctrl+L's keybinding applies while the panel has the focus, which the panel reports to the extension host (the
  // context key tritonChatglm.chatFocus): a press that comes before that round trip ends finds no binding, as a
  // person's would. Pressed again then, at most three times.
  for (let press = 1; ; press++) {
    await wb.page.keyboard.press('Control+L');
    const shown = await chat.locator('.empty-state').waitFor({ timeout: 5_000 }).then(() => true, () => false);
    if (shown) break;
    const focus = await chat.evaluate(() => `focused ${document.hasFocus()}, ${document.activeElement?.className}`);
    if (press === 3) throw new Error(`Ctrl+L pressed three times in the chat input did not start a new chat (panel ${focus})`);
    log(`      Ctrl+L found no binding yet (panel ${focus}): pressed again`);
    await chat.locator('textarea.input').focus();
  }
  // The welcome names # and / and the editor's Explain and Edit Selection with the keys package.json binds.
  const ways = await chat.locator('.empty-state .empty-ways kbd').allTextContents();
  if (JSON.stringify(ways) !== JSON.stringify(['#', '/', 'Ctrl+Alt+E', 'Ctrl+Alt+U'])) throw new Error(`the welcome's ways to ask name ${JSON.stringify(ways)}`);
  await waitFor(() => chat.evaluate(() => document.activeElement?.classList.contains('input')), { timeout: 10_000, what: 'the input focused in the new chat' });
  await wb.page.keyboard.press('ArrowUp');
  const recalled = await chat.locator('textarea.input').inputValue();
  if (recalled !== lastQuestion) throw new Error(`ArrowUp in the new chat recalled "${recalled}"`);
  await shot(wb, 'chat-new-chat.png');
  await chat.locator('textarea.input').fill('');
}

/** The history as the view title's quick pick: groups, search, rename, delete + Undo, export, open. */
async function chatHistory(wb) {
  const page = wb.page;
  const widget = page.locator('.quick-input-widget');
  const rows = widget.locator('.quick-input-list .monaco-list-row');
  const row = (label) => rows.filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escape(label)}\\s*$`) }) }).first();
  const labels = () => rows.locator('.label-name').allTextContents().then((t) => t.map((x) => x.trim()));
  const open = async () => {
    if (!(await page.locator('.part.sidebar .composite.title', { hasText: /ChatGLM/i }).count())) await wb.runCommand(title('openChat'));
    // A quick pick closes when the focus leaves it, and on a loaded machine a late focus change of the journey
    // before (the editor's, an explanation's) can come after the click: clicked again where it did, at most twice.
    for (let attempt = 1; ; attempt++) {
      await page.locator('.part.sidebar .title-actions .action-label[aria-label*="Show Chat History"]').click();
      await widget.waitFor({ state: 'visible' });
      await rows.first().waitFor();
      await new Promise((r) => setTimeout(r, 500));
      if (await widget.isVisible()) return;
      if (attempt === 3) throw new Error('the history quick pick closed by itself three times after opening');
      log('      the history quick pick closed as it opened: clicked again');
    }
  };
  const button = async (label, tooltip) => {
    // A quick pick closes when focus leaves it (on a loaded machine a late editor update can take it): open it
    // again, once, rather than wait on a hidden row; the journey still checks every effect of the click.
    const hovered = await row(label).hover({ timeout: 10_000 }).then(() => true, () => false);
    if (!hovered) {
      if (await widget.isVisible()) throw new Error(`the history row "${label}" cannot be hovered`);
      log('      the history quick pick had closed: opened again');
      await open();
      await row(label).hover();
    }
    await row(label).locator(`.action-label[aria-label="${tooltip}"]`).click();
  };
  await open();
  const separators = await widget.locator('.quick-input-list-separator').allTextContents();
  for (const s of ['Today', 'Explanations']) if (!separators.some((t) => t.includes(s))) throw new Error(`no "${s}" group: ${JSON.stringify(separators)}`);
  const all = await labels();
  for (const name of ['Explain geometry.py:4', 'Explain geometry.py:7', 'Explain geometry.py:10']) {
    if (!all.includes(name)) throw new Error(`no conversation "${name}" in ${JSON.stringify(all)}`);
  }
  if (all.some((l) => l === 'New conversation' || l.startsWith('Explain what this'))) throw new Error(`unnamed or empty conversations listed: ${JSON.stringify(all)}`);
  await shot(wb, 'chat-history.png');

  // search
  const input = widget.locator('.quick-input-box input');
  await input.fill('Count slowly');
  await waitFor(async () => (await labels()).join('|') === 'Count slowly from one to fifty.', { timeout: 10_000, what: 'the search to leave one chat' });
  await input.fill('');

  // rename
  await button('Count slowly from one to fifty.', 'Rename');
  const box = widget.locator('.quick-input-box input');
  await waitFor(async () => (await box.inputValue()) === 'Count slowly from one to fifty.', { timeout: 10_000, what: 'the rename box with the title' });
  await box.fill('Counting test');
  await box.press('Enter');
  // The list takes the rename box's place, so the focus stays in the quick input (it once went to the editor
  // between the two, and the list closed as it came back).
  await waitFor(async () => (await labels()).includes('Counting test'), { timeout: 15_000, what: 'the renamed chat in the list' });
  await new Promise((r) => setTimeout(r, 500));
  if (!(await widget.isVisible())) throw new Error('the history list closed by itself after the rename');
  // The search covers what was said too: the old title's words are still the chat's first question.
  const found = await waitFor(async () => {
    if (!(await widget.isVisible())) await open();
    if ((await input.inputValue({ timeout: 2_000 })) !== 'Count slowly') await input.fill('Count slowly', { timeout: 2_000 });
    // The first .label-name of a row is its title (the detail line is a label of its own).
    const shown = await rows.evaluateAll((rs) => rs.map((r) => ({ title: r.querySelector('.label-name')?.textContent?.trim(), text: r.textContent ?? '' })));
    return shown.length === 1 && shown[0].title === 'Counting test' && shown[0];
  }, { timeout: 30_000, what: 'the renamed chat found by its text' });
  if (!found.text.includes('Count slowly from one to fifty.')) throw new Error(`no words around the match: ${found.text}`);
  if (await widget.isVisible()) await input.fill('', { timeout: 5_000 }).catch(() => {});

  // delete, then Undo from the notification (the palette's Clear All Notifications takes the list's place)
  if (await widget.isVisible()) await page.keyboard.press('Escape');
  await wb.clearNotifications();
  await open();
  await button('Counting test', 'Delete');
  await waitFor(async () => !(await labels()).includes('Counting test'), { timeout: 10_000, what: 'the chat to leave the list' });
  const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: 'Deleted "Counting test".' });
  await toast.waitFor({ timeout: 10_000 });
  await shot(wb, 'chat-history-undo.png');
  await toast.locator('.monaco-button', { hasText: 'Undo' }).click();
  if (await widget.isVisible()) await page.keyboard.press('Escape');
  await open();
  await waitFor(async () => (await labels()).includes('Counting test'), { timeout: 10_000, what: 'Undo to bring the chat back' });

  // export as Markdown through the save dialog (VS Code's own simple dialog in a remote window)
  await button('Counting test', 'Export as Markdown');
  const pathBox = widget.locator('.quick-input-box input');
  await waitFor(async () => /Counting test\.md$/.test(await pathBox.inputValue()), { timeout: 15_000, what: 'the save dialog with the file name' });
  await pathBox.press('Enter');
  const exported = join(workspace, 'Counting test.md');
  await waitFor(() => existsSync(exported), { timeout: 15_000, what: `${exported} to be written` });
  const md = readFileSync(exported, 'utf8');
  if (!/^# Counting test\n\n> Exported from the ChatGLM chat\. [^\n]+\n\n## You\n\nCount slowly from one to fifty\.\n\n## ChatGLM3-6B\n\n/.test(md)) throw new Error(`the export reads: ${md.slice(0, 200)}`);

  // open one: the view shows it and names it in its title
  await open();
  await row('Explain geometry.py:7').click();
  await waitFor(async () => /Explain geometry\.py:7/i.test(await page.locator('.part.sidebar .composite.title').textContent() ?? ''),
    { timeout: 15_000, what: 'the view title to name the opened conversation' });
  const chat = await wb.frameWith('#root textarea.input', { what: 'the chat panel' });
  await waitFor(async () => ((await messageTexts(chat))[0] ?? '').includes('geometry.py'), { timeout: 15_000, what: 'the explanation in the panel' });
  await shot(wb, 'chat-explain-opened.png');
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
      const toast = (await wb.notifications()).find((t) => /Loading ChatGLM3-6B/.test(t));
      if (toast) return `notification: ${toast}`;
      if (/ChatGLM: ready|load failed/.test(bar)) throw new FatalWait(`the bar went to "${bar}" without showing progress`);
      return false;
    }, { timeout: 60_000, interval: 100, what: 'load progress in the status bar or a notification' });
    log(`      load progress seen in ${seen}`);
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 240_000 });
    const ready = await tritonGet(cfg, `/v2/models/${MODEL}/ready`);
    if (ready.status !== 200) throw new Error(`model not ready in Triton: ${ready.status}`);
    // The status bar menu when ready: no setup actions; Reload and Unload under Model, Restart and Stop under Server.
    const menu = await statusMenu(wb);
    log(`      status bar menu (ready): ${menu.text}`);
    if (JSON.stringify(menu.items) !== JSON.stringify(['Open Chat', 'Show Server Status', 'Show Server Logs', 'Open Settings', 'Reload Model', 'Unload Model', 'Restart Server', 'Stop Server'])
      // A group's label is drawn on its first row, after the row's own words.
      || !/Show Server Logs\s*Logs and settings.*Reload Model\s*Model\b.*Restart Server\s*Server\b/.test(menu.text)) throw new Error(`status bar menu when ready: ${JSON.stringify(menu)}`);
    // Stale notifications close themselves: the "Load the model now?" of journey 1, the load's progress.
    await waitFor(async () => (await wb.notifications()).every((t) => !/Load the model now|Loading ChatGLM3-6B/.test(t)),
      { timeout: 30_000, what: 'the load offer and the load progress to close' })
      .catch(async (e) => { throw new Error(`${e.message}: ${JSON.stringify(await wb.notifications())}`); });
  }, { wb: current, needs: ['1 fresh install: start server from the palette'] });

  const q1 = 'What does a dynamic batcher do?';
  const q2 = 'And why does it help a GPU?';
  await journey('3 chat: streamed answer, follow-up carries the first exchange', async () => {
    chat = await openChat(wb);
    // A new chat with the model ready: the welcome, with the model's name (looked at in the screenshot).
    await chat.locator('.empty-state h2', { hasText: 'ChatGLM3-6B' }).waitFor({ timeout: 30_000 });
    await wb.screenshot(join(resultsDir, 'screenshots', 'chat-empty.png'));
    await ask(chat, q1);
    const a1 = await watchAnswer(chat, 0);
    if (a1.partials.length < 2) throw new Error(`the first answer was not seen growing while streaming (${a1.partials.length} partial renderings)`);
    if (!a1.text.trim()) throw new Error('the first answer is empty');
    log(`      answer 1: ${a1.partials.length} partial renderings, ${a1.text.length} chars`);
    await ask(chat, q2);
    const a2 = await watchAnswer(chat, 1);
    if (!a2.text.trim()) throw new Error('the follow-up answer is empty');
    await wb.runCommand('View: Hide Panel'); // the Output panel from journey 1 would crowd the chat's screenshots
    await shot(wb, 'chat-follow-up.png');
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

  await journey('4a edit an earlier question: the later turns are replaced', async () => {
    chat = await openChat(wb);
    await editEarlierQuestion(wb, chat, cfg, { replaced: q2 });
  }, { wb: current, needs: ['3 chat: streamed answer, follow-up carries the first exchange'] });

  await journey('4b Continue after the length limit: the same answer grows', async () => {
    chat = await openChat(wb);
    await continueAfterLength(wb, chat, cfg, server);
  }, { wb: current, needs: ['2 load model: progress, then ready'] });

  await journey('4c keys: Ctrl+Alt+J focuses the chat, Ctrl+L starts a new one, ArrowUp recalls', async () => {
    await chatKeys(wb);
    chat = await openChat(wb);
  }, { wb: current, needs: ['4b Continue after the length limit: the same answer grows'] });

  await journey('5 explain three selections: brief threads, generated together, Dismiss All', async () => {
    const decodeBefore = await decodeCounts(cfg);
    // The explanations are scripted answers (scripted-answers.mjs) for the picture: room for them to end by themselves.
    await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 512 }, /settings changed: .*maxNewTokens/);
    try {
      await hidePanel(wb); // the Comments panel must not open by itself: start from none shown
      await wb.clearNotifications();
      await openFile(wb, SAMPLE);
      await selectLines(wb, [4, 7, 10]);
      await wb.runCommand(title('explainSelection'));
      // Three threads, each one line: its title with the answer's first sentence (the scripted answers' own).
      const titles = await finishedExplanations(wb, 3);
      const expected = ['geometry.py:4: Returns the area of a circle, π · r².', 'geometry.py:7: The hypotenuse of a right triangle (Pythagoras).', 'geometry.py:10: The arithmetic mean of values.']
        .map((t) => `Explanation of ${t}`);
      if (JSON.stringify([...titles].sort()) !== JSON.stringify([...expected].sort())) throw new Error(`thread titles: ${JSON.stringify(titles)}`);
      const bodies = await wb.page.locator('.monaco-editor .review-widget .comment-body').count();
      if (bodies !== 0) throw new Error(`${bodies} comment bodies shown: brief threads show their title line only`);
      if (await wb.page.locator('.part.panel').isVisible()) throw new Error('a panel opened by itself (the Comments panel)');
      const toasts = (await wb.notifications()).filter((t) => /Explain/i.test(t));
      if (toasts.length) throw new Error(`a notification for the run: ${JSON.stringify(toasts)}`);
      // A click on the first thread's Show Full Explanation: its whole answer; the picture shows both kinds.
      const widgets = wb.page.locator('.monaco-editor .review-widget');
      const area = widgets.filter({ has: wb.page.locator('.head .review-title', { hasText: 'geometry.py:4:' }) });
      await area.locator('.review-actions .action-label[aria-label^="Show Full Explanation"]').click();
      await widgets.locator('.comment-body', { hasText: 'only the radius is squared' }).waitFor({ timeout: 15_000 });
      // VS Code opens its Comments panel the first time in a window that a thread gets a comment to show
      // (comments.openView "firstFile"): the first Show Full Explanation does. Hidden for the picture.
      const opened = await wb.page.locator('.part.panel').isVisible();
      log(`      Show Full Explanation ${opened ? 'opened' : 'did not open'} the Comments panel`);
      await hidePanel(wb);
      await docScreenshot(wb, 'explain-selection.png');
      // The title bar: Dismiss All first, Dismiss (×) last of ours, two actions apart.
      const brief = widgets.filter({ has: wb.page.locator('.head .review-title', { hasText: 'geometry.py:7:' }) });
      const actions = await brief.locator('.review-actions .action-label').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''));
      const allAt = actions.findIndex((a) => a.startsWith(nls['command.dismissAllExplanations.title']));
      const oneAt = actions.findIndex((a) => a.startsWith(nls['command.dismissExplanation.title']));
      if (allAt !== 0 || oneAt - allAt < 3) throw new Error(`thread actions: ${JSON.stringify(actions)}`);
      // Dismiss All Explanations (a thread's first title action): every thread goes, and its notification brings
      // them back with Undo (from the notification center when its toast is not shown).
      await brief.locator(`.review-actions .action-label[aria-label^="${nls['command.dismissAllExplanations.title']}"]`).click();
      await waitFor(async () => (await widgets.count()) === 0, { timeout: 15_000, what: 'no explanation thread left' });
      if (!(await wb.waitForNotification(/Dismissed 3 explanations\./, { timeout: 5_000 }).catch(() => undefined))) {
        await wb.runCommand('Notifications: Show Notifications');
        await wb.waitForNotification(/Dismissed 3 explanations\./, { timeout: 15_000 });
      }
      await wb.page.locator('.notifications-toasts .monaco-button, .notifications-center .monaco-button', { hasText: 'Undo' }).first().click();
      if (await wb.page.locator('.notifications-center.visible').count()) await wb.runCommand('Notifications: Hide Notifications').catch(() => {});
      // Back as they were: the first one open in full, the other two brief.
      const shownTitles = () => widgets.locator('.head .review-title').evaluateAll((els) => els.map((e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim()).sort());
      const wanted = JSON.stringify(['Explanation of geometry.py:4', ...expected.slice(1)].sort());
      await waitFor(async () => JSON.stringify(await shownTitles()) === wanted, { timeout: 15_000, what: 'the three threads back after Undo' })
        .catch(async (e) => { throw new Error(`${e.message}: ${JSON.stringify(await shownTitles())}`); });
      await widgets.locator('.comment-body', { hasText: 'only the radius is squared' }).waitFor({ timeout: 15_000 });
      await wb.runCommand(title('dismissAllExplanations'));
      await waitFor(async () => (await widgets.count()) === 0, { timeout: 15_000, what: 'no explanation thread left' });
      await wb.clearNotifications();
      // One selection: the same brief layout as three, and still no panel.
      await hidePanel(wb);
      await selectLineRange(wb, 7, 7);
      await wb.runCommand(title('explainSelection'));
      const single = await finishedExplanations(wb, 1);
      // (Home puts the selection after the indentation, so the scripted answer does not match: the tiny model's text.)
      if (single.length !== 1 || !/^Explanation of geometry\.py:7: \S/.test(single[0])) throw new Error(`one selection's thread: ${JSON.stringify(single)}`);
      if (await wb.page.locator('.monaco-editor .review-widget .comment-body').count()) throw new Error('one selection shows its comment body');
      if (await wb.page.locator('.part.panel').isVisible()) throw new Error('explaining one selection opened a panel');
      await wb.runCommand(title('dismissAllExplanations'));
      await waitFor(async () => (await widgets.count()) === 0, { timeout: 15_000, what: 'no explanation thread left' });
      await wb.clearNotifications();
    } finally {
      await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 96 }, /settings changed: .*maxNewTokens/);
    }
    const together = await generatedTogether(cfg, decodeBefore);
    log(`      decode steps during explain: ${together.steps}, rows ${together.rows}`);
  }, { wb: current, needs: ['2 load model: progress, then ready'] });

  await journey('5a chat history: search, rename, delete with Undo, export; explanations named and apart', async () => {
    await chatHistory(wb);
    chat = await openChat(wb);
  }, { wb: current, needs: ['5 explain three selections: brief threads, generated together, Dismiss All', '4b Continue after the length limit: the same answer grows'] });
  const contextQuestion = pictureQuestions.attached;
  await journey('5b attach selections and a file, ask: the prompt carries them in the documented layout', async () => {
    // This question takes the README's chat picture: a chat of its own (5a left an explanation open), a side bar wide
    // enough for the code block, and room for the scripted answer (scripted-answers.mjs) to end by itself.
    await wb.runCommand(title('newChat'));
    await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 1024 }, /settings changed: .*maxNewTokens/);
    const sideBar = await setSideBarWidth(wb, 460);
    try {
      await attachAndAsk();
    } finally {
      await setSideBarWidth(wb, sideBar).catch((e) => log(`      side bar not restored: ${e.message}`));
      await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 96 }, /settings changed: .*maxNewTokens/);
    }
  }, { wb: current, needs: ['2 load model: progress, then ready'] });

  async function attachAndAsk() {
    await openFile(wb, SAMPLE);
    await selectLineRange(wb, 3, 4);
    // The keybinding (Ctrl+Alt+J here) attaches the selection and opens the chat.
    await wb.page.keyboard.press('Control+Alt+KeyJ');
    chat = await wb.frameWith('.composer .attachment-chip[data-kind="selection"]', { what: 'the selection chip in the chat panel' });
    // The editor's context menu offers the same command in its ChatGLM submenu (a right-click inside the selection
    // keeps it).
    await selectLineRange(wb, 6, 7);
    const inSelection = await lineAt(wb, 6);
    const submenu = wb.page.locator('.monaco-menu .action-item .action-label', { hasText: /^ChatGLM$/ }).first();
    // Inside our submenu only: VS Code >= 1.10x has an "Add Selection to Chat" of its own (for its Chat view) at the
    // menu's top level.
    const menuItem = wb.page.locator('.monaco-submenu .action-item .action-label', { hasText: /^Add Selection to Chat$/ }).first();
    await waitFor(async () => {
      if (!(await submenu.isVisible()) && !(await menuItem.isVisible())) await wb.page.mouse.click(inSelection.x, inSelection.y, { button: 'right' });
      if (!(await menuItem.isVisible())) await submenu.hover({ timeout: 5_000 });
      await menuItem.click({ timeout: 5_000 });
      // The click counts once the menu is gone (one landing while the menu still opens is lost).
      await menuItem.waitFor({ state: 'hidden', timeout: 2_000 });
      return true;
    }, { timeout: 30_000, what: '"ChatGLM > Add Selection to Chat" in the editor context menu' });
    chat = await wb.frameWith('.composer .attachment-chip[data-kind="selection"] + .attachment-chip[data-kind="selection"]', { what: 'the second selection chip' });
    // Add File…: a quick pick of the workspace's files, without what search.exclude hides.
    await chat.locator('.composer .attachment-add').click();
    const picker = wb.page.locator('.quick-input-widget');
    const input = picker.locator('.quick-input-box input');
    const rowLabels = () => picker.locator('.quick-input-list .monaco-list-row .label-name').allTextContents();
    await waitFor(async () => (await rowLabels()).includes(SAMPLE), { timeout: 60_000, what: 'the workspace files in the quick pick' });
    const offered = await rowLabels();
    if (offered.some((l) => l.includes('index.js'))) throw new Error(`the quick pick offers node_modules (search.exclude ignored): ${offered.join(', ')}`);
    await input.fill('notes.md');
    const row = picker.locator('.quick-input-list .monaco-list-row', { has: wb.page.locator('.label-name', { hasText: /^notes\.md$/ }) }).first();
    await row.click({ timeout: 15_000 });
    chat = await wb.frameWith('.composer .attachment-chip[data-kind="file"]', { what: 'the file chip' });
    const composerChips = () => chipTexts(chat.locator('.composer .attachment-chip'));
    const before = await composerChips();
    // The selections of geometry.py replace its current-file chip: the file does not go as well (issue #20).
    if (JSON.stringify(before) !== JSON.stringify(['geometry.py:3-4', 'geometry.py:6-7', 'notes.md'])) throw new Error(`chips above the input: ${JSON.stringify(before)}`);
    await wb.screenshot(join(resultsDir, 'screenshots', 'chat-attachments-composer.png'));

    const n = await assistantArticles(chat).count();
    await ask(chat, contextQuestion);
    await watchAnswer(chat, n);
    const line = await waitFor(() => promptLogLines(cfg).find((l) => lastUserMessage(l)?.content?.endsWith(contextQuestion)),
      { timeout: 10_000, what: 'the question in the engine prompt log' });
    // The documented layout (README "Editor context in chat"): the two selections (not their whole file), the picked
    // file (its own ``` fence makes ours four backticks long), each as a header and a fenced block; then the question.
    const notes = readFileSync(join(workspace, NOTES), 'utf8');
    const expected = [
      `File: ${SAMPLE} (lines 3-4)\n\`\`\`python\ndef circle_area(radius):\n    return math.pi * radius ** 2\n\`\`\``,
      `File: ${SAMPLE} (lines 6-7)\n\`\`\`python\ndef hypotenuse(a, b):\n    return math.sqrt(a * a + b * b)\n\`\`\``,
      `File: ${NOTES}\n\`\`\`\`markdown\n${notes}\`\`\`\``,
      contextQuestion,
    ].join('\n\n');
    const got = lastUserMessage(line).content;
    if (got !== expected) {
      const at = [...expected].findIndex((ch, i) => got[i] !== ch);
      throw new Error(`the prompt differs from the documented layout at ${at}: ${JSON.stringify(got.slice(Math.max(0, at - 40), at + 80))}`);
    }
    // The question shows its chips in the transcript; above the input the current file is suggested again.
    const sent = await chipTexts(chat.locator('main.messages article.message.user').last().locator('.attachment-chip'));
    if (JSON.stringify(sent) !== JSON.stringify(['geometry.py:3-4', 'geometry.py:6-7', 'notes.md'])) throw new Error(`chips with the question: ${JSON.stringify(sent)}`);
    await waitFor(async () => JSON.stringify(await composerChips()) === JSON.stringify(['geometry.pycurrent file — click to attach']), { what: 'the sent chips to leave the input' });
    // The README's chat picture: the question with its chips, the scripted answer (finished: watchAnswer above).
    await hidePanel(wb);
    await wb.clearNotifications();
    await chat.locator('textarea.input').focus(); // no hover toolbar over the answer
    await docScreenshot(wb, 'chat-panel.png');
    // Only suggested (tritonChatglm.chat.currentFile: suggest), the current file does not go with the next questions.
  }

  await journey('5c over the input budget: told before sending, Cancel keeps the question, Remove sends without it', async () => {
    const budgetQuestion = 'Which rows repeat?';
    await chat.locator('.composer .attachment-add').click();
    const picker = wb.page.locator('.quick-input-widget');
    await picker.locator('.quick-input-box input').fill('table.py');
    await picker.locator('.quick-input-list .monaco-list-row', { has: wb.page.locator('.label-name', { hasText: /^table\.py$/ }) }).first().click({ timeout: 60_000 });
    chat = await wb.frameWith('.composer .attachment-chip[data-kind="file"]', { what: 'the table.py chip' });
    const requestsBefore = promptLogLines(cfg).length;
    const dialog = wb.page.locator('.monaco-dialog-box');
    const answerDialog = async (button) => {
      await dialog.waitFor({ timeout: 30_000 });
      const text = (await dialog.textContent()) ?? '';
      if (!/more than the 6,144 the model accepts\. Nothing has been sent\./.test(text) || !/table\.py: about [\d,]+ tokens/.test(text)) throw new Error(`the budget dialog says: ${text}`);
      await dialog.locator('.dialog-buttons .monaco-button', { hasText: button }).click();
      await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
    };
    await chat.locator('textarea.input').fill(budgetQuestion);
    await chat.locator('button[data-action="send"]').click();
    await wb.screenshot(join(resultsDir, 'screenshots', 'chat-attachments-budget.png')).catch(() => {});
    await answerDialog(/^Cancel$/);
    await waitFor(async () => (await chat.locator('textarea.input').inputValue()) === budgetQuestion, { what: 'the question back in the input' });
    if (promptLogLines(cfg).length !== requestsBefore) throw new Error('a request reached the model although the user cancelled');
    const n = await assistantArticles(chat).count();
    await chat.locator('button[data-action="send"]').click();
    await answerDialog('Remove table.py and Send');
    await watchAnswer(chat, n);
    const line = await waitFor(() => promptLogLines(cfg).find((l) => lastUserMessage(l)?.content?.endsWith(budgetQuestion)),
      { timeout: 10_000, what: 'the question in the engine prompt log' });
    if (lastUserMessage(line).content !== budgetQuestion) throw new Error(`the question went out with attachments: ${lastUserMessage(line).content.slice(0, 200)}`);
    const left = await chat.locator('.composer .attachment-chip[data-kind="file"]').count();
    if (left) throw new Error('the dropped attachment is still above the input');
  }, { wb: current, needs: ['5b attach selections and a file, ask: the prompt carries them in the documented layout'] });

  await journey('5d Apply to Selection: a diff preview, then Accept (its title action) replaces the selected lines', async () => {
    const question = 'Rewrite circle_area with tau.';
    // Short enough for the answer limit (96 tokens: one a character here).
    const code = 'def circle_area(r):\n    return math.tau * r * r / 2';
    // The engine reads the scripts at each admission: this journey's answer joins the pictures' ones.
    writeFileSync(scriptsFile, JSON.stringify([...scriptedAnswers, { match: question, answer: `\`\`\`python\n${code}\n\`\`\`\n` }]));
    const original = readFileSync(join(workspace, SAMPLE), 'utf8');
    await wb.clearNotifications();
    await openFile(wb, SAMPLE);
    await selectLineRange(wb, 3, 4);
    chat = await openChat(wb);
    const n = await assistantArticles(chat).count();
    await ask(chat, question);
    await watchAnswer(chat, n);
    await assistantArticles(chat).nth(n).locator('.code-block button[data-action="codeApply"]').click();
    const diffTab = wb.page.locator('.tabs-container .tab', { hasText: `${SAMPLE} ↔ Proposed Change` });
    await diffTab.waitFor({ timeout: 30_000 });
    // The proposal on the right of the diff, the question beside it.
    await wb.page.locator('.monaco-diff-editor .editor.modified .view-lines', { hasText: 'math.tau' }).first().waitFor({ timeout: 30_000 });
    // Accept and Discard are the diff editor's title actions (no notification).
    const acceptAction = wb.page.locator('.editor-actions .action-label[aria-label^="Accept Proposed Change"]');
    await acceptAction.waitFor({ timeout: 30_000 });
    if ((await wb.notifications()).some((t) => /Replace the selection|Apply/.test(t))) throw new Error('Apply asked in a notification');
    await shot(wb, 'chat-apply-diff.png');
    await acceptAction.click({ timeout: 30_000 });
    await diffTab.waitFor({ state: 'detached', timeout: 30_000 });
    // The edit is in the editor (unsaved); saved, the file reads as the preview showed.
    await wb.runCommand('File: Save');
    const expected = original.replace('def circle_area(radius):\n    return math.pi * radius ** 2\n', `${code}\n`);
    await waitFor(() => readFileSync(join(workspace, SAMPLE), 'utf8') === expected, { timeout: 15_000, what: `${SAMPLE} with lines 3-4 replaced` })
      .catch((e) => { throw new Error(`${e.message}: ${JSON.stringify(readFileSync(join(workspace, SAMPLE), 'utf8'))}`); });
    // Put the sample back for the journeys after this one, on disk and in the editor (Revert loads the file again).
    // Repeated until both hold: on a loaded machine the editor's save can land after the check above and undo the
    // disk write, and a dirty editor would stop later journeys at "Close All Editors"' save prompt.
    const sample = join(workspace, SAMPLE);
    const tab = wb.page.locator(`.tabs-container .tab[aria-label^="${SAMPLE}"]`).first();
    await openFile(wb, SAMPLE);
    await waitFor(async () => {
      if (readFileSync(sample, 'utf8') !== original) writeFileSync(sample, original);
      await wb.runCommand('File: Revert File');
      await new Promise((r) => setTimeout(r, 1_000));
      const dirty = await tab.evaluate((e) => e.classList.contains('dirty'));
      const shown = (await wb.page.locator('.editor-instance .monaco-editor .view-lines').first().textContent()) ?? '';
      return !dirty && shown.includes('radius') && !shown.includes('math.tau') && readFileSync(sample, 'utf8') === original;
    }, { timeout: 60_000, interval: 500, what: `${SAMPLE} back to its original text, on disk and in the editor` });
  }, { wb: current, needs: ['2 load model: progress, then ready'] });

  await journey('5e #symbol without a language server: the picker says why it is empty and lists the current file\'s definitions', async () => {
    // No Python extension here: VS Code's workspace symbol search has no provider for geometry.py.
    await openFile(wb, SAMPLE);
    chat = await openChat(wb);
    const input = chat.locator('textarea.input');
    await input.fill('');
    await input.click();
    await wb.page.keyboard.type('#sym');
    await chat.locator('.completion-list').waitFor({ state: 'visible', timeout: 10_000 });
    await wb.page.keyboard.press('Enter');
    const picker = wb.page.locator('.quick-input-widget');
    // The Markdown extension answers the search (docs/notes.md's heading); nothing answers it for Python.
    const notice = picker.locator('.quick-input-list .monaco-list-row', { hasText: 'No symbols of geometry.py in the workspace search' }).first();
    try {
      await notice.waitFor({ timeout: 30_000 });
    } catch (e) {
      const rows = await picker.locator('.quick-input-list .monaco-list-row').evaluateAll((els) => els.map((x) => x.textContent));
      await wb.page.keyboard.press('Escape');
      throw new Error(`${e.message}; the picker lists ${JSON.stringify(rows)}`);
    }
    const said = ((await notice.textContent()) ?? '').replace(/\s+/g, ' ');
    if (!/Language extensions answer this search, and none gave symbols for this file\. Listed below: the definitions a word scan finds in geometry\.py\./.test(said)) throw new Error(`the notice row: ${said}`);
    const rows = await picker.locator('.quick-input-list .monaco-list-row .label-name').evaluateAll((els) => els.map((e) => (e.textContent ?? '').trim()));
    log(`      the picker lists: ${JSON.stringify(rows)}`);
    for (const name of ['circle_area', 'hypotenuse', 'mean']) {
      if (!rows.some((r) => r.endsWith(name))) {
        await wb.page.keyboard.press('Escape');
        throw new Error(`${name} is not listed: ${JSON.stringify(rows)}`);
      }
    }
    await shot(wb, 'symbol-fallback.png');
    await picker.locator('.quick-input-list .monaco-list-row', { hasText: 'hypotenuse' }).first().click();
    const chip = chat.locator('.composer .attachment-chip[data-kind="symbol"]');
    await chip.waitFor({ timeout: 15_000 });
    const texts = await chipTexts(chip);
    if (!texts.some((t) => /hypotenuse.*6.7/.test(t))) throw new Error(`the symbol chip reads ${JSON.stringify(texts)}`);
    await chip.locator('.chip-remove').click();
    await chip.waitFor({ state: 'detached', timeout: 15_000 });
    await input.fill('');
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
    // A stopped answer can go on where it stopped.
    await article.locator('.message-continue button[data-action="continueAnswer"]').waitFor({ state: 'visible', timeout: 10_000 });
    const after = await waitFor(async () => { const c = await cancelledCount(cfg); return c > cancelledBefore && c; },
      { timeout: 30_000, what: 'chatglm3_cancelled_requests_total to grow' });
    log(`      cancelled requests counter: ${cancelledBefore} -> ${after}; partial answer ${text.length} chars`);
    await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 96 }, /settings changed: .*maxNewTokens/);
  }, { wb: current, needs: ['2 load model: progress, then ready'] });

  await journey('6b live activity: the bar says generating, Server Status shows the running answer as it happens', async () => {
    // The story (scripted: scripted-answers.mjs) is longer than the limit: it still streams when Stop is pressed.
    await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 2048 }, /settings changed: .*maxNewTokens/);
    chat = await openChat(wb);
    await wb.runCommand(title('newChat')); // the picture shows this chat only, not journey 6's random partial answer
    await chat.locator('.empty-state').waitFor({ timeout: 20_000 });
    const n = await assistantArticles(chat).count();
    await ask(chat, pictureQuestions.story);
    await wb.waitForStatus(/ChatGLM: generating \(1\)/, { timeout: 60_000 });
    const spinner = wb.page.locator(`.part.statusbar .statusbar-item[id^="${extensionId}."] .codicon-loading`);
    if (!(await spinner.count())) throw new Error('the generating status has no spinner icon');
    // The view opens beside the active editor: the sample file, where the load for the picture comes from.
    await openFile(wb, SAMPLE);
    chat = await openChat(wb);
    await wb.runCommand(title('showServerStatus'));
    const status = await wb.frameWith('#figure-activeRows', { what: 'the Server Status view' });
    const text = async (selector) => ((await status.locator(selector).textContent()) ?? '').trim();
    const rows = await waitFor(async () => { const t = await text('#figure-activeRows'); return Number(t) >= 1 && t; },
      { timeout: 30_000, what: 'the Server Status view to show the running row' });
    await waitFor(async () => /^1\D/.test(await text('#figure-thisWindow')), { timeout: 10_000, what: 'the answer of this window in the view' });
    // The weights as the model reports them (chatglm3_weights_info): the tiny test engine runs float64, unquantized.
    await waitFor(async () => (await text('#figure-weights')) === 'float64 (not quantized)', { timeout: 10_000, what: 'the model weights row' });
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
    // The README picture under load: three explanations of the sample file (long scripted ones) join the running
    // answer; the view alone in the editor area (maximized), no progress toast over it (Do Not Disturb).
    const threadsBefore = await wb.page.locator('.monaco-editor .review-widget').count();
    await wb.runCommand('Notifications: Toggle Do Not Disturb Mode');
    try {
      await wb.runCommand('View: Focus First Editor Group'); // from the view's webview back to the sample file
      await selectLines(wb, [3, 6, 9]);
      await wb.runCommand(title('explainSelection'));
      await wb.page.locator('.tabs-container .tab', { hasText: 'ChatGLM Server Status' }).click(); // its group active
      await wb.runCommand('View: Toggle Maximize Editor Group');
      const loaded = await waitFor(async () => {
        const [rowsNow, mine] = [Number(await text('#figure-activeRows')), Number.parseInt(await text('#figure-thisWindow'), 10)];
        return rowsNow >= 3 && mine >= 3 && `${rowsNow} active rows, this window: ${await text('#figure-thisWindow')}`;
      }, { timeout: 60_000, what: 'the Server Status view to show the explanations running beside the answer' });
      await docScreenshot(wb, 'server-status.png');
      log(`      under load: ${loaded}; bar: ${await wb.statusBarText()}`);
      await wb.runCommand('View: Toggle Maximize Editor Group');
    } finally {
      await wb.runCommand('Notifications: Toggle Do Not Disturb Mode');
    }
    await chat.locator('button[data-action="stop"]').click();
    await watchAnswer(chat, n, { until: 'stopped', timeout: 30_000 });
    await finishedExplanations(wb, threadsBefore + 3);
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 30_000 });
    await waitFor(async () => (await text('#figure-activeRows')) === '0', { timeout: 30_000, what: 'the view to show no running row after Stop' });
    await wb.runCommand('View: Close All Editors');
    await changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 96 }, /settings changed: .*maxNewTokens/);
  }, { wb: current, needs: ['2 load model: progress, then ready'] });

  await journey('7 unload model (it asks first), stop server: no container left', async () => {
    let t = Date.now();
    // The model is loaded: Unload asks, naming how long journey 2's load took. Cancel keeps it.
    const dialog = wb.page.locator('.monaco-dialog-box');
    await wb.runCommand(title('unloadModel'));
    await dialog.waitFor({ timeout: 30_000 });
    const asked = ((await dialog.textContent()) ?? '').replace(/\s+/g, ' ');
    if (!/Unload ChatGLM3-6B\?/.test(asked) || !/Loading it again took \d+( min \d+)? s last time\./.test(asked)) throw new Error(`the confirmation says: ${asked}`);
    log(`      asked: ${asked.slice(0, 160)}`);
    await dialog.locator('.monaco-button', { hasText: /^Cancel$/ }).click();
    await dialog.waitFor({ state: 'detached', timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 1_000));
    if (!/ChatGLM: ready/.test(await wb.statusBarText())) throw new Error(`after Cancel the bar says ${await wb.statusBarText()}`);
    if ((await tritonGet(cfg, `/v2/models/${MODEL}/ready`)).status !== 200) throw new Error('Cancel unloaded the model');
    await wb.runCommand(title('unloadModel'));
    await dialog.locator('.monaco-button', { hasText: /^Unload Model$/ }).click({ timeout: 30_000 });
    await wb.waitForStatus(/ChatGLM: not loaded/, { timeout: 120_000 });
    log(`      unloaded in ${Date.now() - t} ms`);
    const ready = await tritonGet(cfg, `/v2/models/${MODEL}/ready`);
    if (ready.status === 200) throw new Error('Triton still reports the model ready after Unload');
    // Nothing loaded any more: Stop does not ask.
    t = Date.now();
    await wb.runCommand(title('stopServer'));
    await wb.waitForStatus(/ChatGLM: stopped/, { timeout: 120_000 });
    if (await dialog.count()) throw new Error('Stop asked although no model was loaded');
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

/**
 * The status bar item's menu as a click shows it: `items`, the rows' labels in order (icons left out), and `text`,
 * everything the list shows (the group labels too); closed again with Escape.
 */
async function statusMenu(wb) {
  await wb.page.locator(`.part.statusbar .statusbar-item[id="${extensionId}.tritonChatglm.status"]`).first().click();
  const rows = wb.page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
  await rows.first().waitFor({ timeout: 15_000 });
  const items = await rows.locator('.label-name').evaluateAll((els) => els.map((e) => (e.textContent ?? '').trim()).filter(Boolean));
  const text = (await rows.evaluateAll((els) => els.map((e) => e.textContent ?? '').join(' | '))).replace(/\s+/g, ' ');
  await wb.page.keyboard.press('Escape');
  return { items, text };
}

/** The title of the side bar's view container as shown (upper case), '' when the side bar is hidden. */
const sideBarTitle = (wb) => wb.page.locator('.part.sidebar .composite.title h2').first().textContent({ timeout: 5_000 }).then((t) => (t ?? '').trim().toUpperCase(), () => '');

/** The current window's log channel of the extension (the newest extension host's file). */
function extensionLog(server) {
  const logs = join(server.userDataDir, 'logs');
  const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
  const files = walk(logs).filter((f) => f.includes(`/${extensionId}/`)).sort();
  return files.length ? readFileSync(files.at(-1), 'utf8') : '';
}

/** The continuous scheduler's decode steps and the rows they generated (its /metrics counters), summed over instances. */
async function decodeCounts(cfg) {
  const text = await (await fetch(`http://127.0.0.1:${cfg.metrics}/metrics`)).text();
  const sum = (name) => text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((total, l) => total + Number(l.split(/\s+/).at(-1)), 0);
  return { steps: sum('chatglm3_decode_steps_total'), rows: sum('chatglm3_decode_rows_total') };
}

/**
 * Since `before` (decodeCounts), some decode step generated for several requests at once: more rows than steps.
 * Triton hands requests to the continuous scheduler as they come (queue delay 0), so its own batch statistics
 * no longer show the batching; the scheduler's counters do. Waits for them: the engine hands them over when idle.
 */
async function generatedTogether(cfg, before) {
  let d = { steps: 0, rows: 0 };
  await waitFor(async () => {
    const now = await decodeCounts(cfg);
    d = { steps: now.steps - before.steps, rows: now.rows - before.rows };
    return d.steps > 0 && d.rows > d.steps;
  }, { timeout: 15_000, what: 'decode steps that generated several answers at once' })
    .catch((e) => { throw new Error(`${e.message}: ${d.rows} rows in ${d.steps} decode steps`); });
  return d;
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

/** A point on the text of a (1-based) line of the active editor. */
async function lineAt(wb, n) {
  const editor = wb.page.locator('.editor-instance .monaco-editor').first();
  // Monaco renders lines absolutely positioned; the line-number gutter tells which row is which. (The first of each:
  // comment threads next to the code hold editors of their own.)
  const numbers = editor.locator('.margin-view-overlays').first().locator('.line-numbers');
  const tops = await numbers.evaluateAll((els) => els.map((e) => ({ n: Number(e.textContent), top: e.parentElement.getBoundingClientRect().top })));
  const row = tops.find((t) => t.n === n);
  if (!row) throw new Error(`line ${n} is not rendered`);
  const box = await editor.locator('.view-lines').first().boundingBox();
  return { x: box.x + 40, y: row.top + 8 };
}

/** Hides the panel (Output, Comments...) where it is shown: the palette offers "Hide Panel" only then. */
async function hidePanel(wb) {
  if (await wb.page.locator('.part.panel').isVisible()) await wb.runCommand('View: Hide Panel');
}

/**
 * Waits until the editor shows `count` explanation threads and every answer of the window has ended (the status
 * bar no longer says "generating"); returns the threads' titles (a brief thread is its title line).
 */
async function finishedExplanations(wb, count) {
  const threads = wb.page.locator('.monaco-editor .review-widget');
  await waitFor(async () => (await threads.count()) === count, { timeout: 60_000, interval: 250, what: `${count} explanation threads next to the code` });
  // Finished: the bar is back to ready and every title says what its answer says, the same on two polls. The bar
  // alone is not enough: it reads "ready" until the answers are registered as running (the threads show first, and
  // on a slow machine the conversations are written before the requests go out), so it may never be seen busy.
  const titles = () => threads.locator('.head .review-title').evaluateAll((els) => els.map((e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim()));
  const waiting = /^Explanation of [^:]+:\d+(–\d+)?$|: (Waiting for the server…|waiting…|queued|answering…|Queued behind|Next in line)/;
  let previous = '';
  let last = [];
  let bar = '';
  await waitFor(async () => {
    [last, bar] = [await titles(), await wb.statusBarText()];
    const key = JSON.stringify(last);
    const done = /ChatGLM: ready/.test(bar) && last.length === count && !last.some((t) => waiting.test(t)) && key === previous;
    previous = key;
    return done;
  }, { timeout: 180_000, interval: 500, what: `${count} finished explanations` }).catch((e) => {
    throw new Error(`${e.message}: titles ${JSON.stringify(last)}, status bar "${bar}"`);
  });
  return last;
}

/**
 * Drags the primary side bar's edge until the side bar is `width` px wide (the chat view lives there); returns the
 * width it had. VS Code has no setting for it: a user drags the sash too.
 */
async function setSideBarWidth(wb, width) {
  const page = wb.page;
  const bar = page.locator('.part.sidebar');
  const box = await bar.boundingBox();
  if (!box) throw new Error('the side bar is not shown');
  if (Math.abs(box.width - width) <= 2) return box.width;
  const y = box.y + box.height / 2;
  // The sash's centre: VS Code >= 1.10x draws the parts as cards with a gap, so the sash lies a few px beyond the edge.
  const x = await page.evaluate((edge) => {
    const centres = [...document.querySelectorAll('.monaco-sash.vertical')].map((s) => { const r = s.getBoundingClientRect(); return r.left + r.width / 2; });
    return centres.filter((c) => Math.abs(c - edge) <= 12).sort((a, b) => Math.abs(a - edge) - Math.abs(b - edge))[0] ?? edge - 1;
  }, box.x + box.width);
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + (width - box.width) / 2, y, { steps: 4 });
  await page.mouse.move(x + (width - box.width), y, { steps: 4 });
  await page.mouse.up();
  await waitFor(async () => Math.abs(((await bar.boundingBox())?.width ?? 0) - width) <= 4, { timeout: 5_000, what: `the side bar ${width} px wide` });
  // Off the edge, so that the sash's hover highlight does not show in a picture.
  await page.mouse.move(box.x + width + 300, y + 150);
  const edge = x + (width - box.width);
  await waitFor(() => page.evaluate((x) => [...document.querySelectorAll('.monaco-sash.vertical')]
    .filter((sash) => Math.abs(sash.getBoundingClientRect().left + sash.getBoundingClientRect().width / 2 - x) <= 4)
    .every((sash) => ['transparent', 'rgba(0, 0, 0, 0)'].includes(window.getComputedStyle(sash, '::before').backgroundColor)), edge),
  { timeout: 5_000, what: 'the sash highlight to fade' });
  return box.width;
}

/** Selects whole (1-based) lines first..last: a click on the first line, Home, then Shift+Down past the last. */
async function selectLineRange(wb, first, last) {
  const page = wb.page;
  const p = await lineAt(wb, first);
  await page.mouse.click(p.x, p.y);
  await page.keyboard.press('Home');
  for (let i = first; i <= last; i += 1) await page.keyboard.press('Shift+ArrowDown');
  await waitFor(async () => {
    const text = await page.locator('.statusbar-item[id="status.editor.selection"]').textContent().catch(() => '');
    return /\(\d+ selected\)/.test(text ?? '') && text;
  }, { timeout: 10_000, what: `lines ${first}-${last} selected` });
}

/** Puts one cursor on each (1-based) line with Alt+Click, then selects the lines (multi-cursor, as a user would). */
async function selectLines(wb, lines) {
  const page = wb.page;
  for (const [i, n] of lines.entries()) {
    const p = await lineAt(wb, n);
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
  // A missing prerequisite is "setup needed" (never "server error"): the notice names it with its fix and leads to
  // the setup checklist; it closes itself once the setup is no longer needed.
  const expectStartFailure = async (re) => {
    await wb.clearNotifications();
    await wb.runCommand(title('startServer'));
    const text = await wb.waitForNotification(new RegExp(`needs setup.*${re.source}.*Show Setup Checklist`), { timeout: 60_000 });
    await wb.waitForStatus(/ChatGLM: setup needed/, { timeout: 30_000 });
    if (runningContainers(cfg).length) throw new Error('a container is running after a failed start');
    log(`      message: ${text}`);
  };
  const opened = await journey('8a failure: docker missing', async () => {
    wb = await Workbench.open(server, 'failures');
    // Docker missing is known from the start: the checks run when the window opens.
    await wb.waitForStatus(/ChatGLM: setup needed/);
    // The profile's first activation found the setup needed: the ChatGLM view (its checklist) is revealed, once.
    await waitFor(() => /first run: this is the first activation; the setup is needed/.test(extensionLog(server)), { timeout: 30_000, what: 'the first-run log line' });
    await waitFor(async () => (await sideBarTitle(wb)).startsWith('CHATGLM'), { timeout: 30_000, what: 'the ChatGLM view in the side bar' });
    await wb.frameWith('section.setup', { what: 'the setup checklist' });
    await shot(wb, 'first-run-revealed.png');
    // The status bar menu while the setup is needed: Start ChatGLM (not Start Server too), the setup actions grouped.
    const menu = await statusMenu(wb);
    log(`      status bar menu (setup needed): ${menu.text}`);
    const expected = ['Show Setup Checklist', 'Start ChatGLM', 'Re-check Setup', 'Choose Weights Folder…', 'Build Serving Image', 'Get Started with ChatGLM', 'Show Server Logs', 'Open Settings'];
    if (JSON.stringify(menu.items) !== JSON.stringify(expected) || !/Logs and settings/.test(menu.text)) throw new Error(`status bar menu while the setup is needed: ${JSON.stringify(menu)}`);
    // The second activation (the window reloaded with the Explorer shown) leaves the side bar as the user had it.
    await wb.runCommand('View: Show Explorer');
    await wb.reload();
    await wb.waitForStatus(/ChatGLM: setup needed/);
    await waitFor(() => /first run: recorded before; nothing to reveal/.test(extensionLog(server)), { timeout: 60_000, what: 'the second activation\'s first-run log line' });
    if ((await sideBarTitle(wb)) !== 'EXPLORER') throw new Error(`the side bar shows ${await sideBarTitle(wb)} after the second activation`);
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

/**
 * Edit Selection (a window of its own, on a file of its own): the scripted rewrites (prose around a fenced block)
 * stream into the diff editor; Accept by its key changes exactly the selected lines, Discard by its title action
 * changes nothing, and an edit of the file while the rewrite is written makes Accept refuse with a message.
 */
async function editJourneys(extensionsDir) {
  const cfg = await windowConfig('edit');
  const FILE = 'shapes.py';
  const file = join(workspace, FILE);
  writeFileSync(file, readFileSync(join(workspace, SAMPLE), 'utf8'));
  // Each answer fits the window's 96-token limit (one token a byte here).
  const rewrites = {
    tau: { instruction: 'Use math.tau in circle_area', code: 'def circle_area(radius):\n    return math.tau * radius ** 2 / 2', answer: (c) => `Here you go:\n\`\`\`python\n${c}\n\`\`\`` },
    hypot: { instruction: 'Use math.hypot in hypotenuse', code: 'def hypotenuse(a, b):\n    return math.hypot(a, b)', answer: (c) => `\`\`\`python\n${c}\n\`\`\`\nShorter and safer.` },
    empty: { instruction: 'Guard mean against an empty list', code: 'def mean(values):\n    return sum(values) / len(values) if values else 0.0', answer: (c) => `\`\`\`python\n${c}\n\`\`\`` },
  };
  writeFileSync(scriptsFile, JSON.stringify([...scriptedAnswers, ...Object.values(rewrites).map((r) => ({ match: r.instruction, answer: r.answer(r.code) }))]));
  const server = await startCodeServer({ name: 'edit', extensionsDir, folder: workspace, remoteSettings: cfg.settings, env: windowEnv(cfg) });
  let wb;
  const current = () => wb;
  const diffTab = () => wb.page.locator('.tabs-container .tab', { hasText: `${FILE} ↔ ChatGLM Edit` });
  const fileTab = () => wb.page.locator('.tabs-container .tab', { hasText: FILE, hasNotText: '↔' }).first();
  const modified = () => wb.page.locator('.monaco-diff-editor .editor.modified .view-lines').first();
  /** Edit Selection… from the palette, the instruction typed into its input box; resolves when the diff is shown. */
  const editLines = async (first, last, rewrite) => {
    await fileTab().click();
    await selectLineRange(wb, first, last);
    await wb.runCommand(title('editSelection'));
    const input = wb.page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 15_000 });
    const heading = (await wb.page.locator('.quick-input-widget .quick-input-title').textContent().catch(() => '')) ?? '';
    if (!/Edit Selection/.test(heading)) throw new Error(`the input box is titled "${heading}"`);
    await input.fill(rewrite.instruction);
    await wb.page.keyboard.press('Enter');
    await diffTab().waitFor({ timeout: 30_000 });
  };
  /** The words the diff's right side shows beside its lines (decorations: CSS ::after content, not in the text). */
  const diffNotes = () => wb.page.locator('.monaco-diff-editor .editor.modified .view-lines span').evaluateAll((els) => [...new Set(els
    .map((e) => window.getComputedStyle(e, '::after').content).filter((c) => c && c !== 'none' && c !== 'normal').map((c) => c.replace(/^"|"$/g, '')))]);
  /** The review's title actions as shown: their text (worded, no icon) and whether each is enabled. */
  const reviewActions = () => wb.page.locator('.editor-actions .action-label').evaluateAll((els) => els
    .filter((e) => /Proposed Change/.test(e.getAttribute('aria-label') ?? ''))
    .map((e) => ({ text: (e.textContent ?? '').trim(), disabled: e.classList.contains('disabled') || e.getAttribute('aria-disabled') === 'true' })));
  /** The rewrite's last line is in the diff's right side (the fenced block has closed: the answer is complete). */
  const rewritten = (rewrite) => waitFor(async () => ((await modified().textContent()) ?? '').replace(/\u00a0/g, ' ').includes(rewrite.code.split('\n').at(-1).trim()),
    { timeout: 60_000, what: 'the rewrite in the diff' });

  await journey('11 Edit Selection: the rewrite streams into a diff, Accept (Ctrl+Enter) changes exactly the selected lines', async () => {
    wb = await Workbench.open(server, 'edit');
    await wb.waitForStatus(/ChatGLM: stopped/);
    await wb.runCommand(title('startChatglm'));
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 300_000 });
    await wb.clearNotifications();
    await openFile(wb, FILE);
    const before = readFileSync(file, 'utf8');
    await editLines(3, 4, rewrites.tau);
    // While it is written: its lines say so in the diff, and Accept is there in words but disabled.
    const seen = { writing: [], actions: [] };
    await waitFor(async () => {
      const notes = await diffNotes();
      const actions = await reviewActions();
      if (notes.some((n) => /ChatGLM is writing/.test(n))) { seen.writing.push(...notes); seen.actions.push(actions); }
      return notes.some((n) => /Complete: Accept/.test(n));
    }, { timeout: 60_000, interval: 100, what: 'the diff to say the rewrite is complete' });
    log(`      while written: ${JSON.stringify([...new Set(seen.writing)])}, actions ${JSON.stringify(seen.actions[0] ?? 'not seen')}`);
    if (seen.actions.some((a) => a.find((x) => /^Accept/.test(x.text))?.disabled === false)) throw new Error(`Accept enabled while the rewrite is written: ${JSON.stringify(seen.actions)}`);
    await rewritten(rewrites.tau);
    const notes = await diffNotes();
    if (!notes.some((n) => n.includes('✓ Complete: Accept Ctrl+Enter · Discard Escape'))) throw new Error(`the diff says: ${JSON.stringify(notes)}`);
    const actions = await reviewActions();
    if (JSON.stringify(actions) !== JSON.stringify([{ text: 'Accept Proposed Change', disabled: false }, { text: 'Discard Proposed Change', disabled: false }])) throw new Error(`title actions: ${JSON.stringify(actions)}`);
    const right = ((await modified().textContent()) ?? '').replace(/\u00a0/g, ' ');
    if (/Here you go/.test(right)) throw new Error('the prose around the block is in the proposal');
    await shot(wb, 'edit-selection-diff.png');
    if ((await wb.notifications()).length) throw new Error(`notifications during the review: ${JSON.stringify(await wb.notifications())}`);
    // Accept by its key, in the diff (the rewrite may still be ending: Accept then says so, and is pressed again).
    await modified().click();
    await waitFor(async () => {
      await wb.page.keyboard.press('Control+Enter');
      await new Promise((r) => setTimeout(r, 1_000));
      return !(await diffTab().count());
    }, { timeout: 30_000, interval: 500, what: 'Accept to close the diff' });
    await wb.runCommand('File: Save');
    const expected = before.replace('def circle_area(radius):\n    return math.pi * radius ** 2\n', `${rewrites.tau.code}\n`);
    await waitFor(() => readFileSync(file, 'utf8') === expected, { timeout: 15_000, what: `${FILE} with lines 3-4 rewritten, nothing else` })
      .catch((e) => { throw new Error(`${e.message}: ${JSON.stringify(readFileSync(file, 'utf8'))}`); });
  }, { wb: current });

  await journey('11a Edit Selection: Discard (the title action) changes nothing', async () => {
    const before = readFileSync(file, 'utf8');
    await editLines(6, 7, rewrites.hypot);
    await rewritten(rewrites.hypot);
    await wb.page.locator('.editor-actions .action-label[aria-label^="Discard Proposed Change"]').click({ timeout: 15_000 });
    await diffTab().waitFor({ state: 'detached', timeout: 15_000 });
    if (await fileTab().evaluate((e) => e.classList.contains('dirty'))) throw new Error('the file is dirty after Discard');
    if (readFileSync(file, 'utf8') !== before) throw new Error('Discard changed the file');
  }, { wb: current, needs: ['11 Edit Selection: the rewrite streams into a diff, Accept (Ctrl+Enter) changes exactly the selected lines'] });

  await journey('11b Edit Selection: the file edited while the rewrite is written → Accept refused, with a message', async () => {
    const before = readFileSync(file, 'utf8');
    await wb.clearNotifications();
    await editLines(9, 10, rewrites.empty);
    const streaming = !((await modified().textContent()) ?? '').includes('else 0.0');
    // The user types into the file itself (its own tab) while the diff is open.
    await fileTab().click();
    const p = await lineAt(wb, 1);
    await wb.page.mouse.click(p.x, p.y);
    await wb.page.keyboard.press('Home');
    await wb.page.keyboard.type('# edited\n');
    const refusal = /shapes\.py changed after the rewrite was requested, so it cannot be applied\. Run Edit Selection again\./;
    await wb.waitForNotification(refusal, { timeout: 15_000 });
    log(`      typed while the rewrite was ${streaming ? 'still streaming' : 'already complete'}`);
    await diffTab().click();
    await rewritten(rewrites.empty);
    await wb.clearNotifications();
    await modified().click();
    await wb.page.keyboard.press('Control+Enter');
    await wb.waitForNotification(refusal, { timeout: 15_000 });
    if (!(await diffTab().count())) throw new Error('the refused proposal closed');
    await wb.page.locator('.editor-actions .action-label[aria-label^="Discard Proposed Change"]').click({ timeout: 15_000 });
    await diffTab().waitFor({ state: 'detached', timeout: 15_000 });
    const shown = (await wb.page.locator('.editor-instance .monaco-editor .view-lines').first().textContent()) ?? '';
    if (/else 0\.0/.test(shown) || !/# edited/.test(shown.replace(/\u00a0/g, ' '))) throw new Error(`the editor shows: ${shown.slice(0, 200)}`);
    // Only the user's own typing reached the file (the web workbench saves it by itself: files.autoSave afterDelay).
    await waitFor(() => readFileSync(file, 'utf8') === `# edited\n${before}`, { timeout: 15_000, what: `${FILE} with the typed line only` })
      .catch((e) => { throw new Error(`${e.message}: ${JSON.stringify(readFileSync(file, 'utf8'))}`); });
  }, { wb: current, needs: ['11 Edit Selection: the rewrite streams into a diff, Accept (Ctrl+Enter) changes exactly the selected lines'] });

  await server.stop();
}

async function chineseJourney(vsix) {
  const nlsZh = JSON.parse(readFileSync(join(projectRoot, 'package.nls.zh-cn.json'), 'utf8'));
  const bundleFile = join(projectRoot, 'l10n/bundle.l10n.zh-cn.json');
  // Room for the scripted Chinese answer of the picture to end by itself.
  const cfg = await windowConfig('zh', { 'tritonChatglm.maxNewTokens': 1024 });
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
    // Send is an icon button: its accessible name and tooltip are what is translated.
    const sendText = await waitFor(async () => {
      const t = (await chat.locator('button[data-action="send"]').getAttribute('aria-label'))?.trim();
      return t && t !== 'Send' && t;
    }, { timeout: 20_000, what: 'the Send button in Chinese' });
    if (sendText !== zh('Send')) throw new Error(`Send button reads "${sendText}", expected "${zh('Send')}"`);
    const tooltip = await chat.locator('button[data-action="send"]').getAttribute('title');
    // The model is not ready yet: the tooltip says Enter sends once it is.
    const notReadyTooltip = zh('Send (Enter) once {0} is ready').replace('{0}', 'ChatGLM3-6B');
    if (tooltip !== notReadyTooltip) throw new Error(`Send button's tooltip reads "${tooltip}", expected "${notReadyTooltip}"`);
    const placeholder = await chat.locator('textarea.input').getAttribute('placeholder');
    if (placeholder !== zh('Ask {0} (# for context, / for commands)').replace('{0}', 'ChatGLM3-6B')) throw new Error(`the input's placeholder reads "${placeholder}"`);
    // Until the model is ready the setup checklist stands where the server notice was.
    const checklist = chat.locator('section.setup');
    // Nothing is missing in this window: the box says ChatGLM3-6B is stopped (not "Set up ChatGLM3-6B").
    await waitFor(async () => (await checklist.locator('.setup-title').textContent()) === zh('{0} is stopped').replace('{0}', 'ChatGLM3-6B'), { timeout: 30_000, what: 'the checklist in Chinese' })
      .catch(async (e) => { throw new Error(`${e.message}: "${await checklist.textContent()}"`); });
    const startText = (await checklist.locator('.setup-actions button.primary').textContent())?.trim();
    if (startText !== zh('Start ChatGLM')) throw new Error(`Start ChatGLM reads "${startText}"`);
    const summary = (await checklist.locator('.setup-summary').textContent()) ?? '';
    if (summary !== zh('Everything {0} needs is in place.').replace('{0}', 'ChatGLM3-6B')) throw new Error(`checklist summary reads "${summary}"`);
    await wb.screenshot(join(resultsDir, 'screenshots', 'zh-cn-setup.png'));
    // The README's zh-cn picture: Start ChatGLM, a question in Chinese, the scripted Chinese answer.
    await checklist.locator('.setup-actions button.primary').click();
    await wb.waitForStatus(new RegExp(escape(zh('ChatGLM: ready'))), { timeout: 300_000, failOn: new RegExp(`${escape(zh('ChatGLM: server error'))}|${escape(zh('ChatGLM: load failed'))}`) });
    await waitFor(async () => !(await checklist.isVisible()), { timeout: 20_000, what: 'the checklist to go once the model is ready' });
    await ask(chat, pictureQuestions.zh);
    const answer = await watchAnswer(chat, 0);
    if (!answer.text.includes('计算圆的面积')) throw new Error(`the scripted Chinese answer reads "${answer.text.slice(0, 200)}"`);
    // The sample file beside the chat (not an empty editor area), and the side bar wide enough for the code block.
    await openFile(wb, SAMPLE);
    await wb.runCommand(title('openChat', nlsZh));
    const shown = await wb.frameWith('#root main.messages article.message.assistant', { what: 'the chat panel with the answer' });
    await shown.locator('main.messages article.message.assistant[data-status="complete"]').waitFor({ timeout: 20_000 });
    await setSideBarWidth(wb, 460);
    await wb.clearNotifications();
    await shown.locator('textarea.input').focus();
    await docScreenshot(wb, 'zh-cn-chat-panel.png');
    await server.stop();
  }, { wb: () => wb });
}


// ------------------------------------------------------------------------------------------------- guided setup

/** The chat view's setup checklist: its rows as the user sees them. */
async function checklistRows(chat) {
  return chat.locator('section.setup .setup-item').evaluateAll((els) => Object.fromEntries(els.map((e) => [e.getAttribute('data-check'), {
    level: e.getAttribute('data-level'), text: (e.textContent ?? '').replace(/\s+/g, ' ').trim(),
  }])));
}

async function waitForRow(chat, check, level, { timeout = 60_000 } = {}) {
  let rows = {};
  try {
    return await waitFor(async () => { rows = await checklistRows(chat); return rows[check]?.level === level && rows[check]; },
      { timeout, what: `the setup checklist's ${check} row to be ${level}` });
  } catch (e) {
    throw new Error(`${e.message}; rows: ${JSON.stringify(rows)}`);
  }
}

/** Clicks a button of the checklist: a row's fix (by its check) or the one action below the rows. */
async function clickSetup(chat, fix, check) {
  const button = check
    ? chat.locator(`section.setup .setup-item[data-check="${check}"] button[data-fix="${fix}"]`)
    : chat.locator(`section.setup .setup-actions button[data-fix="${fix}"]`);
  await button.waitFor({ timeout: 30_000 });
  await button.click();
}

/** Opens the extension's walkthrough; its steps as shown (title, checked). */
async function walkthroughSteps(wb) {
  if (!(await wb.page.locator('.gettingStartedContainer').isVisible())) await wb.runCommand(title('openWalkthrough'));
  const steps = wb.page.locator('.gettingStartedContainer .getting-started-step');
  await waitFor(async () => (await steps.count()) >= 5, { timeout: 30_000, what: 'the walkthrough steps' });
  return steps.evaluateAll((els) => els.map((e) => ({ title: e.querySelector('.step-title')?.textContent?.trim() ?? '', done: e.getAttribute('aria-checked') === 'true' })));
}

/**
 * A first-time user with nothing set up (no docker at the configured path, no weights folder, no serving image):
 * the checklist names every problem at once, each fix is applied from the checklist as a user would, then the one
 * action Start ChatGLM takes it to ready. Screenshots at each stage (test-results/e2e/screenshots/setup-*.png).
 */
async function setupJourney(extensionsDir) {
  const dockerLink = join(root, 'setup/bin/docker');
  // No weights folder (the default, empty) and a docker path where nothing is installed yet.
  const cfg = await windowConfig('setup', { 'tritonChatglm.dockerPath': dockerLink, 'tritonChatglm.weightsPath': undefined });
  // An empty image list: no image exists until it is built.
  const server = await startCodeServer({ name: 'setup', extensionsDir, folder: workspace, remoteSettings: cfg.settings, env: windowEnv(cfg, { FAKE_DOCKER_IMAGES: '' }) });
  let wb;
  const shot = (name) => wb.screenshot(join(resultsDir, 'screenshots', name));
  await journey('10 guided setup: everything missing → each fix from the checklist → Start ChatGLM → ready', async () => {
    wb = await Workbench.open(server, 'setup');
    // A missing prerequisite is "setup needed" from the start, not "stopped" and never "server error".
    await wb.waitForStatus(/ChatGLM: setup needed/, { timeout: 60_000 });
    // The walkthrough as a new user meets it (VS Code tracks its steps from the moment it first shows one;
    // the Welcome page does that at start-up, which the test windows turn off): nothing done yet.
    const walkthrough = await walkthroughSteps(wb);
    if (walkthrough.length !== 5 || walkthrough.some((x) => x.done)) throw new Error(`walkthrough before the setup: ${JSON.stringify(walkthrough)}`);
    await shot('setup-walkthrough-start.png');
    await wb.runCommand('View: Close Editor');
    const chat = await openChat(wb);
    const missing = await waitFor(async () => {
      const rows = await checklistRows(chat);
      return rows.docker?.level === 'error' && rows.weights?.level === 'error' && rows;
    }, { timeout: 60_000, what: 'the checklist with Docker and the weights missing' });
    for (const id of ['daemon', 'nvidia-runtime', 'image']) {
      if (missing[id]?.level !== 'blocked') throw new Error(`${id} should be "not checked yet" while Docker is missing: ${JSON.stringify(missing[id])}`);
    }
    if (!/Docker was not found/.test(missing.docker.text)) throw new Error(`docker row: ${missing.docker.text}`);
    if (await chat.locator('.server-status').isVisible()) throw new Error('the server notice is shown beside the checklist');
    if (!(await chat.locator('section.setup .setup-actions button.primary[data-fix="recheck"]').isVisible())) throw new Error('Re-check is not the one action');
    await wb.runCommand('View: Hide Panel').catch(() => {});
    // As wide as the chat picture's side bar, so the rows and their fixes do not wrap into a narrow column.
    const sideBar = await setSideBarWidth(wb, 460);
    // The checklist grows to the view: every row in sight, no scrollbar of its own (issue #33: it hid GPU memory).
    const inner = await chat.locator('section.setup').evaluate((e) => ({ scrolls: e.scrollHeight > e.clientHeight + 1, height: e.clientHeight, view: window.innerHeight }));
    if (inner.scrolls) throw new Error(`the checklist scrolls inside itself: ${JSON.stringify(inner)}`);
    await docScreenshot(wb, 'setup-checklist.png');
    await setSideBarWidth(wb, sideBar);

    // "Open Settings" of the Docker row: the Remote tab (this is a remote window), where the setting exists.
    await clickSetup(chat, 'openSettings', 'docker');
    const editor = wb.page.locator('.settings-editor');
    await editor.waitFor({ timeout: 30_000 });
    const tab = await waitFor(async () => (await wb.page.locator('.settings-editor .settings-tabs-widget .action-item .action-label.checked').textContent())?.trim(),
      { timeout: 30_000, what: 'the selected settings tab' });
    if (!/Remote/.test(tab)) throw new Error(`Open Settings selected the "${tab}" tab`);
    await waitFor(async () => (await editor.locator('.setting-item-title').allTextContents()).some((t) => /Docker Path/.test(t)),
      { timeout: 30_000, what: 'the Docker Path setting in the Remote tab' });
    if (await editor.locator('.no-results-message').isVisible()) throw new Error('"No Settings Found"');
    await shot('setup-remote-settings.png');
    await wb.runCommand('View: Close Editor');

    // Install Docker: the checklist links to the instructions (opened by the host: VS Code asks before leaving).
    await clickSetup(chat, 'installDocker', 'docker');
    const dialog = wb.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 20_000 });
    const asked = (await dialog.textContent()) ?? '';
    if (!asked.includes('docs.docker.com')) throw new Error(`the link dialog does not name docs.docker.com: ${asked}`);
    await dialog.locator('.monaco-button', { hasText: /^Cancel$/ }).click();
    // ... and the user installs it where the setting points, then re-checks.
    mkdirSync(dirname(dockerLink), { recursive: true });
    symlinkSync(fakeDocker, dockerLink);
    await clickSetup(chat, 'recheck');
    await waitForRow(chat, 'docker', 'ok');
    await waitForRow(chat, 'daemon', 'ok');
    await waitForRow(chat, 'nvidia-runtime', 'ok');
    const image = await waitForRow(chat, 'image', 'error');
    if (!/triton-chatglm:24\.10/.test(image.text)) throw new Error(`image row: ${image.text}`);

    // Choose Weights Folder…: the folder picker of the remote machine; the folder above the checkpoint is enough.
    await clickSetup(chat, 'chooseWeights', 'weights');
    const picker = wb.page.locator('.quick-input-widget');
    const input = picker.locator('.quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 20_000 });
    // The dialog fills in its start folder itself once it has read it: type over it only after that.
    const target = `${dirname(checkpoint)}/`;
    const row = picker.locator('.quick-input-list .monaco-list-row', { hasText: basename(checkpoint) }).first();
    await waitFor(async () => {
      if ((await input.inputValue()) !== target) await input.fill(target);
      return (await input.inputValue()) === target && row.isVisible();
    }, { timeout: 30_000, interval: 500, what: `the folder picker to list ${target}` });
    await shot('setup-weights-picker.png');
    await picker.locator('.quick-input-action .monaco-button', { hasText: 'Use as Weights Folder' }).click();
    await waitForRow(chat, 'weights', 'ok');
    // Written where it applies: the remote (machine) settings, not the user settings that a remote window ignores.
    const machine = JSON.parse(readFileSync(join(server.userDataDir, 'Machine/settings.json'), 'utf8'));
    const user = JSON.parse(readFileSync(join(server.userDataDir, 'User/settings.json'), 'utf8'));
    if (machine['tritonChatglm.weightsPath'] !== checkpoint) throw new Error(`remote settings have weightsPath ${machine['tritonChatglm.weightsPath']}`);
    if ('tritonChatglm.weightsPath' in user) throw new Error('weightsPath was written to the user settings');

    // Build Serving Image from the checklist; its row shows the build, then passes.
    await clickSetup(chat, 'buildImage', 'image');
    await waitForRow(chat, 'image', 'ok', { timeout: 120_000 });
    const ready = await waitFor(async () => (await chat.locator('section.setup').getAttribute('data-phase')) === 'ready',
      { timeout: 60_000, what: 'the checklist to be complete' }).then(() => checklistRows(chat));
    await wb.waitForStatus(/ChatGLM: stopped/, { timeout: 30_000 });
    log(`      checklist: ${Object.entries(ready).map(([k, v]) => `${k}=${v.level}`).join(', ')}`);
    await shot('setup-ready.png');

    // The build's message offers the next step as its button (not a Cancel beside a small link): Start ChatGLM
    // from there, the one action the checklist offers too.
    await wb.waitForNotification(/The serving image .* is ready\./, { timeout: 30_000 });
    const built = wb.page.locator('.notifications-toasts .notification-list-item', { hasText: /The serving image .* is ready\./ });
    const buttons = (await built.locator('.monaco-button').allTextContents()).map((t) => t.trim());
    if (buttons.join('|') !== 'Start ChatGLM') throw new Error(`the image-ready message's buttons: ${JSON.stringify(buttons)}`);
    await built.locator('.monaco-button', { hasText: 'Start ChatGLM' }).click();
    await wb.waitForStatus(/ChatGLM: starting|ChatGLM: loading|ChatGLM: not loaded/, { timeout: 60_000 });
    await shot('setup-starting.png');
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 300_000 });
    const modelReady = await tritonGet(cfg, `/v2/models/${MODEL}/ready`);
    if (modelReady.status !== 200) throw new Error(`model not ready in Triton: ${modelReady.status}`);
    await waitFor(async () => !(await chat.locator('section.setup').isVisible()), { timeout: 20_000, what: 'the checklist to go once the model is ready' });
    // Stale notifications close themselves: no progress left over, no "Load the model now?" in the one action.
    const left = await waitFor(async () => {
      const n = await wb.notifications();
      return n.every((t) => !/Starting the ChatGLM server|Loading ChatGLM3-6B|needs setup|Building the serving image/.test(t)) && n;
    }, { timeout: 30_000, what: 'the progress notifications to end' });
    if (left.some((t) => /Load the model now/.test(t))) throw new Error('Start ChatGLM asked to load the model');
    log(`      notifications left: ${JSON.stringify(left)}`);
    await shot('setup-done.png');
    // The chat works now.
    await ask(chat, 'Is it working?');
    const answer = await watchAnswer(chat, 0);
    if (!answer.text.trim()) throw new Error('no answer after the setup');
  }, { wb: () => wb });

  await journey('10b walkthrough: every step checked by what the user did', async () => {
    const states = await waitFor(async () => {
      const s = await walkthroughSteps(wb);
      return s.every((x) => x.done) && s;
    }, { timeout: 30_000, what: 'all five walkthrough steps checked' })
      .catch(async (e) => { throw new Error(`${e.message}: ${JSON.stringify(await walkthroughSteps(wb))}`); });
    log(`      walkthrough: ${states.map((x) => `${x.done ? '✓' : '·'} ${x.title}`).join(' | ')}`);
    await shot('setup-walkthrough.png');
  }, { wb: () => wb, needs: ['10 guided setup: everything missing → each fix from the checklist → Start ChatGLM → ready'] });
  await server.stop();
}

/**
 * Weights in one click: nothing but the weights missing; the checklist's Download ChatGLM3-6B (12.5 GB) fetches
 * the tiny checkpoint from the fake Hub (tritonChatglm.hubEndpoint) into a fresh Hugging Face cache, with the
 * confirmation (where, free space, source), the progress notification and the status bar's percentage seen on the
 * way; the weights setting is written to the remote settings, the row passes (naming the newer snapshot), and Start
 * ChatGLM answers with the snapshot mounted as the real docker would (its repository folder, read-only).
 */
async function downloadJourney(extensionsDir) {
  const { startFakeHub } = await import('../support/fake-hub.mjs');
  const hub = await startFakeHub();
  onCleanup(() => hub.close());
  // Slow enough that the progress notification and the status bar can be seen (about 5 s for the 0.5 MB).
  hub.knobs.bytesPerSecond = 100_000;
  const cache = join(root, 'download/hf-cache');
  const cfg = await windowConfig('download', { 'tritonChatglm.weightsPath': undefined, 'tritonChatglm.hubEndpoint': hub.endpoint });
  const server = await startCodeServer({
    name: 'download', extensionsDir, folder: workspace, remoteSettings: cfg.settings,
    env: windowEnv(cfg, { HF_HUB_CACHE: cache, HF_HOME: join(root, 'download/hf-home') }),
  });
  let wb;
  const shot = (name) => wb.screenshot(join(resultsDir, 'screenshots', name));
  const name = '15 weights in one click: Download in the checklist → progress → weights set → Start ChatGLM answers';
  await journey(name, async () => {
    wb = await Workbench.open(server, 'download');
    await wb.waitForStatus(/ChatGLM: setup needed/, { timeout: 60_000 });
    const chat = await openChat(wb);
    await waitForRow(chat, 'weights', 'error');
    await clickSetup(chat, 'downloadWeights', 'weights');
    // Before anything is fetched: where it goes, the free space there and the source.
    const dialog = wb.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 30_000 });
    const asked = ((await dialog.textContent()) ?? '').replace(/\s+/g, ' ');
    // The licence too: its name, URL and key terms, accepted here once for this model (commercial use after registration).
    for (const part of ['Download ChatGLM3-6B', `Into: ${cache}`, 'Free there:', hub.endpoint, 'THUDM/chatglm3-6b at main', 'a newer snapshot than the one tested',
      'Licence: ChatGLM3-6B Model License (https://huggingface.co/THUDM/chatglm3-6b/blob/main/MODEL_LICENSE)', 'Free for academic research.', 'accepting this licence']) {
      if (!asked.includes(part)) throw new Error(`the confirmation does not say "${part}": ${asked}`);
    }
    if (hub.stats.bytes !== 0) throw new Error(`${hub.stats.bytes} bytes fetched before the confirmation`);
    await shot('download-confirm.png');
    await dialog.locator('.monaco-button', { hasText: /^Accept Licence and Download$/ }).click();
    const progress = await wb.waitForNotification(/Downloading ChatGLM3-6B/, { timeout: 30_000 });
    const status = await wb.waitForStatus(/ChatGLM: downloading \d+ %/, { timeout: 30_000 });
    await waitForRow(chat, 'weights', 'pending', { timeout: 10_000 });
    await shot('download-progress.png');
    log(`      progress: ${progress} | status bar: ${status}`);
    const ok = await waitForRow(chat, 'weights', 'ok', { timeout: 120_000 });
    const snapshot = join(cache, 'models--THUDM--chatglm3-6b/snapshots', hub.commit);
    if (!ok.text.includes(snapshot) || !/a newer snapshot than the one tested/.test(ok.text)) throw new Error(`weights row: ${ok.text}`);
    const machine = JSON.parse(readFileSync(join(server.userDataDir, 'Machine/settings.json'), 'utf8'));
    if (machine['tritonChatglm.weightsPath'] !== snapshot) throw new Error(`remote settings have weightsPath ${machine['tritonChatglm.weightsPath']}`);
    // Never the repository's Python files (its remote code), nor README, .gitattributes and sub-folders.
    const selected = hub.files.filter((f) => !['README.md', '.gitattributes', 'images/logo.png'].includes(f.path) && !f.path.endsWith('.py'));
    if (existsSync(join(snapshot, 'tokenization_chatglm.py'))) throw new Error('the remote code was downloaded');
    const total = selected.reduce((n, f) => n + f.size, 0);
    if (hub.stats.bytes !== total) throw new Error(`the Hub served ${hub.stats.bytes} bytes for ${total}`);
    if (!existsSync(join(snapshot, '~triton-chatglm-download.json'))) throw new Error('no manifest');
    await wb.waitForNotification(/ChatGLM3-6B is downloaded and verified/, { timeout: 30_000 });
    await waitFor(async () => !/ChatGLM: downloading/.test(await wb.statusBarText()), { timeout: 30_000, what: 'the download status to go' });
    await shot('download-done.png');

    // The one action: the container mounts the cache repository folder read-only, the server reads the snapshot.
    await waitFor(async () => (await chat.locator('section.setup').getAttribute('data-phase')) === 'ready', { timeout: 60_000, what: 'the checklist to be complete' });
    await clickSetup(chat, 'startChatglm');
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 300_000 });
    const [container] = runningContainers(cfg);
    const binds = container?.HostConfig?.Binds ?? [];
    const repoDir = join(cache, 'models--THUDM--chatglm3-6b');
    if (!binds.includes(`${repoDir}:/weights/hub-repository:ro`)) throw new Error(`the container's binds: ${JSON.stringify(binds)}`);
    const models = join(cfg.stateDir, 'containers', container.Id, 'models', MODEL, 'config.pbtxt');
    if (!readFileSync(models, 'utf8').includes(`string_value: "${snapshot}"`)) throw new Error('the container reads another weights folder');
    await ask(chat, 'Is it working?');
    const answer = await watchAnswer(chat, 0);
    if (!answer.text.trim()) throw new Error('no answer with the downloaded weights');
  }, { wb: () => wb });
  await server.stop();
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// ------------------------------------------------------------------------------------------------------ the stage

/**
 * Untrusted answers (issue 22): a stored answer whose mail link hides a bcc and a body. No server is needed: the
 * conversation is written to the extension's store before the window opens, and the panel shows it as it starts.
 */
async function untrustedAnswerJourney(extensionsDir) {
  const cfg = await windowConfig('untrusted');
  const userDataDir = join(root, 'untrusted', 'user-data');
  const storeDir = join(userDataDir, 'User', 'globalStorage', extensionId);
  mkdirSync(storeDir, { recursive: true });
  const now = Date.now();
  const answer = 'Write to [team@example.com](mailto:team@example.com?bcc=attacker@evil.example&body=paste%20your%20token%20here) for access.';
  writeFileSync(join(storeDir, 'conversations.json'), JSON.stringify({ version: 1, conversations: [{
    id: 'untrusted-mail', title: 'Who grants access?', createdAt: now, updatedAt: now, messages: [
      { id: 'u1', role: 'user', content: 'Who grants access?', status: 'complete', createdAt: now },
      { id: 'a1', role: 'assistant', content: answer, status: 'complete', createdAt: now },
    ],
  }] }));
  const server = await startCodeServer({ name: 'untrusted', userDataDir, extensionsDir, folder: workspace, remoteSettings: cfg.settings, env: windowEnv(cfg) });
  let wb;
  const current = () => wb;
  await journey('12 untrusted answer: a mailto with a bcc asks first, naming every recipient and field', async () => {
    wb = await Workbench.open(server, 'untrusted');
    await wb.waitForStatus(/ChatGLM: /, { timeout: 60_000, failOn: null }); // activated: its commands are in the palette
    const chat = await openChat(wb);
    const link = chat.locator('article.message.assistant a[data-href^="mailto:"]');
    await link.waitFor({ timeout: 30_000 });
    await link.click();
    const dialog = wb.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 20_000 });
    const text = (await dialog.textContent()) ?? '';
    for (const want of ['Write an e-mail to team@example.com, attacker@evil.example?', 'To: team@example.com', 'Bcc: attacker@evil.example', 'Body: paste your token here']) {
      if (!text.includes(want)) throw new Error(`the mail dialog does not say "${want}": ${text}`);
    }
    await dialog.locator('.monaco-button', { hasText: /^Cancel$/ }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
  }, { wb: current });
  await server.stop();
}

// ------------------------------------------------------------------------------------------- themes (group "theme")

/** The four themes the contrast test covers (test/webview/theme-contrast.test.ts), by their settings id. */
const CONTRAST_THEMES = [
  { id: 'Default Light+', label: 'Light+', file: 'light-plus.json', kind: 'vscode-light' },
  { id: 'Default Dark+', label: 'Dark+', file: 'dark-plus.json', kind: 'vscode-dark' },
  { id: 'Default High Contrast', label: 'Dark High Contrast', file: 'dark-high-contrast.json', kind: 'vscode-high-contrast' },
  { id: 'Default High Contrast Light', label: 'Light High Contrast', file: 'light-high-contrast.json', kind: 'vscode-high-contrast-light' },
];
const themeVariablesDir = join(projectRoot, 'test/webview/support/themes');

/** Switches the colour theme as the user does (Preferences: Color Theme, the theme picked by its label), and waits
 *  until the chat webview wears it. */
async function setColorTheme(wb, chat, theme) {
  const page = wb.page;
  await wb.runCommand('Preferences: Color Theme');
  const widget = page.locator('.quick-input-widget');
  await widget.locator('.quick-input-box input').fill(theme.label);
  const row = widget.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRegExp(theme.label)}\\s*$`) }) }).first();
  await row.click({ timeout: 10_000 });
  await widget.waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => {});
  await waitFor(() => chat.evaluate((kind) => document.body.classList.contains(kind)
    && (kind !== 'vscode-high-contrast' || !document.body.classList.contains('vscode-high-contrast-light')), theme.kind),
  { timeout: 30_000, what: `the chat webview in ${theme.id}` });
}

/** The --vscode-* variables VS Code set on the webview's root element (what every webview's CSS reads). */
const webviewThemeVariables = (chat) => chat.evaluate(() => {
  const style = document.documentElement.style;
  const out = {};
  for (let i = 0; i < style.length; i += 1) {
    const name = style.item(i);
    if (name.startsWith('--vscode-')) out[name] = style.getPropertyValue(name).trim();
  }
  return { bodyClass: document.body.className, variables: Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b))) };
});

async function themeJourneys(extensionsDir) {
  const cfg = await windowConfig('theme', { 'tritonChatglm.maxNewTokens': 1024 });
  const server = await startCodeServer({ name: 'theme', extensionsDir, folder: workspace, settings: { 'workbench.colorTheme': 'Default Light+' }, remoteSettings: cfg.settings, env: windowEnv(cfg) });
  let wb;
  await journey('13a theme variables of Light+, Dark+ and both high-contrast themes, as VS Code sets them in a webview', async () => {
    wb = await Workbench.open(server, 'theme');
    await wb.waitForStatus(/ChatGLM: stopped/);
    const chat = await openChat(wb);
    const dir = join(resultsDir, 'theme-variables');
    mkdirSync(dir, { recursive: true });
    for (const theme of CONTRAST_THEMES) {
      await setColorTheme(wb, chat, theme);
      // The variables follow the class in the same message; wait until two reads agree.
      const captured = await waitFor(async () => {
        const a = await webviewThemeVariables(chat);
        await new Promise((r) => setTimeout(r, 300));
        const b = await webviewThemeVariables(chat);
        return JSON.stringify(a) === JSON.stringify(b) && Object.keys(a.variables).length > 100 && a;
      }, { timeout: 20_000, what: `stable theme variables in ${theme.id}` });
      const body = JSON.stringify({ theme: theme.id, source: 'code-server 4.139.1 (VS Code 1.139.1), the chat webview', ...captured }, null, 2);
      writeFileSync(join(dir, theme.file), `${body}\n`);
      if (process.env.E2E_UPDATE_THEME_VARIABLES === '1') {
        mkdirSync(themeVariablesDir, { recursive: true });
        writeFileSync(join(themeVariablesDir, theme.file), `${body}\n`);
        log(`      updated test/webview/support/themes/${theme.file}`);
      }
    }
  }, { wb: () => wb });
  await journey('13b a chat answer in Dark High Contrast: every element readable (README picture)', async () => {
    const chat = await openChat(wb);
    await setColorTheme(wb, chat, CONTRAST_THEMES[2]);
    await chat.locator('section.setup .setup-actions button.primary').click();
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 300_000 });
    await waitFor(async () => !(await chat.locator('section.setup').isVisible()), { timeout: 20_000, what: 'the checklist to go' });
    await ask(chat, pictureQuestions.contrast);
    const answer = await watchAnswer(chat, 0);
    if (!answer.text.includes('Geometry helpers')) throw new Error(`the scripted answer reads "${answer.text.slice(0, 200)}"`);
    // Inline code keeps the theme's preformatted colours (it vanished black on black before).
    const code = await chat.locator('main.messages article.message.assistant .markdown td code').first()
      .evaluate((e) => { const s = e.ownerDocument.defaultView.getComputedStyle(e); return { color: s.color, background: s.backgroundColor }; });
    if (code.color === code.background) throw new Error(`inline code is ${code.color} on ${code.background}`);
    await openFile(wb, SAMPLE);
    await wb.runCommand(title('openChat'));
    const shown = await wb.frameWith('#root main.messages article.message.assistant', { what: 'the chat panel with the answer' });
    await shown.locator('main.messages article.message.assistant[data-status="complete"]').waitFor({ timeout: 20_000 });
    await setSideBarWidth(wb, 460);
    await wb.clearNotifications();
    await shown.locator('textarea.input').focus();
    await docScreenshot(wb, 'chat-high-contrast.png');
    // The narrow side bars of issue #33: the code block's actions are words (Apply included), and Wrap wraps the
    // long lines instead of clipping them. Pictures to look at: chat-high-contrast-300.png, -220.png.
    const block = shown.locator('main.messages article.message.assistant .code-block').first();
    for (const width of [300, 220]) {
      await setSideBarWidth(wb, width);
      await block.scrollIntoViewIfNeeded();
      const apply = block.locator('button[data-action="codeApply"] .action-word');
      if (!(await apply.isVisible()) || (await apply.textContent()) !== 'Apply') throw new Error(`at ${width} px Apply is not a visible word`);
      const wrap = block.locator('button[data-action="codeWrap"]');
      if ((await wrap.getAttribute('aria-pressed')) !== 'true') await wrap.click();
      const clipped = await block.locator('pre').evaluate((pre) => pre.scrollWidth > pre.clientWidth + 1);
      if (clipped) throw new Error(`at ${width} px the wrapped code still scrolls sideways`);
      await shot(wb, `chat-high-contrast-${width}.png`);
    }
    await setSideBarWidth(wb, 460);
  }, { wb: () => wb, needs: ['13a theme variables of Light+, Dark+ and both high-contrast themes, as VS Code sets them in a webview'] });
  await server.stop();
}

/**
 * `#` context and `/` commands against VS Code's own APIs (fresh window, its own git repository): the suggested
 * current file, #symbol through the workspace symbol search (TypeScript's, for a .js file), #problems from the JSON
 * language server's diagnostics, #changes from the Git extension's diff against HEAD, /explain; the prompt the
 * model received holds each block in the documented layout, then the command's template and the user's words.
 */
async function contextJourney(extensionsDir) {
  const dir = join(root, 'context-workspace');
  mkdirSync(dir, { recursive: true });
  const shapes = ['function circleArea(radius) {', '  return Math.PI * radius * radius;', '}', '', 'module.exports = { circleArea };', ''].join('\n');
  writeFileSync(join(dir, 'shapes.js'), shapes);
  // A comma missing after line 3: the JSON language server reports it.
  writeFileSync(join(dir, 'config.json'), ['{', '  "name": "shapes",', '  "version": 1', '  "private": true', '}', ''].join('\n'));
  const git = (...a) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.invalid', '-c', 'init.defaultBranch=main', ...a], { cwd: dir, stdio: 'pipe' });
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'shapes');
  writeFileSync(join(dir, 'shapes.js'), `${shapes}// changed after the commit\n`);
  const cfg = await windowConfig('context');
  const server = await startCodeServer({ name: 'context', extensionsDir, folder: dir, remoteSettings: cfg.settings, env: windowEnv(cfg) });
  let wb;
  const current = () => wb;
  await journey('14 # context and / commands: #symbol, #problems, #changes from VS Code, /explain, the suggested current file, the meter', async () => {
    wb = await Workbench.open(server, 'context');
    await wb.waitForStatus(/ChatGLM: stopped/, { timeout: 60_000 });
    await wb.runCommand(title('startChatglm'));
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 300_000 });
    await openFile(wb, 'shapes.js');
    const page = wb.page;
    // The Explorer and the chat share the side bar: showing one disposes the other's webview, so the panel's frame
    // and its locators are taken again each time the chat is opened.
    let chat, input, list, meter;
    const bindChat = async () => {
      chat = await openChat(wb);
      input = chat.locator('textarea.input');
      list = chat.locator('.completion-list');
      meter = chat.locator('.token-meter');
    };
    await bindChat();
    const composerChips = () => chipTexts(chat.locator('.composer .attachment-chip'));
    // The current file is a suggestion (dashed), not an attachment; the meter shows the next request's size.
    await chat.locator('.composer button.attachment-chip.active-file.suggested', { hasText: 'shapes.js' }).waitFor({ timeout: 30_000 });
    await waitFor(async () => /^\d[\d,]* \/ 6,144 tokens$/.test((await meter.textContent()) ?? ''), { what: 'the token meter under the input' });

    // #symbol, by the keyboard: the list, then VS Code's workspace symbol search in a quick pick.
    await input.click();
    await page.keyboard.type('#sym');
    await list.waitFor({ state: 'visible', timeout: 10_000 });
    if ((await input.getAttribute('aria-expanded')) !== 'true' || (await input.getAttribute('aria-activedescendant')) !== await list.locator('[role="option"]').first().getAttribute('id')) {
      throw new Error('the input does not own the open list as a combobox');
    }
    await page.keyboard.press('Enter');
    const picker = page.locator('.quick-input-widget');
    const pickInput = picker.locator('.quick-input-box input');
    await pickInput.waitFor({ timeout: 10_000 });
    const row = picker.locator('.quick-input-list .monaco-list-row', { hasText: 'circleArea' }).first();
    // Until TypeScript answers, the file's own definitions follow under a notice (the fallback): wait for its answer.
    const fallbackNotice = picker.locator('.quick-input-list .monaco-list-row', { hasText: 'No symbols of shapes.js' });
    const answered = async () => (await row.isVisible()) && !(await fallbackNotice.count());
    // TypeScript indexes the file after it opened: search again until it answers.
    await waitFor(async () => {
      if (await answered()) return true;
      await pickInput.fill('circleAre');
      await pickInput.fill('circleArea');
      await new Promise((r) => setTimeout(r, 1_500));
      return answered();
    }, { timeout: 90_000, interval: 500, what: 'circleArea in the workspace symbol search' });
    await row.click();
    await chat.locator('.composer .attachment-chip[data-kind="symbol"]').waitFor({ timeout: 15_000 });

    // #problems, with the mouse: the diagnostics of config.json once the JSON language server has reported them.
    await openFile(wb, 'config.json');
    await waitFor(async () => /[1-9]/.test((await page.locator('.statusbar-item[id="status.problems"]').textContent().catch(() => '')) ?? ''),
      { timeout: 60_000, what: 'the JSON problem in the status bar' });
    await bindChat();
    await input.click();
    await page.keyboard.type('#');
    await list.locator('[data-value="#problems"]').click();
    await chat.locator('.composer .attachment-chip[data-kind="problems"]').waitFor({ timeout: 15_000 });

    // #changes, by Tab.
    await input.click();
    await page.keyboard.type('#ch');
    await list.locator('[data-value="#changes"]').waitFor({ timeout: 10_000 });
    await page.keyboard.press('Tab');
    await chat.locator('.composer .attachment-chip[data-kind="changes"]').waitFor({ timeout: 60_000 });
    const chips = await composerChips();
    if (JSON.stringify(chips.map((c) => c.replace(/\s+/g, ' '))) !== JSON.stringify(['config.jsoncurrent file — click to attach', 'circleArea:1-3', 'config.json problems', 'Changes'])) {
      throw new Error(`chips above the input: ${JSON.stringify(chips)}`);
    }
    // Each attached chip shows its estimated tokens on itself.
    const figures = await chat.locator('.composer .attachment-chip .chip-tokens').allTextContents();
    if (figures.length !== 3 || !figures.every((f) => /^· [1-9][\d,]* tokens?$/.test(f))) throw new Error(`token figures on the chips: ${JSON.stringify(figures)}`);
    if ((await input.inputValue()) !== '') throw new Error(`the #words stayed in the input: ${JSON.stringify(await input.inputValue())}`);
    await shot(wb, 'chat-context-chips.png');

    // /explain, then the user's words; the model receives the template.
    await page.keyboard.type('/ex');
    await page.keyboard.press('Enter');
    if ((await input.inputValue()) !== '/explain ') throw new Error(`after /ex + Enter the input holds ${JSON.stringify(await input.inputValue())}`);
    await page.keyboard.type('briefly');
    const n = await assistantArticles(chat).count();
    await page.keyboard.press('Enter');
    await watchAnswer(chat, n);
    const line = await waitFor(() => promptLogLines(cfg).find((l) => lastUserMessage(l)?.content?.endsWith('briefly')),
      { timeout: 10_000, what: 'the /explain question in the engine prompt log' });
    const got = lastUserMessage(line).content;
    const template = 'Explain the attached code: what it does, step by step, its inputs and outputs, and anything surprising in it.';
    const checks = [
      ['the symbol block', got.startsWith('Symbol: circleArea in shapes.js (lines 1-3)\n```javascript\nfunction circleArea(radius) {\n  return Math.PI * radius * radius;\n}\n```\n\n')],
      ['the problems block', /\n\nProblems: config\.json\n```text\nline [34]: error: [^\n]+\n {4}"(version|private)": [^\n]+\n```\n\n/.test(got)],
      ['the changes block', /\n\nChanges: context-workspace \(working tree against HEAD\)\n```diff\ndiff --git a\/shapes\.js b\/shapes\.js\n[\s\S]*\n\+\/\/ changed after the commit\n```\n\n/.test(got)],
      ['the template and the words', got.endsWith(`\n\n${template}\n\nbriefly`)],
      ['the current file not sent', !got.includes('File: config.json')],
    ];
    const failed = checks.filter(([, ok]) => !ok).map(([what]) => what);
    if (failed.length) throw new Error(`the prompt lacks ${failed.join(', ')}: ${JSON.stringify(got.slice(0, 1200))}`);
    // The transcript shows the command as typed, with its chips.
    const question = chat.locator('main.messages article.message.user').last();
    const typed = ((await question.locator('.message-body').textContent()) ?? '').trim();
    if (typed !== '/explain briefly') throw new Error(`the transcript shows ${JSON.stringify(typed)}`);
    const sent = await chipTexts(question.locator('.attachment-chip'));
    if (JSON.stringify(sent.map((c) => c.replace(/\s+/g, ' '))) !== JSON.stringify(['circleArea:1-3', 'config.json problems', 'Changes'])) throw new Error(`chips with the question: ${JSON.stringify(sent)}`);
  }, { wb: current });
  await server.stop();
}

async function main() {
  mkdirSync(resultsDir, { recursive: true });
  if (!existsSync(fakeDocker)) throw new Error(`the fake docker is missing: ${fakeDocker}`);
  log(`run directory ${root}`);
  const only = typeof args.only === 'string' ? args.only : '';
  // --only=a,b runs several parts.
  const parts = only.split(',').filter(Boolean);
  const want = (...keys) => !only || keys.some((k) => parts.some((p) => p === k || p.startsWith(k)));
  // The real-docker group needs the docker stage's daemon and image: run only when named.
  const realDocker = parts.includes('docker');
  const ui = realDocker || want('1', '2', '3', '4', '5', '6', '7', 'main', '8', 'failures', '9', 'zh', '10', 'setup', 'untrusted', 'edit', 'theme', 'context', 'download', 'lm', 'complete', 'glm4');
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
  if (want('10', 'setup')) await setupJourney(extensionsDir);
  if (want('untrusted')) await untrustedAnswerJourney(extensionsDir);
  if (want('edit')) await editJourneys(extensionsDir);
  if (want('theme')) await themeJourneys(extensionsDir);
  if (want('context')) await contextJourney(extensionsDir);
  if (want('download')) await downloadJourney(extensionsDir);
  if (want('lm')) await modelPickerJourney(extensionsDir, { journey, windowConfig, windowEnv, title, docScreenshot, workspace });
  if (realDocker) {
    await realDockerJourneys(extensionsDir, {
      journey, windowConfig, windowEnv, title, workspace, sample: SAMPLE, openChat, ask, watchAnswer, assistantArticles,
      openFile, selectLines, selectLineRange, finishedExplanations, decodeCounts, generatedTogether, tritonGet, changeRemoteSettings,
    });
  }
  if (want('complete')) await completionJourney(extensionsDir, { journey, windowConfig, windowEnv, title, docScreenshot, workspace });
  if (want('glm4')) await glm4Journey(extensionsDir, { journey, windowConfig, windowEnv, openChat, ask, watchAnswer, waitForRow, clickSetup, runningContainers, root, workspace });
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
  writeFileSync(join(resultsDir, 'activation.json'), `${JSON.stringify({ runs_ms: runs, source: 'extension log lines in the e2e run (code-server 4.139.1)' }, null, 2)}\n`);
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

