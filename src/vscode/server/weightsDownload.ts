// "Download …" (the checklist's button, and ChatGLM: Download Weights) for the chosen model: a complete snapshot of
// it already in a Hugging Face cache is offered first (Use it); otherwise the revision is resolved and the user sees
// where the weights go, how much is free there, the source and the model's licence (accepted once per model where
// it limits commercial use) before anything is fetched. Then a cancellable
// progress notification (bytes, rate, time left) and `ChatGLM: downloading 41 %` in the status bar; at the end the
// weights setting is written where it applies (SettingsService.update, as Choose Weights Folder… does) and the
// settings change re-runs the checks. The policy is the core's (src/core/weights); the token lives in
// SecretStorage and goes nowhere but to the core.
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import type { CatalogModel } from '../../core/models/catalog';
import { chosenModelNow } from '../config/chosenModel';
import { chosenModel } from '../../core/models/choice';
import { licenseAcceptanceKey, licenseGate, licenseLanguage, licenseNotice } from '../../core/models/licenseGate';
import { cachedModelSnapshots, replacesWeightsSetting } from '../../core/server';
import {
  checkSpace, defaultHubCache, downloadWeights, formatBytes, hubCacheCandidates, hubUrl, isAbort,
  isDownloadError, parseEndpoint, planDownload, spaceMargin, type CachedSnapshot, type DownloadError, type DownloadEvent, type DownloadPlan,
} from '../../core/weights';
import { VSCODE_COMMANDS } from '../commandIds';
import type { SettingsService } from '../config/settingsService';
import type { Log } from '../log';

const TOKEN_KEY = 'tritonChatglm.hubToken';
const DOWNLOADING_KEY = 'tritonChatglm.downloadingWeights';

async function freeBytes(dir: string): Promise<number> {
  for (let probe = dir; ; probe = dirname(probe)) {
    try {
      const s = await statfs(probe);
      return Number(s.bavail) * Number(s.bsize);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(probe) === probe) throw e;
    }
  }
}

function eta(seconds: number | undefined): string {
  if (seconds === undefined) return '';
  if (seconds < 60) return vscode.l10n.t('{0} s left', seconds);
  if (seconds < 3600) return vscode.l10n.t('{0} min left', Math.round(seconds / 60));
  return vscode.l10n.t('{0} h {1} min left', Math.floor(seconds / 3600), Math.round((seconds % 3600) / 60));
}

/** The error of a download in the user's language (the English message is in the log; server text arrives escaped). */
export function downloadErrorText(e: DownloadError): string {
  const f = e.facts;
  switch (e.code) {
    case 'space-low':
      return vscode.l10n.t('Not enough free space in {0}: the download needs {1} more (plus {2} to spare), {3} is free. Free some space, or download on a disk with more room.',
        f.dir ?? '', formatBytes(f.neededBytes ?? 0), formatBytes(spaceMargin(f.neededBytes ?? 0)), formatBytes(f.freeBytes ?? 0));
    case 'hub-unauthorized': {
      const said = f.serverReason ? ` ${vscode.l10n.t('The server said: "{0}".', f.serverReason)}` : '';
      return (f.tokenSent
        ? vscode.l10n.t('{0} refused access to {1} although the Hugging Face token was sent: the token is not accepted for it, or the model\'s terms are not accepted on its page.', f.endpoint ?? '', f.repo ?? f.file ?? chosenModelNow().hub.repo)
        : vscode.l10n.t('{0} refused access to {1}: the repository is gated or private, or the token is not accepted. Set a Hugging Face token that can read it.', f.endpoint ?? '', f.repo ?? chosenModelNow().hub.repo)) + said;
    }
    case 'hub-not-found': return f.file
      ? vscode.l10n.t('{0} was not found on the Hub.', f.file)
      : vscode.l10n.t('{0} has no {1} at revision "{2}". Check the tritonChatglm.weightsRevision and tritonChatglm.hubEndpoint settings.', f.endpoint ?? '', f.repo ?? chosenModelNow().hub.repo, f.revision ?? '');
    case 'hub-error': return vscode.l10n.t('The Hub answered something unexpected ({0}). Try again later, or set another endpoint.', e.message);
    case 'network': return vscode.l10n.t('The download failed on the network ({0}). What was received is kept: download again to resume.', e.message);
    case 'listing-refused': return vscode.l10n.t('The Hub\'s file list was refused as unsafe ({0}). Nothing was written.', f.file ?? '');
    case 'listing-too-long': return vscode.l10n.t('The Hub\'s file list did not end within its limit ({0}). Nothing was downloaded; use another endpoint.', e.message);
    case 'redirect-refused': return vscode.l10n.t('The Hub redirected to an insecure address; nothing was fetched from it. Use another endpoint.');
    case 'size-mismatch': return vscode.l10n.t('{0} does not have the size the Hub lists for it. Try again later, or use another endpoint.', f.file ?? '');
    case 'checksum-mismatch': return vscode.l10n.t('{0} did not match its checksum from the Hub twice and was discarded. Try again later, or use another endpoint.', f.file ?? '')
      + (f.servedCommit ? ` ${vscode.l10n.t('The server said the file comes from commit {0}, not the one listed.', f.servedCommit)}` : '');
    case 'endpoint-invalid': return vscode.l10n.t('The tritonChatglm.hubEndpoint setting "{0}" is not an http(s) URL.', f.endpoint ?? '');
    case 'token-insecure': return vscode.l10n.t('The Hub endpoint {0} is plain http: the Hugging Face token would travel in cleartext, so nothing was sent. Set an https:// endpoint, or remove the token if the mirror is public.', f.endpoint ?? '');
  }
}

export class WeightsDownloader implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  /** Fired when a download starts or ends (the checklist shows the weights check as in progress meanwhile). */
  readonly onDidChange = this.emitter.event;
  private controller: AbortController | undefined;
  private statusItem: vscode.StatusBarItem | undefined;

  constructor(
    private readonly settings: SettingsService,
    private readonly secrets: vscode.SecretStorage | undefined,
    private readonly log: Log,
    /** Where accepted licences are remembered (globalState); none: asked at every download. */
    private readonly memory?: vscode.Memento,
  ) {}

  private get model(): CatalogModel {
    return chosenModel(this.settings.current.model);
  }

  get downloading(): boolean {
    return this.controller !== undefined;
  }

  cancel(): void {
    this.controller?.abort();
  }

  /** ChatGLM: Set Hugging Face Token… (empty clears it). Kept in SecretStorage only. */
  async setToken(): Promise<boolean> {
    if (!this.secrets) return false;
    const value = await vscode.window.showInputBox({
      title: vscode.l10n.t('Hugging Face Token'),
      prompt: vscode.l10n.t('A token that can read {0} (for gated or private repositories). It is kept in VS Code\'s secret storage. Leave empty to remove it.', this.model.hub.repo),
      placeHolder: 'hf_…',
      password: true,
      ignoreFocusOut: true,
    });
    if (value === undefined) return false;
    if (value.trim()) await this.secrets.store(TOKEN_KEY, value.trim());
    else await this.secrets.delete(TOKEN_KEY);
    this.log.info(value.trim() ? 'Hugging Face token stored in secret storage' : 'Hugging Face token removed');
    return value.trim() !== '';
  }

  /** The whole flow; resolves with the weights folder now set, or undefined. */
  async run(): Promise<string | undefined> {
    if (this.controller) return undefined;
    const model = this.model;
    const existing = await this.offerCached(model);
    if (existing !== 'download') return existing;
    const s = this.settings.current;
    const cacheDir = defaultHubCache(process.env);
    let endpoint: URL;
    try {
      endpoint = parseEndpoint(s.hubEndpoint);
    } catch (e) {
      if (isDownloadError(e)) void vscode.window.showErrorMessage(downloadErrorText(e));
      return undefined;
    }
    const token = (await this.secrets?.get(TOKEN_KEY)) || undefined;
    const options = { model, cacheDir, revision: s.weightsRevision, endpoint: hubUrl(endpoint), ...(token ? { token } : {}) };
    let plan: DownloadPlan;
    let free: number;
    try {
      plan = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Asking {0} for {1}…', endpoint.host, model.displayName) }, () => planDownload(options, { endpoint, ...(token ? { token } : {}) }));
      free = await freeBytes(cacheDir);
      await checkSpace(plan, cacheDir, async () => free);
    } catch (e) {
      return this.failed(e);
    }
    if (!(await this.confirm(model, plan, endpoint, cacheDir, free))) return undefined;
    return this.fetch(options);
  }

  /** Writes the folder into weightsPath unless that holds another model's checkpoint (then the cache finds it). */
  private async useWeights(model: CatalogModel, dir: string): Promise<void> {
    if (await replacesWeightsSetting(this.settings.current.weightsPath, model)) {
      await this.settings.update('weightsPath', dir);
      this.log.info(`weightsPath set to ${dir}`);
    } else {
      this.log.info(`weightsPath left on ${this.settings.current.weightsPath} (another model's checkpoint); ${model.displayName} is found in the Hugging Face cache: ${dir}`);
    }
  }

  /** A complete snapshot already in a Hub cache: Use it (no request), or download anyway. */
  private async offerCached(model: CatalogModel): Promise<string | undefined | 'download'> {
    let found: CachedSnapshot[] = [];
    try {
      found = await cachedModelSnapshots(model, hubCacheCandidates(process.env));
    } catch (e) {
      this.log.warn(`looking for ${model.displayName} in the Hugging Face cache failed: ${(e as Error).message}`);
    }
    const best = found[0];
    if (!best) return 'download';
    const use = vscode.l10n.t('Use it');
    const again = vscode.l10n.t('Download Anyway');
    const tested = model.hub.testedCommit;
    const newer = tested !== null && best.commit !== tested ? ` ${vscode.l10n.t('It is a newer snapshot than the one tested.')}` : '';
    const picked = await vscode.window.showInformationMessage(
      vscode.l10n.t('{0} is already in the Hugging Face cache: {1}.', model.displayName, best.snapshotDir) + newer, use, again);
    if (picked === use) {
      await this.useWeights(model, best.snapshotDir);
      return best.snapshotDir;
    }
    return picked === again ? 'download' : undefined;
  }

  private async confirm(model: CatalogModel, plan: DownloadPlan, endpoint: URL, cacheDir: string, free: number): Promise<boolean> {
    const left = plan.totalBytes - plan.presentBytes;
    const lines = [
      vscode.l10n.t('From: {0} ({1} at {2}, commit {3})', endpoint.origin + endpoint.pathname.replace(/\/$/, ''), plan.repo, plan.revision, plan.commit.slice(0, 12)),
      vscode.l10n.t('Into: {0} (the Hugging Face cache)', cacheDir),
      vscode.l10n.t('Free there: {0}', formatBytes(free)),
    ];
    if (plan.presentBytes > 0) lines.push(vscode.l10n.t('Resuming: {0} of {1} already here.', formatBytes(plan.presentBytes), formatBytes(plan.totalBytes)));
    if (plan.newerThanTested) lines.push(vscode.l10n.t('This is a newer snapshot than the one tested; it is used all the same.'));
    // The licence, in VS Code's language; one that limits commercial use is accepted once per model.
    const license = licenseNotice(model, licenseLanguage(vscode.env.language));
    lines.push('', vscode.l10n.t('Licence: {0} ({1})', license.name, license.url), license.keyTerms);
    const key = licenseAcceptanceKey(model);
    const ask = licenseGate(model, this.memory?.get<boolean>(key) === true) === 'ask';
    if (ask) lines.push(vscode.l10n.t('Downloading means accepting this licence (asked once for {0}).', model.displayName));
    const go = ask ? vscode.l10n.t('Accept Licence and Download') : vscode.l10n.t('Download');
    const read = vscode.l10n.t('Read Licence');
    for (;;) {
      const picked = await vscode.window.showInformationMessage(
        vscode.l10n.t('Download {0} ({1})?', model.displayName, formatBytes(left)),
        { modal: true, detail: lines.join('\n') },
        go, read,
      );
      if (picked === read) {
        await vscode.env.openExternal(vscode.Uri.parse(license.url));
        continue;
      }
      if (picked !== go) return false;
      if (ask) {
        await this.memory?.update(key, true);
        this.log.info(`licence of ${model.id} accepted: ${license.name} (${license.url})`);
      }
      return true;
    }
  }

  private setDownloading(on: boolean): void {
    void vscode.commands.executeCommand(VSCODE_COMMANDS.setContext, DOWNLOADING_KEY, on);
    if (on) {
      this.statusItem ??= vscode.window.createStatusBarItem('tritonChatglm.weightsDownload', vscode.StatusBarAlignment.Left, 99);
      this.statusItem.name = vscode.l10n.t('{0} Download', this.model.displayName);
      this.statusItem.text = `$(cloud-download) ${vscode.l10n.t('ChatGLM: downloading {0} %', 0)}`;
      this.statusItem.show();
    } else {
      this.statusItem?.dispose();
      this.statusItem = undefined;
    }
    this.emitter.fire();
  }

  private async fetch(options: { model: CatalogModel; cacheDir: string; revision: string; endpoint: string; token?: string }): Promise<string | undefined> {
    const model = options.model;
    const controller = new AbortController();
    this.controller = controller;
    this.setDownloading(true);
    this.log.info(`weights download: ${model.hub.repo}@${options.revision || model.hub.revision} from ${options.endpoint} into ${options.cacheDir}`);
    try {
      const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Downloading {0}', model.displayName), cancellable: true }, async (progress, cancel) => {
        cancel.onCancellationRequested(() => controller.abort());
        let lastPct = 0;
        const onEvent = (e: DownloadEvent) => {
          this.logEvent(e);
          if (e.type !== 'progress') return;
          const pct = e.totalBytes ? Math.floor((e.doneBytes / e.totalBytes) * 100) : 100;
          const parts = [
            vscode.l10n.t('{0} of {1}', formatBytes(e.doneBytes), formatBytes(e.totalBytes)),
            e.bytesPerSecond !== undefined ? vscode.l10n.t('{0}/s', formatBytes(e.bytesPerSecond)) : '',
            eta(e.secondsLeft),
          ].filter(Boolean);
          progress.report({ message: parts.join(' · '), increment: Math.max(0, pct - lastPct) });
          lastPct = Math.max(lastPct, pct);
          if (this.statusItem) {
            this.statusItem.text = `$(cloud-download) ${vscode.l10n.t('ChatGLM: downloading {0} %', pct)}`;
            this.statusItem.tooltip = parts.join(' · ');
          }
        };
        return downloadWeights({ ...options, signal: controller.signal, onEvent });
      });
      await this.useWeights(model, result.snapshotDir);
      this.log.info(`weights download complete: ${result.snapshotDir} (commit ${result.commit}, ${formatBytes(result.fetchedBytes)} fetched)${result.newerThanTested ? '; a newer snapshot than the one tested' : ''}`);
      const newer = result.newerThanTested ? ` ${vscode.l10n.t('It is a newer snapshot than the one tested.')}` : '';
      void vscode.window.showInformationMessage(vscode.l10n.t('{0} is downloaded and verified: {1}.', model.displayName, result.snapshotDir) + newer);
      return result.snapshotDir;
    } catch (e) {
      return this.failed(e);
    } finally {
      this.controller = undefined;
      this.setDownloading(false);
    }
  }

  private logEvent(e: DownloadEvent): void {
    switch (e.type) {
      case 'resolved':
        this.log.info(`weights download: commit ${e.plan.commit}, ${e.plan.files.length} files (${e.plan.format}), ${formatBytes(e.plan.totalBytes)}${e.plan.presentBytes ? `; resuming: ${formatBytes(e.plan.presentBytes)} of ${formatBytes(e.plan.totalBytes)} already here` : ''}${e.plan.newerThanTested ? '; a newer snapshot than the one tested' : ''}`);
        if (e.plan.ignored) this.log.debug(`weights download: ${e.plan.ignored} entries of the file list are not downloaded (other folders and files)`);
        return;
      case 'file-done': this.log.info(`weights download: ${e.file} verified`); return;
      case 'retry': this.log.warn(`weights download: ${e.file}: ${e.reason}; retry ${e.attempt} in ${e.delayMs} ms`); return;
      case 'verify-failed': this.log.warn(`weights download: ${e.file} did not match its checksum; fetching it once more`); return;
      default: return;
    }
  }

  private async failed(e: unknown): Promise<string | undefined> {
    if (isAbort(e)) {
      this.log.info('weights download cancelled; partial files kept');
      void vscode.window.showInformationMessage(vscode.l10n.t('Download cancelled. What was received is kept: download again to continue where it stopped.'));
      return undefined;
    }
    if (!isDownloadError(e)) {
      this.log.error('weights download failed', e);
      void vscode.window.showErrorMessage(vscode.l10n.t('The download failed: {0}', (e as Error)?.message ?? String(e)));
      return undefined;
    }
    this.log.warn(`weights download failed [${e.code}]: ${e.message}`);
    if (e.code === 'hub-unauthorized' && this.secrets) {
      const setToken = vscode.l10n.t('Set Hugging Face Token…');
      if ((await vscode.window.showErrorMessage(downloadErrorText(e), setToken)) === setToken && (await this.setToken())) return this.run();
      return undefined;
    }
    void vscode.window.showErrorMessage(downloadErrorText(e));
    return undefined;
  }

  dispose(): void {
    this.controller?.abort();
    this.statusItem?.dispose();
    this.emitter.dispose();
  }
}
