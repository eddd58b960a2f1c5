// The setup checklist of the chat webview in headless Chromium, under the extension's CSP, driven through the real
// protocol: what it shows for each phase, what its clicks post, that it replaces the server notice, and that a
// malformed or tampered message changes or posts nothing.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { HostToWebview, SetupView } from '../../src/protocol';
import { assistant, startHarness, stateMsg, user, type Harness, type Panel, closeChecked } from './support/harness';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const stopped = { server: { server: 'stopped', model: 'unknown', actions: ['startServer'] } };

const NEEDED: SetupView = {
  visible: true, phase: 'needed', checking: false, primary: 'recheck',
  summary: '4 checks need attention before ChatGLM3 can start.',
  items: [
    { id: 'docker', level: 'error', label: 'Docker', detail: 'Docker was not found. Install Docker Engine, or set the path of the docker command in the settings.', fixes: ['installDocker', 'openSettings'] },
    { id: 'daemon', level: 'blocked', label: 'Docker daemon', detail: 'Checked once Docker is installed.', fixes: [] },
    { id: 'nvidia-runtime', level: 'blocked', label: 'NVIDIA Container Toolkit', detail: 'Checked once Docker is installed.', fixes: [] },
    { id: 'image', level: 'blocked', label: 'Serving image', detail: 'Checked once Docker is installed.', fixes: [] },
    { id: 'weights', level: 'error', label: 'ChatGLM3-6B weights', detail: 'No weights folder is chosen yet.', fixes: ['chooseWeights'] },
    { id: 'ports', level: 'ok', label: 'Ports', detail: '8000, 8001, 8002 are free on 127.0.0.1.', fixes: [] },
    { id: 'gpu-memory', level: 'unknown', label: 'GPU memory', detail: 'Unknown: nvidia-smi is not installed here.', fixes: [] },
  ],
};

const READY: SetupView = {
  ...NEEDED, phase: 'ready', primary: 'startChatglm', summary: 'Everything ChatGLM3 needs is in place.',
  items: NEEDED.items.map((i) => (i.id === 'gpu-memory' ? i : { ...i, level: 'ok', detail: 'fine', fixes: [] })),
};

const setupMsg = (setup: SetupView): HostToWebview => ({ type: 'setup', setup });

async function open(): Promise<Panel> {
  const panel = await harness.open();
  await panel.send(stateMsg([], stopped));
  await panel.clearPosted();
  return panel;
}

const close = (panel: Panel) => closeChecked(panel);

describe('setup checklist', () => {
  it('everything missing: one box with every check, its mark and its fixes, instead of the server notice', async () => {
    const panel = await open();
    const { page } = panel;
    assert.equal(await page.isVisible('.server-status'), true, 'the server notice until the host sends a checklist');
    await panel.send(setupMsg(NEEDED));
    assert.equal(await page.isVisible('section.setup'), true);
    assert.equal(await page.isVisible('.server-status'), false, 'never two boxes');
    assert.equal(await page.textContent('.setup-title'), 'Set up ChatGLM3-6B', 'the model of the state');
    assert.equal(await page.textContent('.setup-summary'), NEEDED.summary);
    const rows = await page.locator('.setup-item').evaluateAll((els) => els.map((e) => ({
      check: e.getAttribute('data-check'), level: e.getAttribute('data-level'), mark: e.querySelector('.setup-mark')?.textContent,
      label: e.querySelector('.setup-label')?.textContent, fixes: [...e.querySelectorAll('.setup-fixes button')].map((b) => b.textContent),
    })));
    assert.deepEqual(rows.map((r) => [r.check, r.level, r.mark]), [
      ['docker', 'error', '✕'], ['daemon', 'blocked', '–'], ['nvidia-runtime', 'blocked', '–'], ['image', 'blocked', '–'],
      ['weights', 'error', '✕'], ['ports', 'ok', '✓'], ['gpu-memory', 'unknown', '?'],
    ]);
    assert.deepEqual(rows[0]!.fixes, ['Install Docker…', 'Open Settings']);
    assert.deepEqual(rows[4]!.fixes, ['Choose Weights Folder…']);
    // The mark is decoration; its meaning is in the text for screen readers.
    assert.equal(await page.getAttribute('.setup-item[data-check="docker"] .setup-mark', 'aria-hidden'), 'true');
    assert.match(await page.textContent('.setup-item[data-check="docker"] .setup-text') ?? '', /\(Needs attention\)/);
    assert.equal(await page.getAttribute('section.setup', 'aria-label'), 'ChatGLM setup checklist');
    // The one action while something is missing: Re-check, and only it.
    assert.deepEqual(await page.locator('.setup-actions button').allTextContents(), ['Re-check']);

    await page.click('.setup-item[data-check="weights"] button');
    await page.click('.setup-item[data-check="docker"] button >> nth=0');
    await page.click('.setup-actions button.primary');
    assert.deepEqual(await panel.posted(), [
      { type: 'setupAction', action: 'chooseWeights', check: 'weights' },
      { type: 'setupAction', action: 'installDocker', check: 'docker' },
      { type: 'setupAction', action: 'recheck' },
    ]);
    const out = resolve(__dirname, '../../test-results');
    mkdirSync(out, { recursive: true });
    await page.screenshot({ path: join(out, 'setup-checklist-needed.png'), fullPage: true });
    await close(panel);
  });

  it('grows to the view: every row in sight without an inner scrollbar while the view has room; scrolls only when it has not', async () => {
    const panel = await open();
    const { page } = panel;
    await page.setViewportSize({ width: 300, height: 800 });
    // The first run's checklist as the host words it (issue #33: at 70 % of the view it hid GPU memory).
    await panel.send(setupMsg({
      ...NEEDED,
      summary: '2 checks need attention before ChatGLM3 can start. 3 more are checked after that.',
      items: NEEDED.items.map((i) => (i.id === 'weights'
        ? { ...i, detail: 'No weights folder is chosen yet. Choose the folder of the ChatGLM3-6B checkpoint (config.json, tokenizer.model, *.safetensors).', fixes: ['downloadWeights', 'chooseWeights'] }
        : i.id === 'gpu-memory' ? { ...i, detail: 'Unknown: nvidia-smi is not installed here, so the memory of the GPU cannot be read before the model loads.' } : i)),
    }));
    const setup = page.locator('section.setup');
    const metrics = () => setup.evaluate((e) => {
      const box = e.getBoundingClientRect();
      const last = e.querySelector('.setup-item[data-check="gpu-memory"]')!.getBoundingClientRect();
      const composer = document.querySelector('.composer')!.getBoundingClientRect();
      return { scrolls: e.scrollHeight > e.clientHeight, lastInSight: last.bottom <= box.bottom && last.bottom <= window.innerHeight, height: box.height, composerTop: composer.top, bottom: box.bottom };
    });
    const tall = await metrics();
    assert.equal(tall.scrolls, false, `no inner scrollbar at 300 × 800 (box ${tall.height} px)`);
    assert.equal(tall.lastInSight, true, 'the last row (GPU memory) is in sight');
    assert.ok(tall.bottom <= tall.composerTop, 'the input stays below the checklist');
    // A view too short for every row: the box fills what the input leaves and scrolls, the input still in sight.
    await page.setViewportSize({ width: 300, height: 380 });
    const short = await metrics();
    assert.equal(short.scrolls, true);
    assert.ok(short.bottom <= short.composerTop && short.composerTop < 380, JSON.stringify(short));
    mkdirSync(resolve(__dirname, '../../test-results/webview'), { recursive: true });
    await page.setViewportSize({ width: 300, height: 800 });
    await page.screenshot({ path: resolve(__dirname, '../../test-results/webview/setup-checklist-300.png') });
    await close(panel);
  });

  it('all fine: Start ChatGLM is the one action (Re-check beside it); while checking, Re-check waits', async () => {
    const panel = await open();
    const { page } = panel;
    await panel.send(setupMsg(READY));
    assert.deepEqual(await page.locator('.setup-actions button').allTextContents(), ['Start ChatGLM', 'Re-check']);
    // Passed checks fold away once nothing is missing; what is unknown stays in sight.
    assert.equal(await page.textContent('.setup-passed > summary'), '6 of 7 checks passed');
    assert.equal(await page.isVisible('.setup-passed .setup-item[data-check="docker"]'), false);
    assert.equal(await page.isVisible('.setup-item[data-check="gpu-memory"]'), true);
    await page.click('.setup-passed > summary');
    assert.equal(await page.isVisible('.setup-passed .setup-item[data-check="docker"]'), true);
    assert.equal(await page.getAttribute('.setup-actions button >> nth=0', 'class'), 'primary');
    await page.click('.setup-actions button.primary');
    assert.deepEqual(await panel.posted(), [{ type: 'setupAction', action: 'startChatglm' }]);
    // Focus stays on the button that was focused when the host's next update arrives.
    await page.focus('.setup-actions button >> nth=1');
    await panel.send(setupMsg({ ...READY, checking: true }));
    assert.equal(await page.getAttribute('.setup-passed', 'open'), '', 'still open after the update');
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.textContent), 'Checking…');
    assert.equal(await page.getAttribute('.setup-actions button >> nth=1', 'aria-disabled'), 'true');
    await panel.clearPosted();
    await page.click('.setup-actions button >> nth=1', { force: true }); // as a person would: it reads "Checking…"
    await panel.nextFrames(1);
    assert.deepEqual(await panel.posted(), [], 'Re-check waits for the check that runs');
    assert.equal(await page.getAttribute('section.setup', 'aria-busy'), 'true');
    const out = resolve(__dirname, '../../test-results');
    await page.screenshot({ path: join(out, 'setup-checklist-ready.png'), fullPage: true });
    await close(panel);
  });

  it('starting and loading: the progress line, pending marks, no buttons; hidden once ready; a failure shown', async () => {
    const panel = await open();
    const { page } = panel;
    await panel.send(setupMsg({ ...READY, phase: 'busy', primary: undefined, summary: 'Starting the ChatGLM3 server…', items: READY.items.map((i) => ({ ...i, level: 'pending', detail: 'Checking…' })) }));
    assert.equal(await page.textContent('.setup-summary'), 'Starting the ChatGLM3 server…');
    assert.equal(await page.textContent('.setup-title'), 'ChatGLM server', 'not "Set up": nothing is missing');
    assert.equal(await page.locator('.setup-actions').count(), 0);
    assert.equal(await page.locator('.setup-item[data-level="pending"] .setup-mark').first().textContent(), '');
    await panel.send(setupMsg({ visible: true, phase: 'running', checking: false, summary: 'The server is running; ChatGLM3 is not loaded yet.', failure: 'ChatGLM3 failed to load: CUDA out of memory', items: [], primary: 'startChatglm' }));
    assert.equal(await page.textContent('.setup-failure'), 'ChatGLM3 failed to load: CUDA out of memory');
    assert.equal(await page.textContent('.setup-title'), 'ChatGLM3-6B is not loaded');
    assert.equal(await page.locator('.setup-item').count(), 0);
    await panel.send(setupMsg({ visible: false, phase: 'running', checking: false, summary: '', items: [] }));
    assert.equal(await page.isVisible('section.setup'), false);
    assert.equal(await page.isVisible('.server-status'), true, 'the server notice is back (e.g. external mode)');
    await close(panel);
  });

  it('after Stop with everything in place: a small box saying the model is stopped, the conversation in sight', async () => {
    const panel = await harness.open();
    const { page } = panel;
    const turns = Array.from({ length: 6 }, (_, i) => (i % 2 ? assistant(`a${i}`, `Answer ${i}.`) : user(`u${i}`, `Question ${i}?`)));
    await panel.send(stateMsg(turns, stopped));
    await panel.send(setupMsg(READY));
    assert.equal(await page.textContent('.setup-title'), 'ChatGLM3-6B is stopped', 'not "Set up ChatGLM3-6B": nothing is missing');
    assert.equal(await page.textContent('.setup-actions button.primary'), 'Start ChatGLM');
    // The passed checks are folded: the box is a few lines, the messages keep most of the panel.
    assert.equal(await page.locator('.setup-passed').getAttribute('open'), null);
    const box = (await page.locator('section.setup').boundingBox())!;
    const messages = (await page.locator('main.messages').boundingBox())!;
    assert.ok(box.height < messages.height, `checklist ${box.height} px, messages ${messages.height} px`);
    assert.equal(await page.locator('main.messages article.message').count(), 6);
    await close(panel);
  });

  it('Enter before the model is ready: the question stays, the focus goes to Start ChatGLM; the tooltip says so', async () => {
    const panel = await open();
    const { page } = panel;
    await panel.send(setupMsg(READY));
    const send = page.locator('button[data-action="send"]');
    assert.equal(await send.getAttribute('title'), 'Send (Enter) once ChatGLM3-6B is ready', 'no "Send (Enter)" promise while Enter cannot send');
    await page.locator('textarea.input').fill('What does circle_area return?');
    await page.locator('textarea.input').press('Enter');
    assert.equal(await page.inputValue('textarea.input'), 'What does circle_area return?', 'the question is kept');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Start ChatGLM');
    assert.deepEqual(await panel.posted(), [], 'nothing sent');
    // Enter again starts ChatGLM (the button has the focus), as the checklist's click would.
    await page.keyboard.press('Enter');
    assert.deepEqual(await panel.posted(), [{ type: 'setupAction', action: 'startChatglm' }]);
    // Ready: the usual tooltip, Enter sends.
    await panel.send(setupMsg({ ...READY, visible: false }));
    await panel.send(stateMsg([]));
    assert.equal(await send.getAttribute('title'), 'Send (Enter)');
    await close(panel);
  });

  it('the model choice: every catalog model with its size, fit and licence; Choose and Licence post setupModel; markup stays text', async () => {
    const panel = await open();
    const { page } = panel;
    const models: NonNullable<SetupView['models']> = [
      { id: 'chatglm3-6b', label: 'ChatGLM3-6B', chosen: true, fit: 'ok', detail: 'Download 12.5 GB. Fits GPU 0 in float16.', license: 'ChatGLM3-6B Model License: free for research.' },
      { id: 'glm-4-9b-chat', label: 'GLM-4-9B-Chat', chosen: false, fit: 'warning', detail: 'Download 18.8 GB. Needs 21.0 GB: GPU 0 has 16.0 GB free.', license: 'GLM-4 License: <b>a name that begins with "glm-4"</b>' },
    ];
    await panel.send(setupMsg({ ...NEEDED, models }));
    // Folded to the chosen model's name (the checks keep the view); opened, it stays open across updates.
    assert.equal(await page.locator('details.setup-models').getAttribute('open'), null);
    assert.equal(await page.textContent('details.setup-models > summary'), 'Model: ChatGLM3-6B (compare 2 models, choose another)');
    assert.equal(await page.locator('.setup-model[data-model="glm-4-9b-chat"] button >> text=Choose').isVisible(), false);
    await page.click('details.setup-models > summary');
    await panel.send(setupMsg({ ...NEEDED, models }));
    assert.notEqual(await page.locator('details.setup-models').getAttribute('open'), null);
    const rows = await page.locator('.setup-model').evaluateAll((els) => els.map((e) => ({
      id: e.getAttribute('data-model'), chosen: e.getAttribute('data-chosen'), label: e.querySelector('.setup-label')?.textContent,
      buttons: [...e.querySelectorAll('button')].map((b) => b.textContent), fit: e.querySelector('[data-fit]')?.getAttribute('data-fit'),
    })));
    assert.deepEqual(rows, [
      { id: 'chatglm3-6b', chosen: 'true', label: 'ChatGLM3-6B (Chosen)', buttons: ['Licence'], fit: 'ok' },
      { id: 'glm-4-9b-chat', chosen: 'false', label: 'GLM-4-9B-Chat', buttons: ['Choose', 'Licence'], fit: 'warning' },
    ]);
    assert.equal(await page.locator('.setup-model b').count(), 0, 'the licence text is text, not markup');
    assert.match(await page.textContent('.setup-model[data-model="glm-4-9b-chat"] .setup-license') ?? '', /<b>a name that begins with "glm-4"<\/b>/);
    await page.click('.setup-model[data-model="glm-4-9b-chat"] button >> text=Choose');
    await page.click('.setup-model[data-model="glm-4-9b-chat"] button >> text=Licence');
    assert.deepEqual(await panel.posted(), [{ type: 'setupModel', action: 'choose', id: 'glm-4-9b-chat' }, { type: 'setupModel', action: 'license', id: 'glm-4-9b-chat' }]);
    await panel.clearPosted();
    // A tampered button (an id that is no model id) posts nothing.
    await page.evaluate(() => document.querySelector('.setup-model[data-model="glm-4-9b-chat"] button')?.setAttribute('data-model', '../../evil'));
    await page.click('.setup-model[data-model="glm-4-9b-chat"] button >> text=Choose');
    await panel.nextFrames(1);
    assert.deepEqual(await panel.posted(), []);
    await close(panel);
  });

  it('translated labels; a malformed setup message changes nothing; a tampered button posts nothing', async () => {
    const panel = await open();
    const { page } = panel;
    await panel.send({ type: 'l10n', strings: { 'setupFix.chooseWeights': '选择权重文件夹…', setupRecheck: '重新检查', setupTitle: '准备 {0} 运行环境' } });
    await panel.send(setupMsg(NEEDED));
    assert.equal(await page.textContent('.setup-item[data-check="weights"] button'), '选择权重文件夹…');
    assert.equal(await page.textContent('.setup-title'), '准备 ChatGLM3-6B 运行环境');
    const before = await page.innerHTML('section.setup');
    await panel.send({ type: 'setup', setup: { ...NEEDED, items: [{ ...NEEDED.items[0]!, fixes: ['runCommand'] }] } });
    await panel.send({ type: 'setup', setup: { ...NEEDED, primary: 'https://example.com' } });
    assert.equal(await page.innerHTML('section.setup'), before);
    await page.evaluate(() => document.querySelector('.setup-item[data-check="weights"] button')?.setAttribute('data-fix', 'workbench.action.terminal.new'));
    await page.click('.setup-item[data-check="weights"] button');
    await panel.nextFrames(1);
    assert.deepEqual(await panel.posted(), []);
    await close(panel);
  });
});
