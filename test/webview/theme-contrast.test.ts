// Readable in every theme: the chat panel (one answer with every element an answer can have, a question with its
// chips, a failed answer, the error banner, the setup checklist) and Server Status, under the --vscode-* variables
// VS Code sets for Light+, Dark+, Dark High Contrast and Light High Contrast (captured from code-server, see
// support/themes.ts). Every visible text has a WCAG contrast ratio of at least 4.5:1 against what is drawn under
// it, and in the high-contrast themes the boxes that VS Code outlines there (code blocks, table cells, chips,
// banners, the input, the question) have their border.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { HostToStatusView, SetupView } from '../../src/protocol';
import { assistant, startHarness, stateMsg, user, type Harness, type Panel } from './support/harness';
import { applyTheme, borderOf, contrastRatio, drawnTexts, isHighContrast, loadTheme, THEME_FILES } from './support/themes';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

const out = join(__dirname, '../../test-results/webview');
const fence = '```';
/** Every element of an answer: heading, paragraph, inline code, link, list, table, code block with its tokens, a mark. */
const ANSWER = [
  '## Geometry helpers',
  '',
  'The module has three functions; see the [math docs](https://docs.python.org/3/library/math.html) and `math.pi`.',
  '',
  '| Function | Dependencies | Returns |',
  '|---|---|---|',
  '| `circle_area(radius)` | `math.pi` | the **area** |',
  '| `mean(values)` | none | *the average* |',
  '',
  '- `mean([])` raises ZeroDivisionError',
  '- negative radii are not checked',
  '',
  '> Check the answer before you use it.',
  '',
  `${fence}python`,
  '# the area of a circle',
  'def circle_area(radius: float) -> float:',
  '    name = "circle\u200b"',
  '    return math.pi * radius ** 2 + 0',
  fence,
].join('\n');

const chips = [
  { id: 'att-1', kind: 'selection', path: 'src/geometry.py', fullPath: '/home/dev/src/geometry.py', startLine: 3, endLine: 4, tokens: 42 },
  { id: 'att-2', kind: 'file', path: 'docs/notes.md', fullPath: '/home/dev/docs/notes.md', tokens: 90 },
];

const SETUP: SetupView = {
  visible: true, phase: 'needed', checking: false, primary: 'recheck',
  summary: '2 checks need attention before ChatGLM3 can start. 3 more are checked after that.',
  failure: 'ChatGLM3 failed to load: CUDA out of memory',
  items: [
    { id: 'docker', level: 'error', label: 'Docker', detail: 'Docker was not found.', fixes: ['installDocker', 'openSettings'] },
    { id: 'daemon', level: 'blocked', label: 'Docker daemon', detail: 'Checked once Docker is installed.', fixes: [] },
    { id: 'weights', level: 'warning', label: 'ChatGLM3-6B weights', detail: 'The folder is large.', fixes: ['chooseWeights'] },
    { id: 'ports', level: 'ok', label: 'Ports', detail: '8000, 8001, 8002 are free on 127.0.0.1.', fixes: [] },
    { id: 'gpu-memory', level: 'unknown', label: 'GPU memory', detail: 'Unknown: nvidia-smi is not installed here.', fixes: [] },
  ],
};

const STATUS_LAYOUT: HostToStatusView = {
  type: 'layout', title: 'Triton statistics for chatglm3-6b',
  sections: [
    { kind: 'table', id: 'now', heading: 'Now', rows: [{ id: 'tritonPending', label: 'Requests in Triton\'s queue' }] },
    { kind: 'charts', id: 'tritonCharts', heading: 'Triton (last 3 minutes, every 2 s)', charts: [{ id: 'requestsPerSecond', label: 'Requests finished per second' }, { id: 'queueMs', label: 'Queue ms per request' }] },
  ],
  chart: { width: 240, height: 40 }, collecting: 'collecting…', axis: { start: '3 min ago', end: 'now' }, hidden: [],
};

/** The texts under `selector` below 4.5:1 (glyphs hidden from screen readers: 3:1, WCAG 1.4.11), described. */
async function lowContrast(panel: Panel, selector: string): Promise<string[]> {
  const texts = await drawnTexts(panel.page, selector);
  assert.ok(texts.length > 0, `texts found under ${selector}`);
  return texts.filter((t) => contrastRatio(t.fg, t.bg) < (t.decorative ? 3 : 4.5))
    .map((t) => `${t.what} "${t.text}": ${contrastRatio(t.fg, t.bg).toFixed(2)}:1 (rgb ${t.fg.slice(0, 3).map(Math.round)} on ${t.bg.slice(0, 3).map(Math.round)})`);
}

/** Boxes that must be outlined in a high-contrast theme. */
const HC_BORDERS = [
  '.code-block', '.markdown th', '.markdown td', '.attachment-chip', '.error-banner', '.input-box', '.message.user .message-body', 'section.setup',
];

for (const file of THEME_FILES) {
  const theme = loadTheme(file);
  describe(`readable in ${theme.theme}`, () => {
    it('the chat panel: every text of an answer, a question with chips, a failed answer and the error banner ≥ 4.5:1', async () => {
      const panel = await harness.open({ themeVariables: false });
      const { page } = panel;
      await applyTheme(page, theme);
      await panel.send(stateMsg([
        { ...user('u1', 'What does `circle_area` return?'), attachments: chips },
        assistant('a1', ANSWER),
        user('u2', 'And mean?'),
        assistant('a2', 'Partial', 'failed', { error: 'the server went away' }),
      ]));
      await panel.send({ type: 'error', message: 'The server did not answer.' });
      await page.locator('article[data-id="a1"] .code-block').waitFor();
      // Every element is there, so the check below covers it.
      for (const sel of ['article[data-id="a1"] h2', 'article[data-id="a1"] li', 'article[data-id="a1"] td code', 'article[data-id="a1"] th',
        'article[data-id="a1"] a', 'article[data-id="a1"] .hljs-keyword', 'article[data-id="a1"] .hljs-string', 'article[data-id="a1"] .hljs-comment',
        'article[data-id="a1"] .invisible-char', '.message-marker.failed', '.error-banner .error-text', 'article[data-id="u1"] .attachment-chip']) {
        assert.ok(await page.locator(sel).count() > 0, `${sel} is rendered`);
      }
      await page.screenshot({ path: join(out, `theme-${file.replace('.json', '')}-chat.png`), fullPage: true });
      assert.deepEqual(await lowContrast(panel, '#root'), [], `texts below 4.5:1 in ${theme.theme}`);
      if (isHighContrast(theme)) {
        for (const sel of HC_BORDERS.filter((s) => s !== 'section.setup')) {
          const borders = await borderOf(page, sel);
          assert.ok(borders.length > 0, sel);
          for (const b of borders) {
            assert.ok(b.width >= 1 && b.style !== 'none' && !/rgba\(.*, 0\)|transparent/.test(b.color), `${sel} has a visible border in ${theme.theme}: ${JSON.stringify(b)}`);
          }
        }
      }
      await page.close();
    });

    it('the setup checklist: every check, its detail, fixes and the summary ≥ 4.5:1', async () => {
      const panel = await harness.open({ themeVariables: false });
      const { page } = panel;
      await applyTheme(page, theme);
      await panel.send(stateMsg([], { server: { server: 'stopped', model: 'unknown', actions: ['startServer'] } }));
      await panel.send({ type: 'setup', setup: SETUP });
      await page.locator('section.setup .setup-item').first().waitFor();
      assert.deepEqual(await lowContrast(panel, 'section.setup'), [], `texts below 4.5:1 in ${theme.theme}`);
      if (isHighContrast(theme)) {
        const [box] = await borderOf(page, 'section.setup');
        assert.ok(box && box.width >= 1 && box.style !== 'none', `the checklist is outlined: ${JSON.stringify(box)}`);
      }
      await page.close();
    });

    it('Server Status: headings, figures, chart labels and axes ≥ 4.5:1', async () => {
      const panel = await harness.open({ page: 'status', themeVariables: false });
      const { page } = panel;
      await applyTheme(page, theme);
      await panel.send(STATUS_LAYOUT);
      await panel.send({ type: 'update', figures: { tritonPending: '0' }, series: { requestsPerSecond: { d: 'M0 40L2.7 20', last: '0.5', top: '1 requests/s', empty: false }, queueMs: { d: '', last: '–', top: '0.001 ms', empty: true } }, lists: {}, hidden: [], note: 'The server reports no GPU metrics.' });
      assert.deepEqual(await lowContrast(panel, 'body'), [], `texts below 4.5:1 in ${theme.theme}`);
      await page.close();
    });
  });
}

describe('the theme variables are VS Code\'s', () => {
  it('each captured theme has the tokens the stylesheets read', () => {
    for (const file of THEME_FILES) {
      const { variables, theme } = loadTheme(file);
      for (const name of ['--vscode-foreground', '--vscode-sideBar-background', '--vscode-textPreformat-foreground', '--vscode-textPreformat-background', '--vscode-font-family']) {
        assert.ok(variables[name], `${theme} sets ${name}`);
      }
    }
    assert.equal(loadTheme('dark-high-contrast.json').variables['--vscode-contrastBorder'], '#6fc3df');
  });
});

mkdirSync(out, { recursive: true });
