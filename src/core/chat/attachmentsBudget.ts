// The token budget of a question with its attachments, checked BEFORE anything is sent. Policy: the fixed part of a
// request (framing, system prompt, the question and every attachment of it) must fit the model's input budget on
// its own; older turns are trimmed around it (requestBuilder), never the current question's attachments. When it
// does not fit, nothing is cut silently: the user is told and offered to drop the largest attachment, or to cancel.
import type { Attachment } from './attachments';
import { formatAttachment, formatUserMessage } from './attachmentsLayout';
import { estimateTokens, MESSAGE_OVERHEAD_TOKENS, PROMPT_OVERHEAD_TOKENS } from './tokenEstimate';

export interface AttachmentCost {
  id: string;
  /** Estimated tokens its block adds to the message (header, fence, content and the blank line after it). */
  tokens: number;
}

export interface BudgetRequest {
  question: string;
  attachments: readonly Attachment[];
  systemPrompt?: string;
  /** The model's input budget (prompt + history + system prompt), in tokens. */
  maxInputTokens: number;
}

export type BudgetCheck =
  | { ok: true; tokens: number; costs: AttachmentCost[] }
  | {
      ok: false;
      /** Estimated tokens of the fixed part of the request. */
      tokens: number;
      maxInputTokens: number;
      costs: AttachmentCost[];
      /** What to offer dropping; absent when the question has no attachments (the question itself is too long). */
      largest?: AttachmentCost;
    };

/**
 * Tokens of the part of a request that is never trimmed: `[gMASK] sop`, the system prompt, the user message as the
 * model receives it (attachments included) and the assistant tag it ends with. requestBuilder uses the same sum.
 */
export function fixedRequestTokens(userMessage: string, systemPrompt: string | undefined): number {
  const system = systemPrompt ? estimateTokens(systemPrompt) + MESSAGE_OVERHEAD_TOKENS : 0;
  return PROMPT_OVERHEAD_TOKENS + system + estimateTokens(userMessage) + MESSAGE_OVERHEAD_TOKENS;
}

/** What one attachment adds to the user message (its block plus the two newlines that separate it). */
export function attachmentTokens(a: Attachment): number {
  return estimateTokens(formatAttachment(a)) + 2;
}

/** The attachment that costs most (the first of equals); undefined for none. */
export function largestAttachment(costs: readonly AttachmentCost[]): AttachmentCost | undefined {
  let best: AttachmentCost | undefined;
  for (const c of costs) if (!best || c.tokens > best.tokens) best = c;
  return best;
}

export function checkBudget(r: BudgetRequest): BudgetCheck {
  const tokens = fixedRequestTokens(formatUserMessage(r.question, r.attachments), r.systemPrompt);
  const costs = r.attachments.map((a) => ({ id: a.id, tokens: attachmentTokens(a) }));
  if (tokens <= r.maxInputTokens) return { ok: true, tokens, costs };
  const largest = largestAttachment(costs);
  return { ok: false, tokens, maxInputTokens: r.maxInputTokens, costs, ...(largest ? { largest } : {}) };
}

/** The attachments without the one the user chose to drop. */
export function withoutAttachment(attachments: readonly Attachment[], id: string): Attachment[] {
  return attachments.filter((a) => a.id !== id);
}
