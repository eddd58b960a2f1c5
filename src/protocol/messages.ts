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

// ---- guided setup (the setup checklist, src/webview/chat/setupChecklist.ts) ----
/** The checks of the core's preflight, in the order the checklist shows them. */
export const setupCheckIdSchema = z.enum(['docker', 'daemon', 'nvidia-runtime', 'image', 'weights', 'ports', 'gpu-memory']);
export const setupLevelSchema = z.enum(['ok', 'warning', 'error', 'blocked', 'unknown', 'skipped', 'pending']);
/** One-click fixes next to a check; documentation links are opened by the host, never by the webview. */
export const setupFixSchema = z.enum([
  'chooseWeights', 'buildImage', 'cancelBuild', 'installDocker', 'startDocker', 'dockerPermissions', 'installNvidiaToolkit',
  'openSettings', 'showLogs',
]);
/** The one action below the checks. */
export const setupPrimarySchema = z.enum(['startChatglm', 'recheck']);
const setupText = z.string().max(LIMITS.errorText);
export const setupItemSchema = z.object({
  id: setupCheckIdSchema,
  level: setupLevelSchema,
  /** Localized by the host, like every text of the setup view. */
  label: z.string().min(1).max(LIMITS.title),
  detail: setupText.optional(),
  fixes: z.array(setupFixSchema).max(4),
}).strict();
export const setupViewSchema = z.object({
  visible: z.boolean(),
  phase: z.enum(['checking', 'needed', 'ready', 'busy', 'running']),
  checking: z.boolean(),
  summary: setupText,
  failure: setupText.optional(),
  items: z.array(setupItemSchema).max(12),
  primary: setupPrimarySchema.optional(),
}).strict();
export type SetupView = z.infer<typeof setupViewSchema>;
export type SetupItemView = z.infer<typeof setupItemSchema>;
export type SetupFixId = z.infer<typeof setupFixSchema>;
export type SetupPrimaryId = z.infer<typeof setupPrimarySchema>;
export type SetupCheckId = z.infer<typeof setupCheckIdSchema>;

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
  // guided setup: a fix of one check (`check` names it), or the one action
  messageSchema('setupAction', { action: z.union([setupFixSchema, setupPrimarySchema]), check: setupCheckIdSchema.optional() }),
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
  messageSchema('error', { message: z.string().min(1).max(LIMITS.errorText) }),
  messageSchema('l10n', {
    strings: z.record(z.string().regex(L10N_KEY_PATTERN), z.string().max(LIMITS.l10nValue))
      .refine((r) => Object.keys(r).length <= LIMITS.l10nEntries, 'too many strings'),
  }),
  messageSchema('focusInput', {}),
  // guided setup: the checklist shown until the model is ready
  messageSchema('setup', { setup: setupViewSchema }),
]);
export type HostToWebview = z.infer<typeof hostToWebviewSchema>;

export type StateMessage = Extract<HostToWebview, { type: 'state' }>;
export type MessageDone = Extract<HostToWebview, { type: 'messageDone' }>;
export type SetupMessage = Extract<HostToWebview, { type: 'setup' }>;
export type SetupActionMessage = Extract<WebviewToHost, { type: 'setupAction' }>;

/** Validates a message posted by the webview. Never throws; unknown types, extra fields and oversize text are errors. */
export const parseWebviewToHost: (raw: unknown) => WebviewToHost | ProtocolError = messageParser(webviewToHostSchema);

/** Validates a message posted by the host. Never throws. */
export const parseHostToWebview: (raw: unknown) => HostToWebview | ProtocolError = messageParser(hostToWebviewSchema);
