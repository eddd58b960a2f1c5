// The Server Status view bundle in headless Chromium, under the extension's CSP, driven through its protocol:
// the page asks for its layout, builds the totals table and sparklines from it, writes each update's figures,
// and ignores what the protocol rejects.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isProtocolError, parseHostToStatusView, type HostToStatusView } from '../../src/protocol';
import { startHarness, type Harness, type Panel } from './support/harness';

let harness: Harness;
before(async () => { harness = await startHarness(); });
after(async () => { await harness?.close(); });

/** A message as the host sends it: checked against the protocol first, so the test cannot drift from it. */
function hostMessage(m: HostToStatusView): HostToStatusView {
  const parsed = parseHostToStatusView(m);
  assert.ok(!isProtocolError(parsed), JSON.stringify(parsed));
  return m;
}

const LAYOUT = hostMessage({
  type: 'layout',
  title: 'Triton statistics for chatglm3-6b',
  headings: { totals: 'Since the server started', charts: 'Last 3 minutes (every 2 s)', gpus: 'GPUs' },
  totals: [{ id: 'requests', label: 'Requests (successful)' }, { id: 'batch', label: 'Average batch size' }],
  charts: [{ id: 'requestsPerSecond', label: 'Requests per second' }, { id: 'gpuUtilizationPct', label: 'GPU utilisation %' }],
  chart: { width: 240, height: 40 },
});

const UPDATE = hostMessage({
  type: 'update',
  totals: { requests: '4', batch: '2' },
  series: { requestsPerSecond: { d: 'M0 40L2.7 20', last: '0.5' }, gpuUtilizationPct: { d: '', last: '–' } },
  gpus: ['GPU-1: 50% busy, 1 of 80 GiB used'],
  note: 'The server reports no GPU metrics.',
});

const pageText = (panel: Panel, selector: string) => panel.page.locator(selector).allTextContents();

async function closePage(panel: Panel): Promise<void> {
  assert.deepEqual(panel.errors, [], 'no page errors');
  assert.deepEqual(await panel.cspViolations(), [], 'the page works without violating its CSP');
  await panel.page.close();
}

describe('status webview', () => {
  it('asks for its layout, builds it, and writes the figures of each update', async () => {
    const panel = await harness.open({ page: 'status' });
    const { page } = panel;
    assert.deepEqual(await panel.posted(), [{ type: 'ready' }]);
    assert.match(await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content') ?? '', /default-src 'none'; script-src 'nonce-/);
    await panel.send(LAYOUT);
    assert.equal(await page.textContent('h1'), 'Triton statistics for chatglm3-6b');
    assert.deepEqual(await pageText(panel, 'h2'), ['Since the server started', 'Last 3 minutes (every 2 s)', 'GPUs']);
    assert.deepEqual(await pageText(panel, '.totals th'), ['Requests (successful)', 'Average batch size']);
    assert.deepEqual(await pageText(panel, '.totals td'), ['–', '–'], 'no value until the first update');
    assert.equal(await page.getAttribute('.chart svg', 'viewBox'), '0 0 240 40');

    await panel.send(UPDATE);
    assert.deepEqual(await pageText(panel, '.totals td'), ['4', '2']);
    assert.equal(await page.getAttribute('#path-requestsPerSecond', 'd'), 'M0 40L2.7 20');
    assert.deepEqual(await pageText(panel, '.chart .last'), ['0.5', '–']);
    assert.deepEqual(await pageText(panel, '#gpus li'), ['GPU-1: 50% busy, 1 of 80 GiB used']);
    assert.equal(await page.textContent('#note'), 'The server reports no GPU metrics.');

    // No server: the figures shown stay, the GPU list empties, the note says why.
    await panel.send(hostMessage({ type: 'update', totals: {}, series: {}, gpus: [], note: 'The server is not running.' }));
    assert.deepEqual(await pageText(panel, '.totals td'), ['4', '2']);
    assert.equal(await page.getAttribute('#path-requestsPerSecond', 'd'), 'M0 40L2.7 20');
    assert.equal(await page.locator('#gpus li').count(), 0);
    assert.equal(await page.textContent('#note'), 'The server is not running.');
    await closePage(panel);
  });

  it('applies an update that arrives before the layout once the layout comes', async () => {
    const panel = await harness.open({ page: 'status' });
    await panel.send(UPDATE);
    await panel.send(LAYOUT);
    assert.deepEqual(await pageText(panel, '.totals td'), ['4', '2']);
    await closePage(panel);
  });

  it('ignores messages the protocol rejects', async () => {
    const panel = await harness.open({ page: 'status' });
    const { page } = panel;
    await panel.send(LAYOUT);
    await panel.send(UPDATE);
    const hostile: Record<string, unknown>[] = [
      { ...UPDATE, series: { requestsPerSecond: { d: 'M0 0" onload="alert(1)', last: '1' } } },
      { ...UPDATE, totals: { requests: 'x'.repeat(1000) } },
      { ...UPDATE, totals: JSON.parse('{"__proto__": "9"}') },
      { ...UPDATE, extra: true },
      { type: 'update', totals: { requests: '99' } },
      { type: 'layout', title: '<img src=x>' },
      { type: 'script', code: 'alert(1)' },
    ];
    for (const m of hostile) {
      assert.ok(isProtocolError(parseHostToStatusView(m)), `the protocol rejects ${JSON.stringify(m).slice(0, 80)}`);
      await panel.send(m);
    }
    assert.deepEqual(await pageText(panel, '.totals td'), ['4', '2']);
    assert.equal(await page.getAttribute('#path-requestsPerSecond', 'd'), 'M0 40L2.7 20');
    assert.equal(await page.textContent('h1'), 'Triton statistics for chatglm3-6b');
    await closePage(panel);
  });
});
