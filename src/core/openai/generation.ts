// One OpenAI request's answer from the model: text pieces, then how it ended and its usage. It goes through the
// chat core's stream (src/core/triton/chatglm.ts, Triton's generate_stream), so aborting `signal` — the client
// disconnected — or a stop sequence closes the connection and Triton cancels the request (its row is freed).
import { estimateTokens, MESSAGE_OVERHEAD_TOKENS, PROMPT_OVERHEAD_TOKENS } from '../chat/tokenEstimate';
import { streamChat, TritonError, type TritonClient } from '../triton';
import type { MappedRequest } from './mapping';
import type { OpenAiFinishReason, Usage } from './schemas';
import { StopMatcher } from './stopSequences';

export type GenerationEvent =
  | { type: 'text'; text: string }
  | { type: 'end'; finishReason: OpenAiFinishReason; usage: Usage; usageEstimated: boolean };

export interface GenerationOptions {
  signal: AbortSignal;
  /** Fail when Triton sends nothing for this long. */
  idleTimeoutMs: number;
}

const usage = (prompt: number, completion: number): Usage => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });

/**
 * The server's own counts come with its final response; an answer ended here by a stop sequence is cancelled
 * before that arrives, so its usage is the chat core's token estimate (which over-counts rather than under).
 */
function estimatedUsage(mapped: MappedRequest, generated: string): Usage {
  const cost = (text: string) => estimateTokens(text) + MESSAGE_OVERHEAD_TOKENS;
  const prompt = PROMPT_OVERHEAD_TOKENS + cost(mapped.request.prompt) + mapped.request.history.reduce((n, m) => n + cost(m.content), 0);
  return usage(prompt, estimateTokens(generated));
}

export async function* generate(client: TritonClient, model: string, mapped: MappedRequest, options: GenerationOptions): AsyncGenerator<GenerationEvent, void, undefined> {
  const stop = new StopMatcher(mapped.stop);
  let generated = '';
  for await (const event of streamChat(client, model, mapped.request, { signal: options.signal, idleTimeoutMs: options.idleTimeoutMs })) {
    if (event.type === 'delta') {
      generated += event.text;
      const step = stop.push(event.text);
      if (step.text) yield { type: 'text', text: step.text };
      // Leaving the loop closes the stream: Triton cancels the rest of the answer.
      if (step.stopped) {
        yield { type: 'end', finishReason: 'stop', usage: estimatedUsage(mapped, generated), usageEstimated: true };
        return;
      }
      continue;
    }
    const rest = stop.end();
    if (rest) yield { type: 'text', text: rest };
    if (event.finishReason === 'cancelled') {
      throw new TritonError('cancelled', 'The request was cancelled on the server.', { operation: 'generate-stream', model });
    }
    yield { type: 'end', finishReason: event.finishReason, usage: usage(event.promptTokens, event.completionTokens), usageEstimated: false };
    return;
  }
}
