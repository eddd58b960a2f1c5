// Turns any failure into what the CLI prints (message + fix, details with --verbose) and its exit code.
import { ModelSettingsError } from '../core/repository';
import { isServerError, type ServerErrorCode } from '../core/server';
import { isTritonError, type TritonErrorCode } from '../core/triton';
import { isDownloadError, type DownloadErrorCode } from '../core/weights';
import { HistoryFileError } from './historyFile';
import { UsageError } from './options';

export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  /** The server (container or --url) is not running. */
  notRunning: 3,
  interrupted: 130,
} as const;

export interface ErrorReport {
  exitCode: number;
  lines: string[];
}

const TRITON_FIXES: Record<TritonErrorCode, string> = {
  'server-not-running': 'Start it with `triton-chatglm start` (or check --url).',
  'connection-lost': 'The server is still running: run the command again (if it keeps happening, check a proxy or the network on the way).',
  'model-not-loaded': 'Load it with `triton-chatglm load`.',
  'model-load-failed': 'Read the reason above and the container log (`triton-chatglm logs`); fix it, then load again.',
  'server-busy': 'Wait for the current requests to finish, or raise the queue size.',
  'model-failed': 'A device fault stopped the model: reload it with `triton-chatglm unload` then `triton-chatglm load` (a new model process).',
  'invalid-request': 'Check the chat options (--temperature 0-2, --top-p 0-1, --max-new-tokens).',
  timeout: 'The server is slow or stuck: check `triton-chatglm logs`, or raise --timeout.',
  cancelled: 'Run the command again.',
  unauthorized: 'Pass the server\'s admin key with --admin-key (a managed container\'s key is found automatically).',
  'key-rejected': 'Set your team key in TRITON_CHATGLM_KEY (ask the team admin for one: `triton-chatglm team keys add <you>`).',
  forbidden: 'The team server serves chat only: model control and other admin APIs are for its admin, on the server itself.',
  'replica-failed': 'A replica of the team server failed: ask again (the proxy sends it to a healthy one); if it keeps failing, tell the team admin.',
  unexpected: 'Check `triton-chatglm logs` and try again.',
};

/** Where the CLI has a more direct fix than the settings-oriented one of the core error. */
const CLI_SERVER_FIXES: Partial<Record<ServerErrorCode, string>> = {
  'image-missing': 'Run `triton-chatglm build-image` (or `triton-chatglm start --build-image`), or pass --image of an image you have.',
  'port-allocated': 'Stop the program that uses the port, or pick free ports with --port (gRPC and metrics use the next two).',
  'name-conflict': 'Remove that container (`docker rm -f <name>`) or pick another name with --container.',
  'weights-missing': 'Run `triton-chatglm download --model ID` for the chosen model (start then finds it in the Hugging Face cache), or pass its checkpoint directory with --weights.',
  'weights-invalid': 'Pass the chosen model\'s checkpoint directory with --weights (its config.json, tokenizer.model, weight files), or run `triton-chatglm download --model ID`.',
  'container-exited': 'Run `triton-chatglm start` again (a --history file is left as it was); `triton-chatglm logs` shows the last lines.',
  'ulimit-denied': 'Pass --no-ulimits (the server then runs without --ulimit memlock/stack).',
};

const DOWNLOAD_FIXES: Record<DownloadErrorCode, string> = {
  'space-low': 'Free some space there, or pass another cache folder with --dir.',
  'hub-unauthorized': 'Accept the model\'s terms on its Hub page if it asks, and set HF_TOKEN to a token that can read it.',
  'hub-not-found': 'Check --revision and --endpoint (HF_ENDPOINT).',
  'hub-error': 'Try again later, or use another endpoint (--endpoint, HF_ENDPOINT).',
  network: 'Check the connection (or set HF_ENDPOINT to a mirror) and run the command again: it resumes where it stopped.',
  'listing-refused': 'The endpoint sent an unsafe file list; nothing was written. Use another endpoint.',
  'redirect-refused': 'The endpoint redirected to an insecure address; nothing was fetched from it. Use another endpoint.',
  'size-mismatch': 'Run the command again later, or use another endpoint.',
  'checksum-mismatch': 'Run the command again later, or use another endpoint.',
  'endpoint-invalid': 'Give --endpoint (HF_ENDPOINT) as an https:// URL, e.g. https://hf-mirror.com.',
  'listing-too-long': 'The endpoint sent a file list without end; nothing was downloaded. Use another endpoint (--endpoint, HF_ENDPOINT).',
  'token-insecure': 'Give --endpoint (HF_ENDPOINT) as an https:// URL, or unset HF_TOKEN if the mirror is public.',
};

/** With a token sent, the fix is another token (or the model's terms), not setting one. */
const TOKEN_REFUSED_FIX = 'Check that HF_TOKEN can read the repository (a token of an account that accepted the model\'s terms on its Hub page).';

function downloadFix(code: DownloadErrorCode, tokenSent: boolean | undefined): string {
  return code === 'hub-unauthorized' && tokenSent ? TOKEN_REFUSED_FIX : DOWNLOAD_FIXES[code];
}

export function reportError(e: unknown, verbose: boolean): ErrorReport {
  if (isDownloadError(e)) return { exitCode: EXIT.failed, lines: [`error: ${e.message}`, `fix: ${downloadFix(e.code, e.facts.tokenSent)}`] };
  if (e instanceof UsageError) {
    return { exitCode: EXIT.usage, lines: [`error: ${e.message}`, 'Run `triton-chatglm --help` for usage.'] };
  }
  if (isServerError(e)) {
    const lines = [`error: ${e.message}`, `fix: ${CLI_SERVER_FIXES[e.code] ?? e.fix}`];
    if (e.logTail?.length) lines.push('last log lines:', ...e.logTail.slice(-20).map((l) => `  ${l}`));
    else if (verbose && e.detail) lines.push('details:', ...e.detail.split('\n').map((l) => `  ${l}`));
    return { exitCode: e.code === 'cancelled' ? EXIT.interrupted : EXIT.failed, lines };
  }
  if (isTritonError(e)) {
    const lines = [`error: ${e.message}`, `fix: ${TRITON_FIXES[e.code]}`];
    if (verbose && e.details.serverMessage) lines.push(`server said: ${e.details.serverMessage}`);
    const exitCode = e.code === 'server-not-running' ? EXIT.notRunning : e.code === 'cancelled' ? EXIT.interrupted : EXIT.failed;
    return { exitCode, lines };
  }
  if (e instanceof ModelSettingsError) {
    return { exitCode: EXIT.usage, lines: [`error: ${e.message}`, 'fix: correct the option named above.'] };
  }
  if (e instanceof HistoryFileError) {
    return { exitCode: EXIT.failed, lines: [`error: ${e.message}`, 'fix: give another --history file, or repair this one (it was not changed).'] };
  }
  const err = e as Error;
  const lines = [`error: ${err?.message ?? String(e)}`];
  if (verbose && err?.stack) lines.push(err.stack);
  return { exitCode: EXIT.failed, lines };
}
