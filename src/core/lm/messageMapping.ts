// VS Code's language model messages onto ChatGLM3's request, through the chat panel's own request builder
// (src/core/chat): system messages become the system prompt, user and assistant messages the turns, the last
// user message the question. Only text goes: any other part (tool calls and results, images, data) is refused
// by name rather than dropped. Nothing is trimmed: a request over the model's input budget fails, naming the
// budget, because a caller that counted with provideTokenCount expects all of what it sent to be read.
import { z } from 'zod';
import { buildChatRequest } from '../chat/requestBuilder';
import type { Conversation, StoredMessage } from '../chat/conversation';
import type { ChatRequest } from '../chat/messages';
import { estimateTokens, MESSAGE_OVERHEAD_TOKENS } from '../composer/tokenEstimate';
import type { ServerLimits } from './chatModel';

export type LmRole = 'system' | 'user' | 'assistant';

/** One part of a message: text, or something else named by its kind (e.g. `LanguageModelToolCallPart`). */
export type LmPart = { kind: 'text'; text: string } | { kind: 'other'; what: string };

export interface LmMessage {
  /** `undefined`: a role this mapping does not know (its number is in `roleName`). */
  role: LmRole | undefined;
  roleName?: string;
  parts: readonly LmPart[];
}

export type LmRequestError =
  | { code: 'unsupported-part'; messageIndex: number; what: string; message: string }
  | { code: 'unsupported-role'; messageIndex: number; what: string; message: string }
  | { code: 'no-question'; message: string }
  | { code: 'bad-option'; what: string; message: string }
  | { code: 'over-budget'; tokens: number; maxInputTokens: number; message: string };

export type LmRequestResult =
  | { ok: true; request: ChatRequest; inputTokens: number }
  | { ok: false; error: LmRequestError };

/** The request options a caller may give in `modelOptions` (others are ignored, as other providers do). */
const modelOptionsSchema = z.object({
  maxTokens: z.number().int().min(1).optional(),
  max_tokens: z.number().int().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().gt(0).max(1).optional(),
  top_p: z.number().gt(0).max(1).optional(),
}).passthrough();

export interface LmRequestOptions {
  limits: ServerLimits;
  /** max_new_tokens when the caller gives none (the user's tritonChatglm.maxNewTokens). */
  defaultMaxNewTokens: number;
  /** The user's sampling settings, used when the caller gives none. */
  temperature?: number;
  topP?: number;
  topK?: number;
  repetitionPenalty?: number;
  modelOptions?: unknown;
}

const textOf = (m: LmMessage) => m.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('');

/** Tokens of a text or a message by the panel's token-meter estimate (over-counts, never under). */
export function countLmTokens(input: string | LmMessage): number {
  if (typeof input === 'string') return estimateTokens(input);
  return estimateTokens(textOf(input)) + MESSAGE_OVERHEAD_TOKENS;
}

export function toChatRequest(messages: readonly LmMessage[], options: LmRequestOptions): LmRequestResult {
  const system: string[] = [];
  const turns: { role: 'user' | 'assistant'; text: string }[] = [];
  for (const [index, m] of messages.entries()) {
    const other = m.parts.find((p): p is Extract<LmPart, { kind: 'other' }> => p.kind === 'other');
    if (other) {
      return fail({ code: 'unsupported-part', messageIndex: index, what: other.what, message: `Message ${index + 1} holds a ${other.what}; ChatGLM3 takes text only.` });
    }
    if (!m.role) {
      const what = m.roleName ?? 'unknown';
      return fail({ code: 'unsupported-role', messageIndex: index, what, message: `Message ${index + 1} has the role ${what}; ChatGLM3 takes system, user and assistant messages.` });
    }
    const text = textOf(m);
    if (!text.trim()) continue;
    if (m.role === 'system') { system.push(text); continue; }
    // Two messages of one role in a row are one turn to ChatGLM3 (its history alternates user and assistant).
    const last = turns.at(-1);
    if (last?.role === m.role) last.text += `\n\n${text}`;
    else turns.push({ role: m.role, text });
  }
  if (turns.at(-1)?.role !== 'user') {
    return fail({ code: 'no-question', message: 'The request does not end with a user message to answer.' });
  }
  // An answer with no question before it has no turn to belong to: it is said as context of the first question.
  if (turns[0]?.role === 'assistant' && turns.length > 1) {
    const [lead, next] = turns.splice(0, 2) as [typeof turns[number], typeof turns[number]];
    turns.unshift({ role: 'user', text: `${lead.text}\n\n${next.text}` });
  }

  const opts = modelOptionsSchema.safeParse(options.modelOptions ?? {});
  if (!opts.success) {
    const what = opts.error.issues[0]?.path.join('.') || 'modelOptions';
    return fail({ code: 'bad-option', what, message: `The model option ${what} is not valid: ${opts.error.issues[0]?.message ?? 'wrong type'}.` });
  }
  const o = opts.data;
  const asked = o.maxTokens ?? o.max_tokens ?? options.defaultMaxNewTokens;

  const conversation: Conversation = {
    id: 'lm', title: '', createdAt: 0, updatedAt: 0,
    ...(system.length ? { systemPrompt: system.join('\n\n') } : {}),
    messages: turns.map((t, i): StoredMessage => ({ id: `m${i}`, role: t.role, content: t.text, status: 'complete', createdAt: 0 })),
  };
  const built = buildChatRequest(conversation, {
    maxNewTokens: Math.min(asked, options.limits.maxOutputTokens),
    ...defined('temperature', o.temperature ?? options.temperature),
    ...defined('topP', o.topP ?? o.top_p ?? options.topP),
    ...defined('topK', options.topK),
    ...defined('repetitionPenalty', options.repetitionPenalty),
  });
  if (!built.ok) return fail({ code: 'no-question', message: built.message });
  if (built.estimatedInputTokens > options.limits.maxInputTokens) {
    const { estimatedInputTokens: tokens } = built;
    const max = options.limits.maxInputTokens;
    return fail({ code: 'over-budget', tokens, maxInputTokens: max, message: `The request comes to about ${tokens} tokens, more than the model's input budget of ${max} tokens. Nothing was sent.` });
  }
  return { ok: true, request: built.request, inputTokens: built.estimatedInputTokens };
}

function fail(error: LmRequestError): LmRequestResult {
  return { ok: false, error };
}

function defined<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}
