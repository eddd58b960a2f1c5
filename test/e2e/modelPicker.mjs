// Journey 16: ChatGLM3 in VS Code's own UI (issue #28). A fresh window starts ChatGLM and opens the Chat view
// (Ctrl+Alt+I, VS Code's Open Chat). In code-server 4.139.1 (VS Code 1.139.1) with no GitHub account the Chat
// view's model picker offers only "Sign in to use Copilot" (checked, so a change shows); VS Code's **Chat: Manage
// Language Models** editor lists the models of every provider without a sign-in, and must list ChatGLM3-6B: the
// README picture `chat-language-models.png`.
import { log, startCodeServer, waitFor, Workbench } from './lib.mjs';

/** `h`: the runner's helpers (journey, windowConfig, windowEnv, title, docScreenshot, workspace). */
export async function modelPickerJourney(extensionsDir, h) {
  const cfg = await h.windowConfig('lm');
  const server = await startCodeServer({ name: 'lm', extensionsDir, folder: h.workspace, remoteSettings: cfg.settings, env: h.windowEnv(cfg) });
  let wb;
  await h.journey('16 VS Code\'s language models: Manage Language Models lists ChatGLM3-6B once loaded, without a sign-in (README picture)', async () => {
    wb = await Workbench.open(server, 'lm');
    await wb.waitForStatus(/ChatGLM: stopped/, { timeout: 60_000 });
    await wb.runCommand(h.title('startChatglm'));
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 300_000 });
    const page = wb.page;
    await page.locator('.part.editor').click({ position: { x: 200, y: 200 } });
    await page.keyboard.press('Control+Alt+I');
    const chat = page.locator('.part.auxiliarybar');
    await chat.waitFor({ state: 'visible', timeout: 30_000 });
    // The picker is a button of the chat input's toolbar named after the current model ("Pick Model…" in its label).
    const buttons = chat.locator('.chat-input-toolbars .action-item a, .chat-input-toolbars .monaco-button, .chat-input-toolbars [role="button"]');
    const picker = await waitFor(async () => {
      for (const b of await buttons.all()) {
        const label = `${await b.getAttribute('aria-label') ?? ''} ${await b.textContent() ?? ''}`;
        if (/model/i.test(label)) return b;
      }
      return undefined;
    }, { timeout: 30_000, what: 'the model picker in the chat input' }).catch(async (e) => {
      const labels = await buttons.evaluateAll((bs) => bs.map((b) => `${b.getAttribute('aria-label')}|${b.textContent}`)).catch(() => []);
      throw new Error(`${e.message}; the toolbar holds ${JSON.stringify(labels)}`);
    });
    await picker.click();
    const menu = page.locator('.action-widget, .quick-input-widget, .monaco-menu').filter({ visible: true }).first();
    await menu.waitFor({ state: 'visible', timeout: 30_000 });
    const offered = (await menu.textContent()) ?? '';
    log(`      the Chat view's model picker offers: ${offered.includes('ChatGLM3-6B') ? 'ChatGLM3-6B' : offered.includes('Sign in') ? 'only "Sign in to use Copilot" (no account here)' : offered.slice(0, 120)}`);
    await page.keyboard.press('Escape');
    await wb.runCommand('Chat: Manage Language Models');
    const listed = page.locator('.part.editor').filter({ hasText: 'ChatGLM3-6B' });
    await listed.waitFor({ state: 'visible', timeout: 30_000 }).catch(async (e) => {
      const shown = ((await page.locator('.part.editor').textContent().catch(() => '')) ?? '').slice(0, 600);
      throw new Error(`${e.message.split('\n')[0]}; the editor shows ${JSON.stringify(shown)}`);
    });
    log('      Manage Language Models lists ChatGLM3-6B');
    await h.docScreenshot(wb, 'chat-language-models.png');
  }, { wb: () => wb });
  await server.stop();
}
