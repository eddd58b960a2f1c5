// The chat view <-> host protocol: zod schemas are the source of truth, the TypeScript types are inferred from
// them, and both sides parse what they receive at runtime (a webview is a separate, less trusted process).
import { z } from 'zod';
import { ID_PATTERN, L10N_KEY_PATTERN, LANGUAGE_PATTERN, LIMITS } from './limits';
import { messageParser, messageSchema, type ProtocolError } from './validation';

const id = z.string().regex(ID_PATTERN);
const userText = z.string().min(1).max(LIMITS.userText).refine((s) => s.trim() !== '', 'empty text');
const code = z.string().max(LIMITS.code);
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const time = z.number().finite().nonnegative();

// ---- webview -> host ----
export const webviewToHostSchema = z.discriminatedUnion('type', [
  messageSchema('ready', {}),
  messageSchema('send', { text: userText }),
  messageSchema('stop', {}),
  messageSchema('regenerate', {}),
  messageSchema('editLast', { text: userText }),
  messageSchema('newChat', {}),
  messageSchema('selectConversation', { id }),
  messageSchema('deleteConversation', { id }),
  messageSchema('copyCode', { code }),
  messageSchema('insertCode', { code }),
  messageSchema('openInEditor', { code, language: z.string().regex(LANGUAGE_PATTERN) }),
  messageSchema('startServer', {}),
  messageSchema('loadModel', {}),
  messageSchema('openSettings', {}),
  /** The error banner's Retry: asks the question of failed answer `messageId` again (the failed answer stays). */
  messageSchema('retry', { messageId: id }),
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
  messageSchema('state', {
    conversations: z.array(conversationSummarySchema).max(LIMITS.conversations),
    activeId: id.nullable(),
    messages: z.array(messageViewSchema).max(LIMITS.messages),
    server: serverViewSchema,
    /** An answer is being generated (Send becomes Stop). */
    busy: z.boolean(),
  }),
  messageSchema('delta', { conversationId: id, messageId: id, text: z.string().max(LIMITS.delta) }),
  messageSchema('messageDone', {
    conversationId: id,
    messageId: id,
    status: messageStatusSchema.exclude(['streaming']),
    finishReason: finishReasonSchema.optional(),
    promptTokens: count.optional(),
    completionTokens: count.optional(),
    historyTrimmed: count.optional(),
    error: z.string().max(LIMITS.errorText).optional(),
  }),
  messageSchema('error', {
    message: z.string().min(1).max(LIMITS.errorText),
    /** The failed answer the banner offers to retry (its connection was lost while the server kept running). */
    retry: id.optional(),
  }),
  messageSchema('l10n', {
    strings: z.record(z.string().regex(L10N_KEY_PATTERN), z.string().max(LIMITS.l10nValue))
      .refine((r) => Object.keys(r).length <= LIMITS.l10nEntries, 'too many strings'),
  }),
  messageSchema('focusInput', {}),
]);
export type HostToWebview = z.infer<typeof hostToWebviewSchema>;

export type StateMessage = Extract<HostToWebview, { type: 'state' }>;
export type MessageDone = Extract<HostToWebview, { type: 'messageDone' }>;

/** Validates a message posted by the webview. Never throws; unknown types, extra fields and oversize text are errors. */
export const parseWebviewToHost: (raw: unknown) => WebviewToHost | ProtocolError = messageParser(webviewToHostSchema);

/** Validates a message posted by the host. Never throws. */
export const parseHostToWebview: (raw: unknown) => HostToWebview | ProtocolError = messageParser(hostToWebviewSchema);
