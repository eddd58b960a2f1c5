// The extension's main journeys on a real Docker Engine (issue #27): the packaged extension in code-server, its
// `docker` the Debian CLI talking to the docker stage's private dockerd (DOCKER_HOST) and its image the stage's CPU
// serving image — the extension's own `docker run` arguments, unchanged. Start ChatGLM from the setup checklist, a
// chat answer, Explain with three selections generated together, Stop; then the container killed from outside while
// an answer streams. Run by test/docker/run-stage.mjs (`run.mjs --only=docker`), which starts the daemon and builds
// the image; never part of the e2e stage's default run.
import { spawnSync } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { DOCKER_CLI } from '../docker/daemon.mjs';
import { log, onCleanup, projectRoot, startCodeServer, waitFor, Workbench } from './lib.mjs';

const MODEL = 'chatglm3-6b';

/** What the stage runner gives the window: the daemon's address and the image built for this content. */
function stageDocker() {
  const { DOCKER_HOST, DOCKER_CONFIG, TRITON_CHATGLM_TEST_IMAGE: image } = process.env;
  if (!DOCKER_HOST || !image) {
    throw new Error('the real-docker journeys run in the docker stage (node test/docker/run-stage.mjs), which sets DOCKER_HOST and TRITON_CHATGLM_TEST_IMAGE');
  }
  return { env: { DOCKER_HOST, ...(DOCKER_CONFIG ? { DOCKER_CONFIG } : {}) }, image };
}

/**
 * `h`: the runner's helpers (journey, windowConfig, windowEnv, title, workspace, sample, openChat, ask, watchAnswer,
 * assistantArticles, openFile, selectLines, selectLineRange, finishedExplanations, decodeCounts, generatedTogether, tritonGet, changeRemoteSettings).
 */
export async function realDockerJourneys(extensionsDir, h) {
  const stage = stageDocker();
  const docker = (...args) => spawnSync(DOCKER_CLI, args, { env: { ...process.env, ...stage.env }, encoding: 'utf8', timeout: 60_000 });
  const cfg = await h.windowConfig('docker', {
    'tritonChatglm.dockerPath': DOCKER_CLI,
    'tritonChatglm.image': stage.image,
    'tritonChatglm.askBeforeUnload': false,
  });
  const name = cfg.settings['tritonChatglm.containerName'];
  /** Our container as the daemon knows it (by its configured name). */
  const ours = () => docker('ps', '-a', '--no-trunc', '--filter', `name=^/${name}$`, '--format', '{{.ID}} {{.State}} {{.Image}}')
    .stdout.split('\n').filter(Boolean).map((l) => { const [id, state, image] = l.split(' '); return { id, state, image }; });
  onCleanup(() => { docker('rm', '-f', name); });
  // The stub NVIDIA hook of test/docker on the window's PATH, as the daemon has it: the preflight finds the toolkit.
  const env = h.windowEnv(cfg, { ...stage.env, PATH: [join(projectRoot, 'test/docker/nvidia-hook'), process.env.PATH].filter(Boolean).join(delimiter) });
  const server = await startCodeServer({ name: 'docker', extensionsDir, folder: h.workspace, remoteSettings: cfg.settings, env });
  let wb;
  let chat;
  const current = () => wb;
  const startFromChecklist = async () => {
    const start = chat.locator('section.setup .setup-actions button.primary');
    await start.waitFor({ timeout: 120_000 });
    const label = (await start.textContent())?.trim();
    if (label !== 'Start ChatGLM') throw new Error(`the checklist's action reads "${label}"`);
    const before = await wb.statusBarText(); // "server error" after docker 5's kill
    await start.click();
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 300_000, leaving: before });
    await waitFor(async () => !(await chat.locator('section.setup').isVisible()), { timeout: 20_000, what: 'the checklist to go once the model is ready' });
  };

  const d1 = 'docker 1 Start ChatGLM from the setup checklist: the image runs on the real engine, the model is ready';
  await h.journey(d1, async () => {
    wb = await Workbench.open(server, 'docker');
    await wb.waitForStatus(/ChatGLM: stopped/, { timeout: 60_000 });
    if (ours().length) throw new Error(`a container named ${name} exists before Start`);
    chat = await h.openChat(wb);
    await startFromChecklist();
    const running = ours();
    if (running.length !== 1 || running[0].state !== 'running' || running[0].image !== stage.image) {
      throw new Error(`expected one running container of ${stage.image}, found ${JSON.stringify(running)}`);
    }
    const published = docker('port', name, '8000/tcp').stdout.trim();
    if (published !== `127.0.0.1:${cfg.http}`) throw new Error(`Triton's HTTP port is published as "${published}", not on loopback port ${cfg.http}`);
    const ready = await h.tritonGet(cfg, `/v2/models/${MODEL}/ready`);
    if (ready.status !== 200) throw new Error(`the model is not ready in Triton: ${ready.status}`);
  }, { wb: current });

  const d2 = 'docker 2 chat: an answer streamed from the container';
  await h.journey(d2, async () => {
    await h.ask(chat, 'What does a dynamic batcher do?');
    const a = await h.watchAnswer(chat, 0);
    if (!a.text.trim()) throw new Error('the answer is empty');
    log(`      answer: ${a.partials.length} partial renderings, ${a.text.length} chars`);
  }, { wb: current, needs: [d1] });

  await h.journey('docker 3 Explain three selections: three threads, generated together', async () => {
    const before = await h.decodeCounts(cfg);
    await wb.clearNotifications();
    await h.openFile(wb, h.sample);
    await h.selectLines(wb, [4, 7, 10]);
    await wb.runCommand(h.title('explainSelection'));
    const titles = await h.finishedExplanations(wb, 3);
    const places = titles.map((t) => /^Explanation of geometry\.py:(\d+): \S/.exec(t)?.[1]).sort();
    if (JSON.stringify(places) !== JSON.stringify(['10', '4', '7'])) throw new Error(`thread titles: ${JSON.stringify(titles)}`);
    const together = await h.generatedTogether(cfg, before);
    log(`      decode steps during explain: ${together.steps}, rows ${together.rows}`);
    await wb.runCommand(h.title('dismissAllExplanations'));
  }, { wb: current, needs: [d1] });

  const d4 = 'docker 4 Stop: the container is stopped and removed';
  await h.journey(d4, async () => {
    await wb.runCommand(h.title('stopServer'));
    await wb.waitForStatus(/ChatGLM: stopped/, { timeout: 120_000 });
    await waitFor(() => ours().length === 0, { timeout: 30_000, what: `no container named ${name} left` });
  }, { wb: current, needs: [d1] });

  const d5 = 'docker 5 the container killed while an answer streams: the conversation kept, the exit said, Start offered';
  await h.journey(d5, async () => {
    chat = await h.openChat(wb);
    await startFromChecklist();
    // A long answer, so the kill lands while it streams.
    await h.changeRemoteSettings(server, { 'tritonChatglm.maxNewTokens': 2048 }, /settings changed: .*maxNewTokens/);
    const n = await h.assistantArticles(chat).count();
    const question = 'Tell me a very long story, please.';
    await h.ask(chat, question);
    const article = h.assistantArticles(chat).nth(n);
    await waitFor(async () => (await article.getAttribute('data-status')) === 'streaming' && ((await article.locator('.message-body').textContent()) ?? '').trim(),
      { timeout: 120_000, interval: 50, what: 'the answer to stream' });
    const kill = docker('kill', name);
    if (kill.status !== 0) throw new Error(`docker kill: ${kill.stderr}`);
    await waitFor(async () => (await article.getAttribute('data-status')) === 'failed', { timeout: 60_000, what: 'the answer to end as failed' });
    const said = ((await article.textContent()) ?? '').replace(/\s+/g, ' ');
    if (!/the Triton container exited with code 137/.test(said)) throw new Error(`the failed answer says: ${said.slice(-400)}`);
    if (/not running or cannot be reached/.test(said)) throw new Error(`the answer says "cannot be reached": ${said.slice(-400)}`);
    const texts = await chat.locator('main.messages article.message .message-body').evaluateAll((els) => els.map((e) => e.textContent ?? ''));
    if (!texts.some((t) => t.includes(question))) throw new Error('the question is gone from the conversation');
    // The panel offers Start (the checklist's Start ChatGLM or the server notice's Start Server).
    const offer = chat.locator('section.setup .setup-actions button, section.server-status .server-actions button', { hasText: /^Start/ });
    await offer.first().waitFor({ timeout: 30_000 });
    log(`      offered: ${JSON.stringify(await offer.allTextContents())}; bar: ${await wb.statusBarText()}`);
    const exited = ours();
    if (exited.length !== 1 || exited[0].state !== 'exited') throw new Error(`the killed container: ${JSON.stringify(exited)}`);
  }, { wb: current, needs: [d1, d4] });

  await h.journey('docker 6 Edit Selection while the container is killed: the error says it exited (137) and offers Start Server', async () => {
    chat = await h.openChat(wb);
    await startFromChecklist(); // maxNewTokens is still 2048: the rewrite streams long enough
    await wb.clearNotifications();
    await h.openFile(wb, h.sample);
    await h.selectLineRange(wb, 3, 4);
    await wb.runCommand(h.title('editSelection'));
    const input = wb.page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 15_000 });
    await input.fill('Use math.tau in circle_area');
    await wb.page.keyboard.press('Enter');
    // The rewrite is being generated: the server's own figure of active rows.
    await waitFor(async () => /^chatglm3_active_rows(\{[^}]*\})? [1-9]/m.test(await (await fetch(`http://127.0.0.1:${cfg.metrics}/metrics`)).text()),
      { timeout: 60_000, interval: 50, what: 'the rewrite to be generated' });
    const kill = docker('kill', name);
    if (kill.status !== 0) throw new Error(`docker kill: ${kill.stderr}`);
    const shown = await wb.waitForNotification(/The rewrite failed/, { timeout: 60_000 });
    if (!/The rewrite failed: The server stopped: the Triton container exited with code 137\./.test(shown)) throw new Error(`the notification says: ${shown}`);
    if (!/Start Server/.test(shown)) throw new Error(`the notification offers no Start Server: ${shown}`);
    log(`      notification: ${shown.slice(0, 200)}`);
  }, { wb: current, needs: [d1, d5] });

  await server.stop();
}
