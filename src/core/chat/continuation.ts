// Continue: an answer cut at the length limit is extended in place. ChatGLM3's input has no "assistant prefix", so
// the model is shown the cut answer as its own last turn and asked to go on; what it writes is appended to the
// same message. The request follows buildChatRequest's history policy, with the cut turn always kept.
import type { Conversation } from './conversation';
import { buildChatRequest, type BuildRequestError, type BuildRequestOptions, type BuildRequestResult } from './requestBuilder';

/** The instruction the model gets in place of a question (never shown, never stored). */
export const CONTINUE_PROMPT = 'Continue your last answer exactly where it stopped. Do not repeat anything you already wrote.';

/** The cut answer does not fit the model's input budget next to the instruction. */
export interface ContinuationRefusal {
  ok: false;
  code: 'too-long-to-continue';
  message: string;
}

/** Why a request was not built: the question's refusals (requestBuilder.ts) or the continuation's. */
export type RequestRefusal = BuildRequestError | ContinuationRefusal;

/**
 * The request that continues `messageId`, the conversation's last message (an assistant answer; while it is being
 * continued its status is `streaming`). Refused when the token budget cannot keep the cut answer in the history:
 * continuing without it would start a new answer, not extend this one.
 */
export function buildContinuationRequest(
  conversation: Conversation,
  messageId: string,
  options: BuildRequestOptions = {},
): BuildRequestResult | ContinuationRefusal {
  const last = conversation.messages.at(-1);
  if (!last || last.id !== messageId || last.role !== 'assistant') {
    return { ok: false, code: 'no-question', message: 'Only the last answer of a conversation can be continued.' };
  }
  const withInstruction: Conversation = {
    ...conversation,
    messages: [
      ...conversation.messages.slice(0, -1),
      { ...last, status: 'complete' },
      { id: 'continue', role: 'user', content: CONTINUE_PROMPT, status: 'complete', createdAt: last.createdAt },
    ],
  };
  const historyLen = options.historyLen === undefined ? undefined : Math.max(1, Math.floor(options.historyLen));
  const result = buildChatRequest(withInstruction, { ...options, ...(historyLen === undefined ? {} : { historyLen }) });
  if (result.ok && result.request.history.at(-1)?.content !== last.content) {
    return { ok: false, code: 'too-long-to-continue', message: 'The answer is too long to be continued within the model\'s input budget.' };
  }
  return result;
}
