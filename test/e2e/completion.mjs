// Journey 17: inline code completion (issue #30) in the real VS Code, against the real served model path: the
// fake docker's tritonserver with the tiny engine taking `infill` as CodeGeeX4 does (TINY_ENGINE_FILL_IN_MIDDLE=1)
// and the window's model set to CodeGeeX4-ALL-9B. Type in a Python file → the ghost text appears (a scripted
// completion, README picture `inline-completion.png`) → Tab accepts it (checked in the saved file) → a request in
// flight is cancelled on the server when typing goes on (chatglm3_cancelled_requests_total grows) → the status
// bar's toggle turns completions off (nothing sent while off) and on again.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { log, startCodeServer, waitFor, Workbench, writeFakeCheckpoint } from './lib.mjs';
import { completionScript } from './scripted-answers.mjs';

const FILE = 'completion_demo.py';
const LINES = ['import math', '', '', 'def area_of_square(side):', '    ', '', '', 'def slow_block(x):', '    ', ''];

/** `h`: the runner's helpers (journey, windowConfig, windowEnv, title, docScreenshot, workspace). */
export async function completionJourney(extensionsDir, h) {
  const folder = join(dirname(h.workspace), 'completion-workspace');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, FILE), LINES.join('\n'));
  // The weights check wants the chosen model's checkpoint: a stand-in with CodeGeeX4's config.json.
  const weights = writeFakeCheckpoint(join(dirname(h.workspace), 'weights/codegeex4-all-9b'), 'codegeex4-all-9b');
  const cfg = await h.windowConfig('complete', { 'tritonChatglm.model': 'codegeex4-all-9b', 'tritonChatglm.weightsPath': weights });
  const server = await startCodeServer({ name: 'complete', extensionsDir, folder, remoteSettings: cfg.settings, env: h.windowEnv(cfg, { TINY_ENGINE_FILL_IN_MIDDLE: '1' }) });
  const prompts = () => (existsSync(cfg.promptLog) ? readFileSync(cfg.promptLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).prompt ?? '') : []);
  const cancelled = async () => {
    const text = await (await fetch(`http://127.0.0.1:${cfg.metrics}/metrics`)).text();
    return text.split('\n').filter((l) => l.startsWith('chatglm3_cancelled_requests_total')).reduce((n, l) => n + Number(l.split(/\s+/).at(-1)), 0);
  };
  let wb;
  const goTo = async (line, column) => {
    await wb.page.keyboard.press('Control+G');
    await wb.page.keyboard.type(`${line}:${column}`);
    await wb.page.keyboard.press('Enter');
  };
  const ghostText = () => wb.page.locator('.editor-instance .monaco-editor [class*="ghost-text"]').evaluateAll((els) => els.map((e) => e.textContent ?? '').join('').replace(/\u00a0/g, ' ')); // Monaco renders spaces as no-break spaces

  await h.journey('17 code completion: ghost text in a Python file, Tab accepts, typing on cancels on the server, the toggle turns it off', async () => {
    wb = await Workbench.open(server, 'complete');
    await wb.waitForStatus(/completions on/, { timeout: 60_000 });
    await wb.runCommand(h.title('startChatglm'));
    await wb.waitForStatus(/ChatGLM: ready/, { timeout: 300_000 });
    const page = wb.page;
    await wb.runCommand('View: Show Explorer');
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: FILE }).first().click();
    await page.locator('.editor-instance .monaco-editor .view-lines').first().waitFor();
    await page.locator('.editor-instance .monaco-editor .view-lines').first().click();

    // 1. The ghost text: a pause after "return " asks the model; its (scripted) completion shows after the cursor.
    await goTo(5, 5);
    await page.keyboard.type('return ', { delay: 60 });
    await waitFor(async () => (await ghostText()).includes(completionScript.answer), { timeout: 60_000, what: `the ghost text "${completionScript.answer}"` })
      .catch(async (e) => { throw new Error(`${e.message}; ghost text shown: ${JSON.stringify(await ghostText())}`); });
    const asked = prompts().find((p) => p.includes(completionScript.match));
    if (!asked || !asked.includes('###MODE:LINE') || !asked.includes('###LANGUAGE:Python')) throw new Error(`the model was not asked in CodeGeeX4's layout: ${JSON.stringify(asked?.slice(0, 400))}`);
    await h.docScreenshot(wb, 'inline-completion.png');

    // 2. Tab accepts it: the saved file has the completed line.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Control+S');
    await waitFor(() => readFileSync(join(folder, FILE), 'utf8').split('\n')[4] === `    return ${completionScript.answer}`,
      { timeout: 15_000, what: 'the accepted completion in the saved file' }).catch((e) => {
      throw new Error(`${e.message}; line 5 is ${JSON.stringify(readFileSync(join(folder, FILE), 'utf8').split('\n')[4])}`);
    });

    // 3. Typing on cancels the request in flight on the server: a BLOCK completion (256 tokens, seconds at the
    // engine's pace) is asked for explicitly, then a keystroke supersedes it.
    const before = await cancelled();
    const seen = prompts().length;
    await goTo(9, 5);
    await wb.runCommand('Trigger Inline Suggestion');
    await waitFor(() => prompts().slice(seen).some((p) => p.includes('def slow_block(x):\n    <|code_middle|>') && p.includes('###MODE:BLOCK')),
      { timeout: 60_000, what: 'the BLOCK completion to reach the engine' });
    await page.keyboard.type('y');
    const after = await waitFor(async () => { const n = await cancelled(); return n > before && n; }, { timeout: 60_000, what: 'chatglm3_cancelled_requests_total to grow' });
    log(`      cancelled requests counter: ${before} -> ${after}`);

    // 4. The toggle: its menu turns completions off; nothing typed while off reaches the server; on again, it does.
    await page.locator('.part.statusbar .statusbar-item', { hasText: 'completions on' }).first().click();
    const pick = page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: 'Turn code completions off' }).first();
    await pick.click({ timeout: 15_000 });
    await wb.waitForStatus(/completions off/, { timeout: 15_000 });
    await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
    await goTo(10, 1);
    const marker = 'typed_while_off';
    await page.keyboard.type(`${marker} = `, { delay: 60 });
    await wb.runCommand('Trigger Inline Suggestion');
    await page.locator('.part.statusbar .statusbar-item', { hasText: 'completions off' }).first().click();
    await page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: 'Turn code completions on' }).first().click({ timeout: 15_000 });
    await wb.waitForStatus(/completions on/, { timeout: 15_000 });
    await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
    await goTo(10, marker.length + 4);
    await page.keyboard.type('1 + ', { delay: 60 });
    await waitFor(() => prompts().some((p) => p.includes(`${marker} = 1 + <|code_middle|>`)), { timeout: 60_000, what: 'a completion asked again once on' });
    const whileOff = prompts().filter((p) => p.includes(`${marker} = <|code_middle|>`) || p.includes(`${marker} =<|code_middle|>`));
    if (whileOff.length) throw new Error(`${whileOff.length} completion(s) were sent while completions were off`);
  }, { wb: () => wb });
  await server.stop();
}
