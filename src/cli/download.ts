// `triton-chatglm download [--model ID]`: the core's weights download of the chosen model with the terminal as its
// face — its licence first (and --accept-license once for a licence that limits commercial use), then a progress
// bar redrawn on stderr when it is a terminal, one line per file otherwise, or one JSON event a line on stdout with
// --json. The weights folder is printed last on stdout. Ctrl+C keeps what was received.
import { chosenModel } from '../core/models/choice';
import { licenseGate, licenseNotice } from '../core/models/licenseGate';
import { escapeForMessage } from '../core/text/escapeForMessage';
import { downloadWeights, formatBytes, type DownloadEvent } from '../core/weights';
import type { CliIo } from './cliSession';
import { licenseAccepted, rememberLicense } from './licenseMemory';
import { UsageError, type CliConfig } from './options';
import { EXIT } from './reportError';

const BAR = 24;

function eta(seconds: number | undefined): string {
  if (seconds === undefined) return '';
  if (seconds < 60) return `${seconds} s left`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min left`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min left`;
}

function rate(bytesPerSecond: number | undefined): string {
  return bytesPerSecond === undefined ? '' : `${formatBytes(bytesPerSecond)}/s`;
}

/** What the user reads for each event (the JSON mode prints the events themselves); `verbose` adds debug lines. */
export function downloadPrinter(io: CliIo, tty: boolean, verbose = false, title = 'ChatGLM3-6B'): (e: DownloadEvent) => void {
  let current = '';
  let barShown = false;
  const clearBar = () => {
    if (barShown) io.err('\r\x1b[2K');
    barShown = false;
  };
  return (e) => {
    switch (e.type) {
      case 'resolved': {
        const p = e.plan;
        io.err(`${title}: ${p.repo} at ${p.revision} (commit ${p.commit.slice(0, 12)}), ${p.files.length} files, ${formatBytes(p.totalBytes)}, ${p.format}\n`);
        io.err(`into ${p.snapshotDir}\n`);
        if (p.newerThanTested) io.err('note: a newer snapshot than the one tested (it is used all the same)\n');
        if (p.presentBytes > 0) io.err(`resuming: ${formatBytes(p.presentBytes)} of ${formatBytes(p.totalBytes)} already here\n`);
        if (verbose && p.ignored > 0) io.err(`debug: ${p.ignored} entries of the file list are not downloaded (other folders and files)\n`);
        return;
      }
      case 'file':
        current = e.file;
        return;
      case 'progress': {
        if (!tty) return;
        const pct = e.totalBytes ? Math.floor((e.doneBytes / e.totalBytes) * 100) : 100;
        const filled = Math.round((pct / 100) * BAR);
        const parts = [`[${'#'.repeat(filled)}${'-'.repeat(BAR - filled)}] ${pct} %`, `${formatBytes(e.doneBytes)} / ${formatBytes(e.totalBytes)}`, rate(e.bytesPerSecond), eta(e.secondsLeft), current];
        io.err(`\r\x1b[2K${parts.filter(Boolean).join('  ')}`);
        barShown = true;
        return;
      }
      case 'retry':
        clearBar();
        io.err(`${escapeForMessage(e.file)}: ${escapeForMessage(e.reason)}; retrying in ${Math.ceil(e.delayMs / 1000)} s (attempt ${e.attempt + 1})\n`);
        return;
      case 'verify-failed':
        clearBar();
        io.err(`${e.file}: checksum mismatch; discarded, fetching it once more\n`);
        return;
      case 'file-done':
        if (tty) return;
        io.err(`${e.file} verified\n`);
        return;
      case 'done':
        clearBar();
        io.err(`done: ${formatBytes(e.fetchedBytes)} fetched, every file verified\n`);
        return;
    }
  };
}

export async function download(cfg: CliConfig, io: CliIo): Promise<number> {
  const model = chosenModel(cfg.model);
  const license = licenseNotice(model, 'en');
  if (licenseGate(model, cfg.acceptLicense || (await licenseAccepted(cfg.licenseDir, model.id))) === 'ask') {
    throw new UsageError(`${model.displayName} is under the ${license.name} (${license.url}): ${license.keyTerms} Read it, then run the download again with --accept-license (asked once for this model).`);
  }
  if (cfg.acceptLicense) await rememberLicense(cfg.licenseDir, model.id);
  if (!cfg.json) io.err(`licence: ${license.name} (${license.url})\n`);
  const print = cfg.json ? (e: DownloadEvent) => io.out(`${JSON.stringify(e.type === 'resolved' ? { type: e.type, ...e.plan, files: e.plan.files.map((f) => f.path) } : e)}\n`) : downloadPrinter(io, io.tty === true, cfg.verbose, model.displayName);
  try {
    const result = await downloadWeights({
      model,
      cacheDir: cfg.downloadDir,
      ...(cfg.revision ? { revision: cfg.revision } : {}),
      ...(cfg.endpoint ? { endpoint: cfg.endpoint } : {}),
      ...(cfg.hubToken ? { token: cfg.hubToken } : {}),
      signal: io.signal,
      onEvent: print,
    });
    if (!cfg.json) {
      io.out(`${result.snapshotDir}\n`);
      io.err(`start with: triton-chatglm start --model ${model.id}  (it finds this snapshot in the cache; or pass --weights ${result.snapshotDir})\n`);
    }
    return EXIT.ok;
  } catch (e) {
    if (io.tty && !cfg.json) io.err('\n');
    if (io.signal.aborted) {
      io.err('download cancelled; what was received is kept: run it again to resume\n');
      return EXIT.interrupted;
    }
    throw e;
  }
}
