// The Server Status view bundle in headless Chromium, under the extension's CSP, driven through its protocol:
// the page asks for its layout, builds its sections (tables, sparklines, lists) from it, writes each update's
// figures, hides the groups the server does not report (no GPU metrics, no continuous-batching figures), and
// ignores what the protocol rejects.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isProtocolError, parseHostToStatusView, type HostToStatusView } from '../../src/protocol';
import { startHarness, type Harness, type Panel, closeChecked } from './support/harness';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

/** A message as the host sends it: checked against the protocol first, so the test cannot drift from it. */
function hostMessage<T extends HostToStatusView>(m: T): T {
  const parsed = parseHostToStatusView(m);
  assert.ok(!isProtocolError(parsed), JSON.stringify(parsed));
  return m;
}

const LAYOUT = hostMessage({
  type: 'layout',
  title: 'Triton statistics for chatglm3-6b',
  sections: [
    { kind: 'table', id: 'now', heading: 'Now', rows: [
      { id: 'activeRows', label: 'Answers being written', help: 'Answers the server is writing right now, for every window.', group: 'scheduler' },
      { id: 'tritonPending', label: 'Requests in Triton\'s queue' },
    ] },
    { kind: 'charts', id: 'schedulerCharts', heading: 'Continuous batching', group: 'scheduler', charts: [
      { id: 'activeRows', label: 'Answers being written', help: 'Answers the server is writing right now, for every window.' },
      { id: 'generatedTokensPerSecond', label: 'Generated tokens/s' },
    ] },
    { kind: 'table', id: 'tritonTotals', heading: 'Triton since the server started', rows: [
      { id: 'requests', label: 'Requests (successful)' },
      { id: 'batch', label: 'Average batch size' },
    ] },
    { kind: 'list', id: 'gpus', heading: 'GPUs', group: 'gpu' },
    { kind: 'charts', id: 'gpuCharts', heading: 'GPUs (last 3 minutes)', group: 'gpu', charts: [{ id: 'gpuUtilizationPct', label: 'GPU utilisation %' }] },
  ],
  chart: { width: 240, height: 40 },
  collecting: 'collecting…',
  axis: { start: '3 min ago', end: 'now' },
  hidden: ['gpu'],
});

const UPDATE = hostMessage({
  type: 'update',
  figures: { activeRows: '3', tritonPending: '0', requests: '4', batch: '2' },
  series: { activeRows: { d: 'M0 40L2.7 0', last: '3', top: '5 rows', empty: false }, generatedTokensPerSecond: { d: 'M0 40L2.7 20', last: '81.5', top: '200 tokens/s', empty: false } },
  lists: { gpus: [] },
  hidden: ['gpu'],
  note: 'The server reports no GPU metrics.',
});

const pageText = (panel: Panel, selector: string) => panel.page.locator(selector).allTextContents();
const visible = (panel: Panel, selector: string) => panel.page.locator(selector).isVisible();

const closePage = (panel: Panel) => closeChecked(panel, 'the page works without violating its CSP');

describe('status webview', () => {
  it('asks for its layout, builds its sections, writes the figures of each update and hides what the server lacks', async () => {
    const panel = await harness.open({ page: 'status' });
    const { page } = panel;
    assert.deepEqual(await panel.posted(), [{ type: 'ready' }]);
    assert.match(await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content') ?? '', /default-src 'none'; script-src 'nonce-/);
    await panel.send(LAYOUT);
    assert.equal(await page.textContent('h1'), 'Triton statistics for chatglm3-6b');
    assert.deepEqual(await pageText(panel, 'h2'), ['Now', 'Continuous batching', 'Triton since the server started', 'GPUs', 'GPUs (last 3 minutes)']);
    assert.deepEqual(await pageText(panel, '#section-now th'), ['Answers being written', 'Requests in Triton\'s queue']);
    // A label with help: its tooltip and accessible description, reachable by the keyboard, marked as explained.
    const help = 'Answers the server is writing right now, for every window.';
    for (const label of [page.locator('#section-now th .has-help'), page.locator('#chart-activeRows figcaption .has-help')]) {
      assert.deepEqual(await label.evaluate((e) => [e.textContent, e.getAttribute('title'), e.getAttribute('aria-description'), e.getAttribute('tabindex'), getComputedStyle(e).textDecorationStyle]),
        ['Answers being written', help, help, '0', 'dotted']);
    }
    assert.equal(await page.locator('#section-now th').nth(1).locator('.has-help').count(), 0, 'no tooltip where the host gave no help');
    assert.deepEqual(await pageText(panel, '.figures td'), ['–', '–', '–', '–'], 'no value until the first update');
    assert.equal(await page.getAttribute('#chart-activeRows svg', 'viewBox'), '0 0 240 40');
    assert.equal(await visible(panel, '#section-gpus'), false, 'the GPU list is hidden from the start (the layout says so)');
    assert.equal(await visible(panel, '#chart-gpuUtilizationPct'), false, 'and so are the GPU charts');

    await panel.send(UPDATE);
    assert.deepEqual(await pageText(panel, '.figures td'), ['3', '0', '4', '2']);
    assert.equal(await page.getAttribute('#path-activeRows', 'd'), 'M0 40L2.7 0');
    assert.deepEqual(await pageText(panel, '#section-schedulerCharts .chart .last'), ['3', '81.5']);
    assert.equal(await page.textContent('#note'), 'The server reports no GPU metrics.');
    assert.equal(await visible(panel, '#section-gpuCharts'), false);

    // A server with GPUs: the GPU section appears with its lines.
    await panel.send(hostMessage({ ...UPDATE, lists: { gpus: ['GPU-1: 50% busy, 1 of 80 GiB used'] }, hidden: [], note: '' }));
    assert.equal(await visible(panel, '#section-gpus'), true);
    assert.equal(await visible(panel, '#chart-gpuUtilizationPct'), true);
    assert.deepEqual(await pageText(panel, '#list-gpus li'), ['GPU-1: 50% busy, 1 of 80 GiB used']);

    // The hf engine publishes no scheduler figures: its rows, charts and section go, Triton's stay.
    await panel.send(hostMessage({ ...UPDATE, hidden: ['scheduler', 'gpu'] }));
    assert.equal(await visible(panel, '#section-schedulerCharts'), false);
    assert.equal(await visible(panel, '#figure-activeRows'), false, 'the scheduler row of the Now table');
    assert.equal(await visible(panel, '#figure-tritonPending'), true);
    assert.equal(await visible(panel, '#section-tritonTotals'), true);

    // No server: the figures shown stay, the lists empty, the note says why.
    await panel.send(hostMessage({ type: 'update', figures: {}, series: {}, lists: { gpus: [] }, hidden: ['scheduler', 'gpu'], note: 'The server is not running.' }));
    assert.deepEqual(await pageText(panel, '#section-tritonTotals td'), ['4', '2']);
    assert.equal(await page.getAttribute('#path-activeRows', 'd'), 'M0 40L2.7 0');
    assert.equal(await page.locator('#list-gpus li').count(), 0);
    assert.equal(await page.textContent('#note'), 'The server is not running.');
    await closePage(panel);
  });

  it('applies an update that arrives before the layout once the layout comes', async () => {
    const panel = await harness.open({ page: 'status' });
    await panel.send(UPDATE);
    await panel.send(LAYOUT);
    assert.deepEqual(await pageText(panel, '.figures td'), ['3', '0', '4', '2']);
    await closePage(panel);
  });

  it('ignores messages the protocol rejects', async () => {
    const panel = await harness.open({ page: 'status' });
    const { page } = panel;
    await panel.send(LAYOUT);
    await panel.send(UPDATE);
    const hostile: Record<string, unknown>[] = [
      { ...UPDATE, series: { activeRows: { d: 'M0 0" onload="alert(1)', last: '1', top: '1 rows', empty: false } } },
      { ...UPDATE, series: { activeRows: { d: 'M0 0', last: '1' } } },
      { ...UPDATE, figures: { requests: 'x'.repeat(1000) } },
      { ...UPDATE, figures: JSON.parse('{"__proto__": "9"}') },
      { ...UPDATE, hidden: ['a b'] },
      { ...UPDATE, lists: { gpus: ['x'.repeat(1000)] } },
      { ...UPDATE, extra: true },
      { type: 'update', figures: { requests: '99' } },
      { type: 'layout', title: '<img src=x>' },
      { ...LAYOUT, sections: [{ kind: 'iframe', id: 'x', heading: 'x' }] },
      { type: 'script', code: 'alert(1)' },
    ];
    for (const m of hostile) {
      assert.ok(isProtocolError(parseHostToStatusView(m)), `the protocol rejects ${JSON.stringify(m).slice(0, 80)}`);
      await panel.send(m);
    }
    assert.deepEqual(await pageText(panel, '.figures td'), ['3', '0', '4', '2']);
    assert.equal(await page.getAttribute('#path-activeRows', 'd'), 'M0 40L2.7 0');
    assert.equal(await page.textContent('h1'), 'Triton statistics for chatglm3-6b');
    await closePage(panel);
  });

  it('charts: a y axis from 0 to the top with its unit, the x axis, "collecting…" until a value; fits 300 px', async () => {
    const panel = await harness.open({ page: 'status' });
    const { page } = panel;
    await page.setViewportSize({ width: 300, height: 900 });
    await panel.send(LAYOUT);
    assert.equal(await visible(panel, '#collecting-activeRows'), true, 'collecting… before the first update');
    assert.equal(await page.textContent('#collecting-activeRows'), 'collecting…');
    assert.deepEqual(await pageText(panel, '#chart-activeRows .axis-x span'), ['3 min ago', 'now']);
    await panel.send(hostMessage({ ...UPDATE, series: { activeRows: { d: '', last: '–', top: '1 rows', empty: true }, generatedTokensPerSecond: { d: 'M0 40L2.7 20', last: '81.5', top: '200 tokens/s', empty: false } } }));
    assert.equal(await visible(panel, '#collecting-activeRows'), true, 'still collecting: no value yet');
    assert.equal(await visible(panel, '#collecting-generatedTokensPerSecond'), false, 'a chart with a value draws it');
    assert.deepEqual(await pageText(panel, '#chart-generatedTokensPerSecond .axis-y span'), ['200 tokens/s', '0']);
    await panel.send(UPDATE);
    assert.equal(await visible(panel, '#collecting-activeRows'), false);
    assert.equal(await page.textContent('#top-activeRows'), '5 rows');
    // At a side bar's width every chart, its axis labels and the figures stay inside the page.
    const overflow = await page.evaluate(() => Array.from(document.querySelectorAll('.chart, .chart .axis-y, .chart .plot, .figures'))
      .filter((e) => (e as HTMLElement).offsetParent).filter((e) => e.getBoundingClientRect().right > window.innerWidth).map((e) => e.className || e.tagName));
    assert.deepEqual(overflow, []);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no sideways scrolling');
    const plot = (await page.locator('#chart-generatedTokensPerSecond .plot').boundingBox())!;
    assert.ok(plot.width > 150, `the plot uses the width (${plot.width} px)`);
    const dir = join(__dirname, '../../test-results/webview');
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, 'status-panel-300.png'), fullPage: true });
    await closePage(panel);
  });

  it('looks right with a full layout under load (screenshot for review)', async () => {
    const panel = await harness.open({ page: 'status' });
    const { page } = panel;
    await page.setViewportSize({ width: 900, height: 1000 });
    await panel.send(LAYOUT);
    const rising = Array.from({ length: 40 }, (_, i) => `${i === 0 ? 'M' : 'L'}${(i * 2.7).toFixed(1)} ${(40 - Math.min(40, i * 1.5)).toFixed(1)}`).join('');
    await panel.send(hostMessage({ ...UPDATE, series: { activeRows: { d: rising, last: '3', top: '5 rows', empty: false }, generatedTokensPerSecond: { d: rising, last: '81.5', top: '100 tokens/s', empty: false } } }));
    const dir = join(__dirname, '../../test-results/webview');
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, 'status-panel.png'), fullPage: true });
    // Nothing of a figure is cut off: every chart fits the page's width.
    const widths = await page.locator('.chart').evaluateAll((els) => els.filter((e) => (e as HTMLElement).offsetParent).map((e) => e.getBoundingClientRect().right));
    assert.ok(widths.every((r) => r <= 900), `charts inside the page: ${widths.join(', ')}`);
    await closePage(panel);
  });
});
