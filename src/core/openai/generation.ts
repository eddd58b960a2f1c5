// One OpenAI request's answer from the model: text pieces, then how it ended and its usage. It goes through the
// chat core's stream (src/core/triton/chatglm.ts, Triton's generate_stream), so aborting `signal` — the client
// disconnected — closes the connection and Triton cancels the request (its row is freed).
// Stop sequences and raw continuations are the model's inputs (`stop`, `raw_prompt`: triton/README.md): the model
// ends the row at the step that completed a stop sequence and reports the tokens it generated, so `usage` is always
// the server's own count, never an estimate.
import { buildGenerateBody, streamGenerateBody, TritonError, type TritonClient } from '../triton';
import type { MappedRequest } from './mapping';
import type { OpenAiFinishReason, Usage } from './schemas';

export type GenerationEvent =
  | { type: 'text'; text: string }
  | { type: 'end'; finishReason: OpenAiFinishReason; usage: Usage };

export interface GenerationOptions {
  signal: AbortSignal;
  /** Fail when Triton sends nothing for this long. */
  idleTimeoutMs: number;
}

const usage = (prompt: number, completion: number): Usage => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });

/** The /generate_stream body: the chat request's inputs, plus `stop`, and for a raw continuation `raw_prompt`. */
export function generationBody(mapped: MappedRequest): Record<string, unknown> {
  const body = buildGenerateBody(mapped.request);
  if (mapped.stop.length > 0) body.stop = JSON.stringify(mapped.stop);
  if (mapped.raw) {
    // The text is the whole prompt: no chat turn, no history (the model refuses them beside raw_prompt).
    body.raw_prompt = mapped.request.prompt;
    body.prompt = '';
    delete body.history;
    delete body.history_len;
  }
  return body;
}

export async function* generate(client: TritonClient, model: string, mapped: MappedRequest, options: GenerationOptions): AsyncGenerator<GenerationEvent, void, undefined> {
  const events = streamGenerateBody(client, model, generationBody(mapped), { signal: options.signal, idleTimeoutMs: options.idleTimeoutMs });
  for await (const event of events) {
    if (event.type === 'delta') {
      yield { type: 'text', text: event.text };
      continue;
    }
    if (event.finishReason === 'cancelled') {
      throw new TritonError('cancelled', 'The request was cancelled on the server.', { operation: 'generate-stream', model });
    }
    yield { type: 'end', finishReason: event.finishReason, usage: usage(event.promptTokens, event.completionTokens) };
    return;
  }
}
