// Show Server Status: a webview panel (the bundle dist/status.js, src/webview/status) with what the server is doing
// now (the continuous scheduler's rows and queue, from the metrics port), its rates, Triton's statistics for the
// model, the GPU figures and this window's own requests. The host polls every 2 s while the panel is visible (and
// at once when this window starts or ends an answer) and posts the figures as protocol messages
// (src/protocol/statusMessages.ts); the page has no network access (CSP).
import * as vscode from 'vscode';
import { modelTitle } from '../../core/models/choice';
import type { ActivityBoard } from '../../core/status/activity';
import { metricsFigures, point, StatusHistory, type StatusSample } from '../../core/status/statusModel';
import { NoReplicaList, replicaHealthVia } from '../../core/team';
import type { TritonClient } from '../../core/triton';
import { isProtocolError, parseHostToStatusView, parseStatusViewToHost, type HostToStatusView, type StatusUpdate } from '../../protocol';
import type { Log } from '../log';
import type { ServerController } from '../server/serverController';
import { buildWebviewHtml, makeNonce } from '../webviewHtml';
import { activityUpdate, FigureFormat, hiddenGroups, noServerUpdate, statusLayout, statusUpdate } from './statusFigures';

const REFRESH_MS = 2_000;
const REQUEST_TIMEOUT_MS = 1_500;
/** Dropped messages logged per panel, so a broken page is visible without flooding the log. */
const MAX_DROPPED_LOGGED = 20;

export class StatusPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly history = new StatusHistory(90);
  private previous: StatusSample | undefined;
  private polling = false;
  /** The client whose server has no replica list (not a team proxy): not asked again until the client changes. */
  private notTeam: TritonClient | undefined;
  /** The last update posted: an activity update repeats its note and hidden groups. */
  private last: StatusUpdate | undefined;
  private dropped = 0;
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly format = new FigureFormat(vscode.env.language);

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly server: ServerController,
    private readonly activity: ActivityBoard,
    private readonly log: Log,
  ) {
    // Another server (restart, reconnect): counters start again, so old points would draw a false cliff.
    this.subscriptions.push(server.onDidChangeClient(() => { this.previous = undefined; this.history.clear(); }));
    // An answer started or ended here: say so now rather than at the next tick (the charts keep their 2 s rhythm).
    const stopWatching = activity.onDidChange((snapshot) => { if (this.panel && this.last) this.post(activityUpdate(this.last, snapshot, this.format)); });
    this.subscriptions.push({ dispose: stopWatching });
  }

  show(): void {
    if (this.panel) {
      this.panel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel('tritonChatglm.status', vscode.l10n.t('ChatGLM Server Status'), vscode.ViewColumn.Beside, {
      enableScripts: true,
      enableCommandUris: false,
      retainContextWhenHidden: false,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')],
    });
    this.panel = panel;
    this.dropped = 0;
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'icons', 'chatglm.svg');
    panel.webview.html = this.html(panel.webview);
    const received = panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw));
    const viewState = panel.onDidChangeViewState(() => this.schedule());
    const disposed = panel.onDidDispose(() => {
      received.dispose();
      viewState.dispose();
      disposed.dispose();
      this.panel = undefined;
      this.schedule();
    });
    this.schedule();
  }

  /** The page (new each time the panel is shown again) says it listens: give it the layout and fresh figures. */
  private receive(raw: unknown): void {
    const message = parseStatusViewToHost(raw);
    if (isProtocolError(message)) {
      this.dropped++;
      if (this.dropped <= MAX_DROPPED_LOGGED) this.log.warn(`status view: dropped a message: ${message.error}`);
      return;
    }
    this.post(statusLayout(hiddenGroups(this.previous), modelTitle(this.server.modelName)));
    void this.refresh();
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
    if (!this.panel || this.polling) return;
    this.polling = true;
    try {
      const client = this.server.tritonClient;
      if (!client) {
        this.post(noServerUpdate(this.activity.snapshot, this.format));
        return;
      }
      const { sample, notes } = await this.sample(client);
      const previous = this.previous;
      this.history.push(point(previous, sample));
      this.previous = sample;
      this.post(statusUpdate(sample, this.history, this.activity.snapshot, notes, this.format, previous));
    } finally {
      this.polling = false;
    }
  }

  private async sample(client: TritonClient): Promise<{ sample: StatusSample; notes: string[] }> {
    const notes: string[] = [];
    const sample: StatusSample = { at: Date.now(), gpus: [] };
    const [stats, metrics, replicas] = await Promise.allSettled([
      client.modelStatistics(this.server.modelName, { timeoutMs: REQUEST_TIMEOUT_MS }),
      client.metricsUrl ? client.metrics({ timeoutMs: REQUEST_TIMEOUT_MS }) : Promise.reject(new Error('no metrics URL')),
      this.replicas(client),
    ]);
    if (replicas.status === 'fulfilled' && replicas.value) sample.replicas = replicas.value;
    else if (replicas.status === 'rejected') {
      notes.push(vscode.l10n.t('The team proxy did not say how its replicas are.'));
      this.log.debug(`status: team replicas: ${String(replicas.reason)}`);
    }
    if (stats.status === 'fulfilled') {
      const own = stats.value.find((s) => s.name === this.server.modelName);
      if (own) sample.stats = own;
    } else {
      notes.push(vscode.l10n.t('Statistics unavailable (is the model loaded?).'));
      this.log.debug(`status: statistics: ${String(stats.reason)}`);
    }
    if (metrics.status === 'fulfilled') {
      Object.assign(sample, metricsFigures(metrics.value, this.server.modelName));
      if (!sample.scheduler) notes.push(vscode.l10n.t('The server publishes no continuous-batching figures (the hf engine, or a model without them).'));
      if (sample.gpus.length === 0) notes.push(vscode.l10n.t('The server reports no GPU metrics.'));
    } else if (!client.metricsUrl) {
      notes.push(vscode.l10n.t('No metrics address is set (tritonChatglm.externalMetricsUrl): no live figures and no GPU metrics.'));
    } else {
      notes.push(vscode.l10n.t('The metrics port did not answer: no live figures and no GPU metrics.'));
      this.log.debug(`status: metrics: ${String(metrics.reason)}`);
    }
    return { sample, notes };
  }

  /**
   * An external server may be a team proxy (docs/TEAM.md): its replicas' health, asked with the client's key and
   * CA. Undefined for our own container, and for a server without the list (plain Triton answers 400 or 404).
   */
  private async replicas(client: TritonClient) {
    if (this.server.serverHandle || this.notTeam === client) return undefined;
    try {
      return await replicaHealthVia((path) => client.getText(path, { timeoutMs: REQUEST_TIMEOUT_MS }));
    } catch (e) {
      if (!(e instanceof NoReplicaList) || e.status === 401 || e.status === 403) throw e;
      this.notTeam = client;
      return undefined;
    }
  }

  private post(message: HostToStatusView): void {
    if (message.type === 'update') this.last = message;
    // Our own messages must satisfy the schema the page enforces, or it would drop them silently.
    const checked = parseHostToStatusView(message);
    if (isProtocolError(checked)) {
      this.log.error(`status view: not sent: ${checked.error}`);
      return;
    }
    void this.panel?.webview.postMessage(message);
  }

  private html(webview: vscode.Webview): string {
    const asUri = (...path: string[]) => webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, ...path)).toString();
    return buildWebviewHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      title: vscode.l10n.t('ChatGLM Server Status'),
      lang: vscode.env.language,
      styles: [asUri('media', 'status-panel.css')],
      scripts: [asUri('dist', 'status.js')],
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
