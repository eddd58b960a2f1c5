// The client half of the `infill` contract (triton/README.md): the request rides the chat's /generate_stream path
// with `prompt` "" and the optional `infill` input, a JSON object the server turns into CodeGeeX4's infilling
// prompt (and trims to its token budget); the middle text streams back in `response`, then `finish_reason`.
// Leaving the stream early (abort, or enough text for one line) closes the connection: the server cancels the row.
import { z } from 'zod';
import { TritonError, type TritonClient } from '../triton';
import type { CompletionMode } from './mode';
import type { Reference } from './references';

export const infillPayloadSchema = z.object({
  prefix: z.string(),
  suffix: z.string(),
  path: z.string(),
  language: z.string(),
  mode: z.enum(['line', 'block']),
  references: z.array(z.object({ path: z.string(), text: z.string() }).strict()),
}).strict();

export type InfillPayload = z.infer<typeof infillPayloadSchema>;

export interface InfillOptions {
  maxNewTokens: number;
  /** Low by default: a completion should be the likely text, not a creative one. */
  temperature?: number;
  topP?: number;
  signal?: AbortSignal;
  /** Fail when nothing arrives for this long, ms (0 = never). */
  idleTimeoutMs?: number;
  /** Called with the text so far after each delta; true ends the request there (the server cancels the rest). */
  enough?: (textSoFar: string) => boolean;
}

export interface InfillResult {
  text: string;
  /** `stop`/`length`/`cancelled` from the server, or `enough` when the client ended it. */
  finishReason: 'stop' | 'length' | 'cancelled' | 'enough';
}

export const COMPLETION_TEMPERATURE = 0.2;
export const COMPLETION_TOP_P = 0.95;

export function buildInfillPayload(parts: { prefix: string; suffix: string; path: string; language: string; mode: CompletionMode; references: readonly Reference[] }): InfillPayload {
  return infillPayloadSchema.parse({ ...parts, references: parts.references.map((r) => ({ path: r.path, text: r.text })) });
}

/** The /generate_stream body: `prompt` "" beside `infill` (the model ignores prompt and history for an infill). */
export function buildInfillBody(payload: InfillPayload, options: Pick<InfillOptions, 'maxNewTokens' | 'temperature' | 'topP'>): Record<string, unknown> {
  return {
    prompt: '',
    infill: JSON.stringify(infillPayloadSchema.parse(payload)),
    max_new_tokens: options.maxNewTokens,
    temperature: options.temperature ?? COMPLETION_TEMPERATURE,
    top_p: options.topP ?? COMPLETION_TOP_P,
  };
}

const FINISH = ['stop', 'length', 'cancelled'] as const;

/** One completion: the middle text (as the model wrote it; post-processing is the caller's). Errors are TritonErrors. */
export async function requestInfill(client: TritonClient, modelName: string, payload: InfillPayload, options: InfillOptions): Promise<InfillResult> {
  const body = buildInfillBody(payload, options);
  let text = '';
  const stream = { ...(options.signal ? { signal: options.signal } : {}), idleTimeoutMs: options.idleTimeoutMs ?? 0 };
  for await (const event of client.generateStream(modelName, body, stream)) {
    const delta = scalarString(event.response);
    text += delta;
    if (event.finish_reason !== undefined) {
      const reason = scalarString(event.finish_reason);
      if (!(FINISH as readonly string[]).includes(reason)) {
        throw new TritonError('unexpected', `The completion of '${modelName}' ended with an unknown finish_reason '${reason}'.`, { operation: 'generate-stream', model: modelName });
      }
      return { text, finishReason: reason as InfillResult['finishReason'] };
    }
    // Returning here leaves the for-await loop, which closes the stream: the server cancels the request.
    if (delta && options.enough?.(text)) return { text, finishReason: 'enough' };
  }
  throw new TritonError('unexpected', `The completion stream of '${modelName}' ended without a final response.`, { operation: 'generate-stream', model: modelName });
}

/** LINE mode needs one line: once a line break follows some text, the rest is not wanted. */
export function lineIsComplete(text: string): boolean {
  return /\S[^\n]*\n/.test(text);
}

function scalarString(v: unknown): string {
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' ? s : s === undefined || s === null ? '' : String(s);
}
