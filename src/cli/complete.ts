// `triton-chatglm complete FILE:LINE:COL`: the completion the editor would show at that cursor (same core path:
// context, infill request, post-processing), printed to stdout for headless checks and scripts. The file is read
// and checked before anything is sent; a secret file (`.env`, keys) is refused as the editor never sends it.
import { readFile, stat } from 'node:fs/promises';
import { basename, relative } from 'node:path';
import { isSecretFileName } from '../core/completion/availability';
import { CompletionService } from '../core/completion/completionService';
import { cursorOffset, languageIdForPath } from '../core/completion/cursorSpec';
import { requestInfill } from '../core/completion/infillClient';
import { MAX_NEW_TOKENS } from '../core/completion/mode';
import type { CompletionDocument } from '../core/completion/context';
import type { TritonClient } from '../core/triton';
import type { CliIo } from './cliSession';
import { UsageError, type CliConfig } from './options';
import { EXIT } from './reportError';

/** Larger files are refused: the prompt takes a few thousand characters around the cursor anyway. */
const MAX_FILE_BYTES = 8 * 1024 * 1024;

export async function readCursorDocument(cfg: CliConfig, cwd = process.cwd()): Promise<CompletionDocument> {
  const cursor = cfg.cursor;
  if (!cursor) throw new UsageError('complete needs FILE:LINE:COL.');
  if (isSecretFileName(cursor.file)) throw new UsageError(`${basename(cursor.file)} looks like a file of secrets; it is never sent for completion.`);
  let bytes: Buffer;
  try {
    if ((await stat(cursor.file)).size > MAX_FILE_BYTES) throw new UsageError(`${cursor.file} is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB.`);
    bytes = await readFile(cursor.file);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`Cannot read ${cursor.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (bytes.includes(0)) throw new UsageError(`${cursor.file} is not a text file.`);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  let offset: number;
  try {
    offset = cursorOffset(text, cursor.line, cursor.column);
  } catch (e) {
    throw new UsageError(`${cursor.file}:${cursor.line}:${cursor.column}: ${(e as Error).message}.`);
  }
  const rel = relative(cwd, cursor.file);
  return { text, offset, path: rel && !rel.startsWith('..') ? rel : basename(cursor.file), languageId: languageIdForPath(cursor.file) };
}

/** Runs the completion with the client `withClient` connects, against the served model it names; prints it (or `{completion, mode}` with --json). */
export async function complete(cfg: CliConfig, io: CliIo, withClient: (fn: (client: TritonClient, modelName: string) => Promise<number>) => Promise<number>): Promise<number> {
  const document = await readCursorDocument(cfg);
  const tokens = cfg.maxNewTokens;
  return withClient(async (client, model) => {
    const service = new CompletionService((payload, options) => requestInfill(client, model, payload, options), {
      settings: () => ({
        enabled: true, languages: {}, debounceMs: 0, exclude: [],
        maxNewTokens: { line: tokens ?? MAX_NEW_TOKENS.line, block: tokens ?? MAX_NEW_TOKENS.block },
      }),
      idleTimeoutMs: (cfg.timeoutS ?? 60) * 1000,
    });
    const outcome = await service.complete({ documentKey: document.path, document, immediate: true, signal: io.signal });
    const text = outcome.kind === 'text' ? outcome.text : '';
    if (cfg.json) io.out(`${JSON.stringify({ completion: text, ...(outcome.kind === 'text' ? { mode: outcome.mode } : { none: outcome.reason }) })}\n`);
    else if (text) io.out(`${text}\n`);
    if (cfg.verbose && outcome.kind !== 'text') io.err(`[no completion: ${outcome.reason}]\n`);
    return EXIT.ok;
  });
}
