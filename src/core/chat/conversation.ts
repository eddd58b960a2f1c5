// The stored conversation model: ChatGLM3 history messages plus what the UI needs (ids, status, usage).
import { z } from 'zod';
import { attachmentSchema, type Attachment } from './attachments';
import type { ChatMessage, ChatRole, FinishReason } from './messages';

/**
 * Life of an assistant answer. `stopped` (user pressed Stop), `failed` (error) and `interrupted` (VS Code went
 * away mid-answer) keep their partial text; only `complete` answers are sent back to the model as history.
 */
export type MessageStatus = 'complete' | 'streaming' | 'stopped' | 'failed' | 'interrupted';

export interface StoredMessage {
  id: string;
  role: Extract<ChatRole, 'user' | 'assistant'>;
  content: string;
  /** Always `complete` for user messages. */
  status: MessageStatus;
  createdAt: number;
  /** `failed` only: English error text (or a message already localized by the caller). */
  error?: string;
  finishReason?: FinishReason;
  promptTokens?: number;
  completionTokens?: number;
  /** Older messages left out of this answer's input (client-side trimming + the model's own trimming). */
  historyTrimmed?: number;
  /** User messages only: the editor context sent with the question (absent in files written before attachments). */
  attachments?: Attachment[];
  /**
   * User messages only: what the model receives instead of `content` (a `/` command's template with the user's
   * words, slashCommands.ts); `content` keeps what was typed, as the transcript shows it.
   */
  modelText?: string;
  /** Assistant messages: Triton's name of the model that wrote it (absent in files written before #29). */
  model?: string;
}

/** A conversation typed in the chat panel, or one Explain Selection started (named after its file and lines). */
export type ConversationKind = 'chat' | 'explain';

export interface Conversation {
  id: string;
  /** From the first question (whitespace collapsed, shortened); empty until there is one, or as renamed or given. */
  title: string;
  /** Absent means `chat` (and is how chats are stored, so files of earlier versions read the same). */
  kind?: ConversationKind;
  createdAt: number;
  updatedAt: number;
  systemPrompt?: string;
  messages: StoredMessage[];
}

export interface ConversationSummary {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
  kind: ConversationKind;
}

export const TITLE_MAX_CHARS = 60;
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Title from a question: one line, trimmed, at most TITLE_MAX_CHARS characters (code points, not halves). */
export function titleFrom(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(oneLine);
  return chars.length <= TITLE_MAX_CHARS ? oneLine : `${chars.slice(0, TITLE_MAX_CHARS - 1).join('').trimEnd()}…`;
}

export function summarize(c: Conversation): ConversationSummary {
  return { id: c.id, title: c.title, createdAt: c.createdAt, updatedAt: c.updatedAt, messageCount: c.messages.length, kind: c.kind ?? 'chat' };
}

/** Whether an answer may be continued: it ended at the length limit (Continue appends to it, see continuation.ts). */
/**
 * Whether an answer can be extended in place: cut at the length limit, or stopped by the person (or interrupted by
 * a reload) after some text. A failed answer is regenerated instead.
 */
export function canContinue(m: Pick<StoredMessage, 'role' | 'status' | 'finishReason' | 'content'>): boolean {
  if (m.role !== 'assistant') return false;
  if (m.status === 'complete') return m.finishReason === 'length';
  return (m.status === 'stopped' || m.status === 'interrupted') && m.content.trim() !== '';
}

export function newId(): string {
  return globalThis.crypto.randomUUID();
}

// Schemas used to validate what comes back from disk: one bad conversation must not take the others with it.
const finite = z.number().finite();
const count = z.number().int().nonnegative();

export const storedMessageSchema = z.object({
  id: z.string().regex(ID_PATTERN),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  status: z.enum(['complete', 'streaming', 'stopped', 'failed', 'interrupted']),
  createdAt: finite,
  error: z.string().optional(),
  finishReason: z.enum(['stop', 'length', 'cancelled']).optional(),
  promptTokens: count.optional(),
  completionTokens: count.optional(),
  historyTrimmed: count.optional(),
  attachments: z.array(attachmentSchema).optional(),
  modelText: z.string().optional(),
  model: z.string().max(100).optional(),
});

export const conversationSchema = z.object({
  id: z.string().regex(ID_PATTERN),
  title: z.string(),
  createdAt: finite,
  updatedAt: finite,
  kind: z.enum(['chat', 'explain']).optional(),
  systemPrompt: z.string().optional(),
  messages: z.array(storedMessageSchema),
});

/** A conversation as loaded: answers that were still streaming when the process died become `interrupted`. */
export function markInterrupted(c: Conversation): Conversation {
  if (!c.messages.some((m) => m.status === 'streaming')) return c;
  return { ...c, messages: c.messages.map((m) => (m.status === 'streaming' ? { ...m, status: 'interrupted' } : m)) };
}

/** ChatGLM3 history message of a stored one. */
export function toChatMessage(m: StoredMessage): ChatMessage {
  return { role: m.role, content: m.content };
}
