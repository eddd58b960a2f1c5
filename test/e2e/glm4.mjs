// Journey 18 (group `glm4`, issue #29's acceptance): GLM-4 from the setup checklist in the real VS Code. A fresh
// window with no weights: choose GLM-4-9B-Chat in the checklist's model list → its weights row names GLM-4 →
// Download asks with GLM-4's repository at the catalog's pinned commit and its licence (Accept Licence and
// Download) → the fake Hub serves ../shared/fixtures/glm4-tiny as THUDM/glm-4-9b-chat → Start ChatGLM mounts that
// snapshot → a question is answered; the answer's hover names GLM-4-9B-Chat, and the prompt the engine received
// (checkpoint_engine.py runs the downloaded glm4-tiny with its own tokenizer) has GLM-4's layout.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { log, startCodeServer, waitFor, Workbench } from './lib.mjs';

const QUESTION = 'Which model answers this e2e question?';
const ANSWER = 'GLM-4 tiny answers from its own checkpoint.';
const GLM4 = 'glm-4-9b-chat';

/**
 * `h`: the runner's helpers (journey, windowConfig, windowEnv, openChat, ask, watchAnswer, waitForRow, clickSetup,
 * runningContainers, root).
 */
export async function glm4Journey(extensionsDir, h) {
  const { startFakeHub, GLM4_COMMIT, projectRoot } = await import('../support/fake-hub.mjs');
  // The backend stub embeds Debian's Python: it sees the virtual environment's packages (tiktoken for GLM-4's
  // tokenizer) only through PYTHONPATH, as triton/tests/test_glm4_server.py gives it; the image installs them.
  const venvLib = join(projectRoot, '.venv/lib');
  const site = readdirSync(venvLib).filter((n) => n.startsWith('python3')).map((n) => join(venvLib, n, 'site-packages'))[0];
  const hub = await startFakeHub();
  const cache = join(h.root, 'glm4/hf-cache');
  const scripts = join(h.root, 'glm4/scripts.json');
  const cfg = await h.windowConfig('glm4', { 'tritonChatglm.weightsPath': undefined, 'tritonChatglm.hubEndpoint': hub.endpoint });
  writeFileSync(scripts, JSON.stringify([{ match: QUESTION, answer: ANSWER }]));
  const server = await startCodeServer({
    name: 'glm4', extensionsDir, folder: h.workspace, remoteSettings: cfg.settings,
    env: h.windowEnv(cfg, {
      HF_HUB_CACHE: cache, HF_HOME: join(h.root, 'glm4/hf-home'), TINY_ENGINE_SCRIPTS: scripts,
      // The served engine runs the mounted checkpoint (the downloaded glm4-tiny) with its own tokenizer.
      FAKE_DOCKER_ENGINE: 'checkpoint_engine:CheckpointEngine',
      ...(site ? { PYTHONPATH: [site, process.env.PYTHONPATH].filter(Boolean).join(':') } : {}),
    }),
  });
  let wb;
  try {
    await h.journey('18 GLM-4: chosen in the checklist → Download with its licence → Start → an answer named GLM-4, its prompt in GLM-4\'s layout', async () => {
      wb = await Workbench.open(server, 'glm4');
      await wb.waitForStatus(/ChatGLM: setup needed/, { timeout: 60_000 });
      const chat = await h.openChat(wb);
      await h.waitForRow(chat, 'weights', 'error');
      // The model choice is folded to the chosen model's name: open it.
      await chat.locator('details.setup-models > summary').click();
      const choose = chat.locator(`details.setup-models button[data-model-action="choose"][data-model="${GLM4}"]`);
      await choose.waitFor({ timeout: 30_000 });
      await choose.click();
      await waitFor(async () => (await chat.locator(`details.setup-models li[data-model="${GLM4}"]`).getAttribute('data-chosen')) === 'true',
        { timeout: 30_000, what: 'GLM-4-9B-Chat to be the chosen model' });
      const machine = () => JSON.parse(readFileSync(join(server.userDataDir, 'Machine/settings.json'), 'utf8'));
      if (machine()['tritonChatglm.model'] !== GLM4) throw new Error(`remote settings have model ${machine()['tritonChatglm.model']}`);
      await waitFor(async () => /GLM-4-9B-Chat has no weights yet/.test((await h.waitForRow(chat, 'weights', 'error')).text),
        { timeout: 60_000, what: 'the weights row to name GLM-4-9B-Chat' });

      await h.clickSetup(chat, 'downloadWeights', 'weights');
      const dialog = wb.page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      const asked = ((await dialog.textContent()) ?? '').replace(/\s+/g, ' ');
      for (const part of ['Download GLM-4-9B-Chat', `THUDM/glm-4-9b-chat at ${GLM4_COMMIT}`, `Into: ${cache}`,
        'Licence: GLM-4 License (https://huggingface.co/THUDM/glm-4-9b-chat/blob/main/LICENSE)', 'Free for academic research.', 'accepting this licence']) {
        if (!asked.includes(part)) throw new Error(`the confirmation does not say "${part}": ${asked}`);
      }
      if (asked.includes('newer snapshot')) throw new Error(`GLM-4 has no tested commit, yet the confirmation says: ${asked}`);
      if (hub.stats.bytes !== 0) throw new Error(`${hub.stats.bytes} bytes fetched before the confirmation`);
      await dialog.locator('.monaco-button', { hasText: /^Accept Licence and Download$/ }).click();
      await wb.waitForNotification(/GLM-4-9B-Chat is downloaded and verified/, { timeout: 120_000 });
      const snapshot = join(cache, 'models--THUDM--glm-4-9b-chat/snapshots', GLM4_COMMIT);
      const ok = await h.waitForRow(chat, 'weights', 'ok', { timeout: 120_000 });
      if (!ok.text.includes(snapshot)) throw new Error(`weights row: ${ok.text}`);
      for (const f of ['tokenization_chatglm.py', 'modeling_chatglm.py']) if (existsSync(join(snapshot, f))) throw new Error(`${f} was downloaded`);

      await waitFor(async () => (await chat.locator('section.setup').getAttribute('data-phase')) === 'ready', { timeout: 60_000, what: 'the checklist to be complete' });
      await h.clickSetup(chat, 'startChatglm');
      await wb.waitForStatus(/ChatGLM: ready/, { timeout: 300_000 });
      const [container] = h.runningContainers(cfg);
      const binds = container?.HostConfig?.Binds ?? [];
      if (!binds.includes(`${join(cache, 'models--THUDM--glm-4-9b-chat')}:/weights/hub-repository:ro`)) throw new Error(`the container's binds: ${JSON.stringify(binds)}`);
      const ready = await fetch(`http://127.0.0.1:${cfg.http}/v2/models/${GLM4}/ready`);
      if (ready.status !== 200) throw new Error(`${GLM4} is not ready in Triton (HTTP ${ready.status})`);

      await h.ask(chat, QUESTION);
      const answer = await h.watchAnswer(chat, 0);
      if (answer.text.trim() !== ANSWER) throw new Error(`the answer: ${JSON.stringify(answer.text)}`);
      const article = chat.locator('main.messages article.message.assistant').first();
      await article.hover();
      const usage = article.locator('.message-usage');
      await usage.hover();
      const hoverText = (await usage.getAttribute('title')) ?? '';
      if (!hoverText.includes('Answered by GLM-4-9B-Chat')) throw new Error(`the answer's hover says: ${JSON.stringify(hoverText)}`);
      // What the engine received: GLM-4's layout from GLM-4's tokenizer ([gMASK] <sop>, role tokens, "\n" after each).
      const prompts = readFileSync(cfg.promptLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
      const prompt = prompts.filter((p) => p.prompt.includes(QUESTION)).at(-1)?.prompt ?? '';
      if (!prompt.startsWith('[gMASK]<sop><|') || !prompt.endsWith(`<|user|>\n${QUESTION}<|assistant|>`)) throw new Error(`the prompt the engine got: ${JSON.stringify(prompt)}`);
      log(`      the engine got ${JSON.stringify(prompt.slice(0, 60))}…; hover: ${JSON.stringify(hoverText.split('\n')[0])}`);
    }, { wb: () => wb });
  } finally {
    await server.stop();
    await hub.close();
  }
}
