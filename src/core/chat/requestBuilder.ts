// Builds the model request for the last question of a conversation: ChatGLM3 history from complete turns,
// trimmed by turns (historyLen) and by an estimated token budget, with a report of what was left out. Every user
// message goes out with its attachments in the layout of attachmentsLayout.ts.
import { fixedRequestTokens } from './attachmentsBudget';
import { formatUserMessage } from './attachmentsLayout';
import type { ChatMessage, ChatRequest } from './messages';
import type { Conversation, StoredMessage } from './conversation';
import { estimateTokens, MESSAGE_OVERHEAD_TOKENS } from './tokenEstimate';

export interface BuildRequestOptions {
  /** Turns of history kept (0 = none); absent = all that fit. Also passed on to the model. */
  historyLen?: number;
  /** Input budget of the model (prompt + history + system prompt), in tokens. Absent = no token trimming. */
  maxInputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  repetitionPenalty?: number;
  maxNewTokens?: number;
}

export interface BuildRequestOk {
  ok: true;
  request: ChatRequest;
  /** Messages of complete turns left out (oldest first) by the turn limit and by the token budget. */
  trimmedByTurns: number;
  trimmedByTokens: number;
  /** Turns skipped because their answer was not complete (stopped, failed, interrupted, streaming). */
  skippedIncomplete: number;
  estimatedInputTokens: number;
}

export interface BuildRequestError {
  ok: false;
  code: 'no-question' | 'prompt-too-long';
  message: string;
  estimatedInputTokens?: number;
}

export type BuildRequestResult = BuildRequestOk | BuildRequestError;

interface Turn {
  user: StoredMessage;
  answer: StoredMessage;
}

const costOf = (m: ChatMessage) => estimateTokens(m.content) + MESSAGE_OVERHEAD_TOKENS;

/** A stored message as the model receives it: a question (a command's template) with its attachments, an answer as written. */
export function modelContent(m: StoredMessage): string {
  return m.role === 'user' ? formatUserMessage(m.modelText ?? m.content, m.attachments) : m.content;
}

const turnPair = (t: Turn): [ChatMessage, ChatMessage] => [
  { role: 'user', content: modelContent(t.user) },
  { role: 'assistant', content: modelContent(t.answer) },
];
const pairCost = ([u, a]: [ChatMessage, ChatMessage]) => costOf(u) + costOf(a);

/** The turns before message `end` whose answer is complete, and how many questions were skipped for not having one. */
function completeTurns(messages: readonly StoredMessage[], end: number): { turns: Turn[]; skippedIncomplete: number } {
  const turns: Turn[] = [];
  let skippedIncomplete = 0;
  for (let i = 0; i < end; i += 1) {
    const m = messages[i];
    if (m.role !== 'user') continue;
    const next = messages[i + 1];
    if (i + 1 < end && next.role === 'assistant' && next.status === 'complete') {
      turns.push({ user: m, answer: next });
      i += 1;
    } else {
      skippedIncomplete += 1;
    }
  }
  return { turns, skippedIncomplete };
}

/** Drops all but the last `historyLen` turns (none when absent); returns how many went. */
function keepLastTurns(turns: Turn[], historyLen: number | undefined): number {
  if (historyLen === undefined) return 0;
  const drop = Math.max(0, turns.length - Math.max(0, Math.floor(historyLen)));
  turns.splice(0, drop);
  return drop;
}

/**
 * What each turn of the conversation would cost as history of its next question (oldest first), after the turn
 * limit: the composer's meter (src/core/composer/meter.ts) keeps them newest first while they fit, as below.
 */
export function historyTurnCosts(conversation: Pick<Conversation, 'messages'> | undefined, historyLen?: number): number[] {
  if (!conversation) return [];
  const { turns } = completeTurns(conversation.messages, conversation.messages.length);
  keepLastTurns(turns, historyLen);
  return turns.map((t) => pairCost(turnPair(t)));
}

/**
 * The prompt is the last user message; the history is the turns before it. Policy: a turn goes into the history
 * only when its answer is `complete` — a stopped/failed/interrupted partial answer stays visible in the chat but is
 * not presented to the model as something it said, and its question is left out with it (a question without an
 * answer would break ChatGLM3's alternating user/assistant history). The system prompt and the current question with
 * its attachments are never trimmed (they must fit on their own: checkBudget() tells the user before sending);
 * older turns go out with their own attachments and are dropped whole, oldest first.
 */
export function buildChatRequest(conversation: Conversation, options: BuildRequestOptions = {}): BuildRequestResult {
  const messages = conversation.messages;
  let lastUser = -1;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    if (messages[i].role === 'user') { lastUser = i; break; }
  }
  if (lastUser < 0) return { ok: false, code: 'no-question', message: 'The conversation has no question to send.' };
  const prompt = modelContent(messages[lastUser]);

  const { turns, skippedIncomplete } = completeTurns(messages, lastUser);
  const trimmedByTurns = keepLastTurns(turns, options.historyLen) * 2;

  const system: ChatMessage[] = conversation.systemPrompt ? [{ role: 'system', content: conversation.systemPrompt }] : [];
  const fixedCost = fixedRequestTokens(prompt, conversation.systemPrompt);
  const history: ChatMessage[] = [...system];
  const turnMessages = turns.map(turnPair);
  const turnCosts = turnMessages.map(pairCost);
  let total = fixedCost + turnCosts.reduce((a, b) => a + b, 0);

  let trimmedByTokens = 0;
  if (options.maxInputTokens !== undefined) {
    if (fixedCost > options.maxInputTokens) {
      return {
        ok: false,
        code: 'prompt-too-long',
        message: `The question (about ${fixedCost} tokens with the system prompt) exceeds the model's input budget of ${options.maxInputTokens} tokens.`,
        estimatedInputTokens: fixedCost,
      };
    }
    let dropTurns = 0;
    while (total > options.maxInputTokens && dropTurns < turns.length) {
      total -= turnCosts[dropTurns];
      dropTurns += 1;
    }
    turnMessages.splice(0, dropTurns);
    trimmedByTokens = dropTurns * 2;
  }

  for (const pair of turnMessages) history.push(...pair);

  const request: ChatRequest = { prompt, history };
  if (options.temperature !== undefined) request.temperature = options.temperature;
  if (options.topP !== undefined) request.topP = options.topP;
  if (options.topK !== undefined) request.topK = options.topK;
  if (options.repetitionPenalty !== undefined) request.repetitionPenalty = options.repetitionPenalty;
  if (options.maxNewTokens !== undefined) request.maxNewTokens = options.maxNewTokens;
  if (options.historyLen !== undefined) request.historyLen = Math.max(0, Math.floor(options.historyLen));
  return { ok: true, request, trimmedByTurns, trimmedByTokens, skippedIncomplete, estimatedInputTokens: total };
}
