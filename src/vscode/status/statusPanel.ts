// Show Server Status: a small webview panel with Triton's statistics for the model and the GPU figures from the
// metrics port. The host polls every 2 s while the panel is visible and posts plain data; the page has no
// network access (CSP) and only writes text and SVG path attributes.
import * as vscode from 'vscode';
import { MODEL_NAME } from '../../core/repository';
import type { TritonClient } from '../../core/triton';
import type { Log } from '../log';
import type { ServerController } from '../server/serverController';
import { buildWebviewHtml, makeNonce } from '../webviewHtml';
import { gpuFigures, point, SERIES, sparklinePath, StatusHistory, totals, type SeriesName, type StatusSample } from '../../core/status/statusModel';

const REFRESH_MS = 2_000;
const CHART_W = 240;
const CHART_H = 40;

/** The page's whole script: fills text and SVG paths from the host's messages. Static; no data is inlined. */
const PAGE_SCRIPT = `(function () {
  var byId = function (id) { return document.getElementById(id); };
  var PATH = /^[ML0-9 .\\-]*$/;
  window.addEventListener('message', function (ev) {
    var m = ev.data;
    if (!m || m.type !== 'update') return;
    Object.keys(m.totals || {}).forEach(function (k) { var el = byId('total-' + k); if (el) el.textContent = String(m.totals[k]); });
    Object.keys(m.series || {}).forEach(function (k) {
      var s = m.series[k] || {};
      var p = byId('path-' + k); if (p) p.setAttribute('d', typeof s.d === 'string' && PATH.test(s.d) ? s.d : '');
      var v = byId('last-' + k); if (v) v.textContent = String(s.last == null ? '' : s.last);
    });
    var g = byId('gpus');
    if (g) {
      while (g.firstChild) g.removeChild(g.firstChild);
      (m.gpus || []).forEach(function (t) { var li = document.createElement('li'); li.textContent = String(t); g.appendChild(li); });
    }
    var n = byId('note'); if (n) n.textContent = m.note ? String(m.note) : '';
  });
})();`;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export class StatusPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly history = new StatusHistory(90);
  private previous: StatusSample | undefined;
  private polling = false;
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly number: Intl.NumberFormat;

  constructor(private readonly extensionUri: vscode.Uri, private readonly server: ServerController, private readonly log: Log) {
    this.number = new Intl.NumberFormat(vscode.env.language, { maximumFractionDigits: 2 });
    // Another server (restart, reconnect): counters start again, so old points would draw a false cliff.
    this.subscriptions.push(server.onDidChangeClient(() => { this.previous = undefined; this.history.clear(); }));
  }

  show(): void {
    if (this.panel) {
      this.panel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel('tritonChatglm.status', vscode.l10n.t('ChatGLM3 Server Status'), vscode.ViewColumn.Beside, {
      enableScripts: true,
      enableCommandUris: false,
      retainContextWhenHidden: false,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media')],
    });
    this.panel = panel;
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'icons', 'chatglm.svg');
    panel.webview.html = this.html(panel.webview);
    const viewState = panel.onDidChangeViewState(() => this.schedule());
    const disposed = panel.onDidDispose(() => {
      viewState.dispose();
      disposed.dispose();
      this.panel = undefined;
      this.schedule();
    });
    this.schedule();
  }

  /** Polls only while the panel is visible. */
  private schedule(): void {
    const visible = this.panel?.visible ?? false;
    if (visible && !this.timer) {
      this.timer = setInterval(() => void this.refresh(), REFRESH_MS);
      void this.refresh();
    } else if (!visible && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async refresh(): Promise<void> {
    const panel = this.panel;
    if (!panel || this.polling) return;
    this.polling = true;
    try {
      const client = this.server.tritonClient;
      if (!client) {
        void panel.webview.postMessage({ type: 'update', note: vscode.l10n.t('The server is not running.') });
        return;
      }
      const { sample, notes } = await this.sample(client);
      this.history.push(point(this.previous, sample));
      this.previous = sample;
      void panel.webview.postMessage(this.update(sample, notes));
    } finally {
      this.polling = false;
    }
  }

  private async sample(client: TritonClient): Promise<{ sample: StatusSample; notes: string[] }> {
    const notes: string[] = [];
    const sample: StatusSample = { at: Date.now(), gpus: [] };
    const [stats, metrics] = await Promise.allSettled([
      client.modelStatistics(MODEL_NAME, { timeoutMs: 1_500 }),
      client.metricsUrl ? client.metrics({ timeoutMs: 1_500 }) : Promise.reject(new Error('no metrics URL')),
    ]);
    if (stats.status === 'fulfilled') {
      const own = stats.value.find((s) => s.name === MODEL_NAME);
      if (own) sample.stats = own;
    } else {
      notes.push(vscode.l10n.t('Statistics unavailable (is the model loaded?).'));
      this.log.debug(`status: statistics: ${String(stats.reason)}`);
    }
    if (metrics.status === 'fulfilled') {
      sample.gpus = gpuFigures(metrics.value);
      if (sample.gpus.length === 0) notes.push(vscode.l10n.t('The server reports no GPU metrics.'));
    } else {
      notes.push(vscode.l10n.t('GPU metrics unavailable.'));
    }
    return { sample, notes };
  }

  private update(sample: StatusSample, notes: string[]): unknown {
    const f = (n: number | null | undefined) => (n === null || n === undefined ? '–' : this.number.format(n));
    const t = totals(sample.stats);
    const series: Record<string, { d: string; last: string }> = {};
    for (const name of SERIES) {
      const values = this.history.series(name);
      const minMax = name === 'gpuUtilizationPct' ? 100 : name === 'batchSize' ? 1 : 0.001;
      series[name] = { d: sparklinePath(values, CHART_W, CHART_H, this.history.capacity, minMax), last: f(values.at(-1)) };
    }
    const gib = (b: number) => this.number.format(b / 1024 ** 3);
    return {
      type: 'update',
      totals: t ? {
        requests: f(t.requests), failures: f(t.failures), executions: f(t.executions),
        batch: f(t.averageBatchSize), queue: f(t.queueMsPerRequest), compute: f(t.computeMsPerRequest),
      } : {},
      series,
      gpus: sample.gpus.map((g) => vscode.l10n.t('{0}: {1}% busy, {2} of {3} GiB used', g.id, f(g.utilizationPct), gib(g.memoryUsedBytes), gib(g.memoryTotalBytes))),
      note: notes.join(' '),
    };
  }

  private html(webview: vscode.Webview): string {
    const totalsRows: [string, string][] = [
      ['requests', vscode.l10n.t('Requests (successful)')],
      ['failures', vscode.l10n.t('Failed requests')],
      ['executions', vscode.l10n.t('Executions (batches)')],
      ['batch', vscode.l10n.t('Average batch size')],
      ['queue', vscode.l10n.t('Queue time per request (ms)')],
      ['compute', vscode.l10n.t('Compute time per request (ms)')],
    ];
    const charts: [SeriesName, string][] = [
      ['requestsPerSecond', vscode.l10n.t('Requests per second')],
      ['batchSize', vscode.l10n.t('Batch size')],
      ['queueMs', vscode.l10n.t('Queue ms per request')],
      ['computeMs', vscode.l10n.t('Compute ms per request')],
      ['gpuUtilizationPct', vscode.l10n.t('GPU utilisation %')],
      ['gpuMemoryUsedGiB', vscode.l10n.t('GPU memory used (GiB)')],
    ];
    const body = `  <h1>${esc(vscode.l10n.t('Triton statistics for {0}', MODEL_NAME))}</h1>
  <p id="note" class="note" role="status"></p>
  <h2>${esc(vscode.l10n.t('Since the server started'))}</h2>
  <table class="totals">
${totalsRows.map(([id, label]) => `    <tr><th scope="row">${esc(label)}</th><td id="total-${id}">–</td></tr>`).join('\n')}
  </table>
  <h2>${esc(vscode.l10n.t('Last 3 minutes (every 2 s)'))}</h2>
  <div class="charts">
${charts.map(([id, label]) => `    <figure class="chart">
      <figcaption>${esc(label)} <span class="last" id="last-${id}">–</span></figcaption>
      <svg viewBox="0 0 ${CHART_W} ${CHART_H}" width="${CHART_W}" height="${CHART_H}" role="img" aria-label="${esc(label)}"><path id="path-${id}" fill="none" stroke="currentColor" stroke-width="1.5" d=""/></svg>
    </figure>`).join('\n')}
  </div>
  <h2>${esc(vscode.l10n.t('GPUs'))}</h2>
  <ul id="gpus"></ul>`;
    return buildWebviewHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      title: vscode.l10n.t('ChatGLM3 Server Status'),
      lang: vscode.env.language,
      styles: [webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'status-panel.css')).toString()],
      scripts: [],
      inlineScript: PAGE_SCRIPT,
      body,
    });
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const d of this.subscriptions) d.dispose();
    this.panel?.dispose();
    this.panel = undefined;
  }
}
