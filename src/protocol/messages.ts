// The one webview <-> host protocol: zod schemas are the source of truth, the TypeScript types are inferred from
// them, and both sides parse what they receive at runtime (a webview is a separate, less trusted process).
import { z } from 'zod';
import { ID_PATTERN, L10N_KEY_PATTERN, LANGUAGE_PATTERN, LIMITS } from './limits';

const id = z.string().regex(ID_PATTERN);
const userText = z.string().min(1).max(LIMITS.userText).refine((s) => s.trim() !== '', 'empty text');
const code = z.string().max(LIMITS.code);
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const time = z.number().finite().nonnegative();

const msg = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.object({ type: z.literal(type), ...shape }).strict();

// ---- webview -> host ----
export const webviewToHostSchema = z.discriminatedUnion('type', [
  msg('ready', {}),
  msg('send', { text: userText }),
  msg('stop', {}),
  msg('regenerate', {}),
  msg('editLast', { text: userText }),
  msg('newChat', {}),
  msg('selectConversation', { id }),
  msg('deleteConversation', { id }),
  msg('renameConversation', { id, title: z.string().min(1).max(LIMITS.title) }),
  msg('copyCode', { code }),
  msg('insertCode', { code }),
  msg('openInEditor', { code, language: z.string().regex(LANGUAGE_PATTERN) }),
  /** A link in an answer was activated: the host decides (src/core/links) whether and how to open it. */
  msg('openLink', { url: z.string().min(1).max(LIMITS.url), text: z.string().max(LIMITS.linkText) }),
  msg('startServer', {}),
  msg('loadModel', {}),
  msg('openSettings', {}),
]);
export type WebviewToHost = z.infer<typeof webviewToHostSchema>;

// ---- host -> webview ----
export const messageStatusSchema = z.enum(['complete', 'streaming', 'stopped', 'failed', 'interrupted']);
export const finishReasonSchema = z.enum(['stop', 'length', 'cancelled']);

export const messageViewSchema = z.object({
  id,
  role: z.enum(['user', 'assistant']),
  content: z.string().max(LIMITS.content),
  status: messageStatusSchema,
  error: z.string().max(LIMITS.errorText).optional(),
  finishReason: finishReasonSchema.optional(),
  promptTokens: count.optional(),
  completionTokens: count.optional(),
  historyTrimmed: count.optional(),
}).strict();
export type MessageView = z.infer<typeof messageViewSchema>;

export const conversationSummarySchema = z.object({
  id,
  title: z.string().max(LIMITS.title),
  createdAt: time,
  updatedAt: time,
  messageCount: count,
}).strict();
export type ConversationSummaryView = z.infer<typeof conversationSummarySchema>;

export const serverActionSchema = z.enum(['startServer', 'loadModel', 'openSettings']);
export type ServerAction = z.infer<typeof serverActionSchema>;

/** Server/model state as the panel shows it; `reason` is already localized by the host. */
export const serverViewSchema = z.object({
  server: z.enum(['unknown', 'stopped', 'starting', 'running', 'failed']),
  model: z.enum(['unknown', 'unloaded', 'loading', 'ready', 'failed']),
  reason: z.string().max(LIMITS.errorText).optional(),
  actions: z.array(serverActionSchema).max(3),
}).strict();
export type ServerView = z.infer<typeof serverViewSchema>;

export const hostToWebviewSchema = z.discriminatedUnion('type', [
  msg('state', {
    conversations: z.array(conversationSummarySchema).max(LIMITS.conversations),
    activeId: id.nullable(),
    messages: z.array(messageViewSchema).max(LIMITS.messages),
    server: serverViewSchema,
    /** An answer is being generated (Send becomes Stop). */
    busy: z.boolean(),
  }),
  msg('delta', { conversationId: id, messageId: id, text: z.string().max(LIMITS.delta) }),
  msg('messageDone', {
    conversationId: id,
    messageId: id,
    status: messageStatusSchema.exclude(['streaming']),
    finishReason: finishReasonSchema.optional(),
    promptTokens: count.optional(),
    completionTokens: count.optional(),
    historyTrimmed: count.optional(),
    error: z.string().max(LIMITS.errorText).optional(),
    /** Any other notice, localized by the host. */
    notice: z.string().max(LIMITS.errorText).optional(),
  }),
  msg('error', { message: z.string().min(1).max(LIMITS.errorText) }),
  msg('l10n', {
    strings: z.record(z.string().regex(L10N_KEY_PATTERN), z.string().max(LIMITS.l10nValue))
      .refine((r) => Object.keys(r).length <= LIMITS.l10nEntries, 'too many strings'),
  }),
  msg('focusInput', {}),
]);
export type HostToWebview = z.infer<typeof hostToWebviewSchema>;

export type StateMessage = Extract<HostToWebview, { type: 'state' }>;
export type MessageDone = Extract<HostToWebview, { type: 'messageDone' }>;

export interface ProtocolError {
  error: string;
}

export function isProtocolError(x: unknown): x is ProtocolError {
  return typeof x === 'object' && x !== null && 'error' in x && !('type' in x);
}

/** Validates a message posted by the webview. Never throws; unknown types, extra fields and oversize text are errors. */
export function parseWebviewToHost(raw: unknown): WebviewToHost | ProtocolError {
  return parseWith(webviewToHostSchema, raw);
}

/** Validates a message posted by the host. Never throws. */
export function parseHostToWebview(raw: unknown): HostToWebview | ProtocolError {
  return parseWith(hostToWebviewSchema, raw);
}

function parseWith<T>(schema: z.ZodType<T>, raw: unknown): T | ProtocolError {
  try {
    const r = schema.safeParse(raw);
    if (r.success) return r.data;
    const first = r.error.issues[0];
    const where = first?.path.length ? ` at ${first.path.join('.')}` : '';
    const type = typeof raw === 'object' && raw !== null && typeof (raw as { type?: unknown }).type === 'string'
      ? String((raw as { type: string }).type).slice(0, 40) : '?';
    return { error: `invalid message (${type})${where}: ${first?.message ?? 'rejected'}` };
  } catch (e) {
    return { error: `invalid message: ${e instanceof Error ? e.message : 'unreadable'}` };
  }
}
