// One completion from a cursor to the text to show: the cache first (typing through a shown suggestion), then
// debounce + cancel-previous (RequestGate), the request (references budgeted), and post-processing. The editor
// and the CLI both come through here; the editor adapts documents and settings, nothing more.
import { CompletionCache } from './cache';
import { cursorContext, DEFAULT_BUDGET, toLf, type CompletionBudget, type CompletionDocument } from './context';
import { buildInfillPayload, lineIsComplete, type InfillOptions, type InfillPayload, type InfillResult } from './infillClient';
import { languageTag } from './languageTag';
import { worthCompleting, type CompletionMode } from './mode';
import { postProcess } from './postProcess';
import { DEFAULT_REFERENCE_LIMITS, pickReferences, type ReferenceCandidate, type ReferenceLimits } from './references';
import { RequestGate } from './requestGate';
import type { CompletionSettings } from './settings';

/** Sends one infill request (requestInfill bound to a client and model, or a test's stand-in). */
export type InfillRequester = (payload: InfillPayload, options: InfillOptions) => Promise<InfillResult>;

export interface CompleteInput {
  /** Identifies the document for the cache (its URI). */
  documentKey: string;
  document: CompletionDocument;
  /** Other files for ###REFERENCE: blocks. */
  references?: readonly ReferenceCandidate[];
  tabSize?: number;
  /** Skip the debounce (the CLI, an explicit trigger). */
  immediate?: boolean;
  signal?: AbortSignal;
}

export type CompletionOutcome =
  | { kind: 'text'; text: string; mode: CompletionMode; source: 'cache' | 'server' }
  | { kind: 'none'; reason: 'mid-word' | 'nothing' | 'cancelled' };

export interface CompletionServiceOptions {
  settings(): CompletionSettings;
  budget?: CompletionBudget;
  referenceLimits?: ReferenceLimits;
  idleTimeoutMs?: number;
}

export class CompletionService {
  readonly cache = new CompletionCache();
  readonly gate = new RequestGate();

  constructor(private readonly send: InfillRequester, private readonly options: CompletionServiceOptions) {}

  /** The suggestion at the cursor, in the document's own line ends. AbortErrors become `cancelled`; other errors throw. */
  async complete(input: CompleteInput): Promise<CompletionOutcome> {
    const settings = this.options.settings();
    const doc = input.document;
    const ctx = cursorContext(doc, this.options.budget ?? DEFAULT_BUDGET);
    if (!worthCompleting(ctx.lineSuffix)) {
      this.gate.cancelPrevious();
      return { kind: 'none', reason: 'mid-word' };
    }
    const before = toLf(doc.text.slice(0, doc.offset));
    const cached = this.cache.get(input.documentKey, before, ctx.suffix);
    if (cached !== undefined) {
      this.gate.cancelPrevious(); // what it was asked for is superseded by the text typed since
      return cached === '' ? { kind: 'none', reason: 'nothing' } : { kind: 'text', text: withEol(cached, ctx.eol), mode: ctx.mode, source: 'cache' };
    }
    let signal: AbortSignal;
    try {
      signal = await this.gate.begin(input.immediate ? 0 : settings.debounceMs, input.signal);
    } catch (e) {
      if (isAbort(e)) return { kind: 'none', reason: 'cancelled' };
      throw e;
    }
    try {
      const payload = buildInfillPayload({
        prefix: ctx.prefix, suffix: ctx.suffix, path: doc.path, language: languageTag(doc.languageId), mode: ctx.mode,
        references: pickReferences(input.references ?? [], doc.path, this.options.referenceLimits ?? DEFAULT_REFERENCE_LIMITS),
      });
      const result = await this.send(payload, {
        maxNewTokens: settings.maxNewTokens[ctx.mode], signal, idleTimeoutMs: this.options.idleTimeoutMs ?? 0,
        ...(ctx.mode === 'line' ? { enough: lineIsComplete } : {}),
      });
      if (signal.aborted) return { kind: 'none', reason: 'cancelled' };
      const text = postProcess({
        raw: result.text, mode: ctx.mode, linePrefix: ctx.linePrefix, lineSuffix: ctx.lineSuffix, suffix: ctx.suffix,
        previousLine: ctx.previousLine, ...(input.tabSize !== undefined ? { tabSize: input.tabSize } : {}),
      });
      this.cache.put(input.documentKey, before, ctx.suffix, text);
      return text === '' ? { kind: 'none', reason: 'nothing' } : { kind: 'text', text: withEol(text, ctx.eol), mode: ctx.mode, source: 'server' };
    } catch (e) {
      if (signal.aborted || isAbort(e)) return { kind: 'none', reason: 'cancelled' };
      throw e;
    } finally {
      this.gate.finish(signal);
    }
  }

  /** Ends the request in flight (toggle off, snooze, dispose). */
  cancel(): void {
    this.gate.cancelPrevious();
  }
}

function withEol(text: string, eol: '\n' | '\r\n'): string {
  return eol === '\n' ? text : text.replace(/\n/g, eol);
}

function isAbort(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  return e.name === 'AbortError' || (e as { code?: unknown }).code === 'cancelled' || (e as { code?: unknown }).code === 'ABORT_ERR';
}
