// The chat view <-> host protocol: zod schemas are the source of truth, the TypeScript types are inferred from
// them, and both sides parse what they receive at runtime (a webview is a separate, less trusted process).
import { z } from 'zod';
import { ID_PATTERN, L10N_KEY_PATTERN, LANGUAGE_PATTERN, LIMITS } from './limits';
import { messageParser, messageSchema, type ProtocolError } from './validation';

const id = z.string().regex(ID_PATTERN);
const userText = z.string().min(1).max(LIMITS.userText).refine((s) => s.trim() !== '', 'empty text');
const code = z.string().max(LIMITS.code);
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** A keybinding as package.json writes it ("ctrl+alt+e"; `mac`: "cmd+alt+e"), shown as text only. */
const keyText = z.string().regex(/^[a-z0-9+ `\-=[\]\\;',./]{1,60}$/);
const keyBindingSchema = z.object({ key: keyText, mac: keyText.optional() }).strict();
export type KeyBindingView = z.infer<typeof keyBindingSchema>;

// ---- attachments: editor context sent with a question (chips above the input and in the transcript) ----
const line = z.number().int().positive().max(LIMITS.attachmentLine);
const attachmentPath = z.string().min(1).max(LIMITS.attachmentPath);

/** What a chip holds (src/core/chat/attachments.ts ATTACHMENT_KINDS; a unit test keeps the two lists equal). */
export const attachmentKindSchema = z.enum(['selection', 'file', 'symbol', 'problems', 'changes']);
export type AttachmentKindView = z.infer<typeof attachmentKindSchema>;

/** A chip: the file name and lines are derived from `path`; `fullPath` is its tooltip. Content never goes to the webview. */
export const attachmentViewSchema = z.object({
  id,
  kind: attachmentKindSchema,
  path: attachmentPath,
  fullPath: attachmentPath,
  startLine: line.optional(),
  endLine: line.optional(),
  /** A symbol's name ("circle_area"), shown instead of the file name. */
  label: z.string().min(1).max(LIMITS.title).optional(),
  /** Estimated tokens it adds to the question. */
  tokens: count.optional(),
}).strict();
export type AttachmentView = z.infer<typeof attachmentViewSchema>;

/**
 * The active editor's file, as a chip: `suggested` (tritonChatglm.chat.currentFile `suggest`), a click attaches it;
 * otherwise it switches on and off. `refusal` (localized) says why it cannot go.
 */
export const activeFileViewSchema = z.object({
  path: attachmentPath,
  fullPath: attachmentPath,
  suggested: z.boolean().optional(),
  enabled: z.boolean(),
  /** The workspace is untrusted, so the file is not attached unless the user switches it on. */
  untrusted: z.boolean(),
  tokens: count.optional(),
  refusal: z.string().max(LIMITS.errorText).optional(),
}).strict();
export type ActiveFileView = z.infer<typeof activeFileViewSchema>;

// ---- guided setup (the setup checklist, src/webview/chat/setupChecklist.ts) ----
/** The checks of the core's preflight, in the order the checklist shows them. */
export const setupCheckIdSchema = z.enum(['docker', 'daemon', 'nvidia-runtime', 'image', 'weights', 'ports', 'gpu-memory']);
export const setupLevelSchema = z.enum(['ok', 'warning', 'error', 'blocked', 'unknown', 'skipped', 'pending']);
/** One-click fixes next to a check; documentation links are opened by the host, never by the webview. */
export const setupFixSchema = z.enum([
  'downloadWeights', 'cancelDownload', 'chooseWeights', 'buildImage', 'cancelBuild', 'installDocker', 'startDocker', 'dockerPermissions', 'installNvidiaToolkit',
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
/** A catalog model in the checklist's model choice (words by the host; the id is the catalog's). */
export const setupModelIdSchema = z.string().regex(/^[a-z0-9][a-z0-9.-]*$/).max(64);
export const setupModelSchema = z.object({
  id: setupModelIdSchema,
  label: z.string().min(1).max(LIMITS.title),
  chosen: z.boolean(),
  /** Download size and whether (and in which precision) it fits this GPU. */
  detail: setupText,
  /** `warning`: it does not fit the measured GPU. */
  fit: z.enum(['ok', 'warning', 'unknown']),
  /** The licence's name and key terms; its full text opens from the Licence button (the host opens it). */
  license: setupText,
}).strict();
export const setupViewSchema = z.object({
  visible: z.boolean(),
  phase: z.enum(['checking', 'needed', 'ready', 'busy', 'running']),
  checking: z.boolean(),
  summary: setupText,
  failure: setupText.optional(),
  items: z.array(setupItemSchema).max(12),
  primary: setupPrimarySchema.optional(),
  /** The model choice: every catalog model (absent: not offered, e.g. an external server). */
  models: z.array(setupModelSchema).max(8).optional(),
}).strict();
export type SetupView = z.infer<typeof setupViewSchema>;
export type SetupItemView = z.infer<typeof setupItemSchema>;
export type SetupFixId = z.infer<typeof setupFixSchema>;
export type SetupPrimaryId = z.infer<typeof setupPrimarySchema>;
export type SetupCheckId = z.infer<typeof setupCheckIdSchema>;
export type SetupModelView = z.infer<typeof setupModelSchema>;

// ---- `#` context and `/` commands of the composer ----
/** What `#` offers: each asks the host to attach something (a quick pick for file and symbol). */
export const contextSourceSchema = z.enum(['file', 'selection', 'problems', 'changes', 'symbol']);
export type ContextSource = z.infer<typeof contextSourceSchema>;
/** What `/` offers (src/core/chat/slashCommands.ts SLASH_COMMANDS; a unit test keeps the two lists equal). */
export const slashCommandSchema = z.enum(['explain', 'fix', 'tests', 'doc', 'new']);
export type SlashCommandView = z.infer<typeof slashCommandSchema>;

// ---- webview -> host ----
export const webviewToHostSchema = z.discriminatedUnion('type', [
  messageSchema('ready', {}),
  messageSchema('send', { text: userText }),
  messageSchema('stop', {}),
  // The per-message toolbar, on any message of the active conversation (the host checks the id is there).
  /** Answers the question of answer `messageId` again; the turns after it are replaced. */
  messageSchema('regenerate', { messageId: id }),
  /** Replaces question `messageId` with `text` and answers it; the turns after it are replaced. */
  messageSchema('editQuestion', { messageId: id, text: userText }),
  /** Continues answer `messageId`, cut at the length limit (the last message). */
  messageSchema('continueAnswer', { messageId: id }),
  /** Copies the whole message, as the Markdown it was written in. */
  messageSchema('copyMessage', { messageId: id }),
  /** The panel got or lost the keyboard focus (the host sets the context key its keybindings use). */
  messageSchema('focusChanged', { focused: z.boolean() }),
  messageSchema('copyCode', { code }),
  messageSchema('insertCode', { code }),
  /** Replaces the active editor's selection with `code` (or inserts it at the cursor) after a diff preview. */
  messageSchema('applyCode', { code }),
  messageSchema('openInEditor', { code, language: z.string().regex(LANGUAGE_PATTERN) }),
  /** A link in an answer was activated: the host decides (src/core/links) whether and how to open it. */
  messageSchema('openLink', { url: z.string().min(1).max(LIMITS.url), text: z.string().max(LIMITS.linkText) }),
  messageSchema('startServer', {}),
  messageSchema('loadModel', {}),
  messageSchema('openSettings', {}),
  /** The error banner's Retry: asks the question of failed answer `messageId` again (the failed answer stays). */
  messageSchema('retry', { messageId: id }),
  // guided setup: a fix of one check (`check` names it), or the one action
  messageSchema('setupAction', { action: z.union([setupFixSchema, setupPrimarySchema]), check: setupCheckIdSchema.optional() }),
  /** The model choice: choose a catalog model (sets tritonChatglm.model), or open its licence (the host opens it). */
  messageSchema('setupModel', { action: z.enum(['choose', 'license']), id: setupModelIdSchema }),
  // attachments
  messageSchema('removeAttachment', { id }),
  messageSchema('toggleActiveFile', { enabled: z.boolean() }),
  messageSchema('addFile', {}),
  messageSchema('openAttachment', { id }),
  /** `#file`, `#selection`, `#problems`, `#changes`, `#symbol` picked in the input's completion list. */
  messageSchema('addContext', { source: contextSourceSchema }),
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
  /** Answers: the model that wrote it, as shown on hover ("GLM-4-9B-Chat (glm-4-9b-chat)"). */
  model: z.string().max(200).optional(),
  /** Answers: the display name of the model that wrote it, their role label ("GLM-4-9B-Chat"); older ones have none. */
  modelName: z.string().min(1).max(LIMITS.title).optional(),
  /** User messages: the chips the question was sent with. */
  attachments: z.array(attachmentViewSchema).max(LIMITS.attachments).optional(),
}).strict();
export type MessageView = z.infer<typeof messageViewSchema>;

export const serverActionSchema = z.enum(['startServer', 'loadModel', 'reloadModel', 'openSettings']);
export type ServerAction = z.infer<typeof serverActionSchema>;

/** Server/model state as the panel shows it; `reason` is already localized by the host. */
export const serverViewSchema = z.object({
  server: z.enum(['unknown', 'stopped', 'starting', 'running', 'failed']),
  /** `faulted`: a device fault stopped the loaded model (it needs Reload Model); `failed`: it did not load. */
  model: z.enum(['unknown', 'unloaded', 'loading', 'ready', 'failed', 'faulted']),
  reason: z.string().max(LIMITS.errorText).optional(),
  actions: z.array(serverActionSchema).max(3),
}).strict();
export type ServerView = z.infer<typeof serverViewSchema>;

export const hostToWebviewSchema = z.discriminatedUnion('type', [
  messageSchema('state', {
    /** Null: a new chat, created by its first question. */
    activeId: id.nullable(),
    messages: z.array(messageViewSchema).max(LIMITS.messages),
    server: serverViewSchema,
    /** An answer is being generated (Send becomes Stop). */
    busy: z.boolean(),
    /** The served model's display name, else the chosen one's ("GLM-4-9B-Chat"): the empty state, the model's state
     *  lines, the input's placeholder and the role label of answers that do not name their own. */
    modelName: z.string().min(1).max(LIMITS.title),
    /** What ArrowUp in the empty input brings back when this conversation has no question yet (the last one asked). */
    previousQuestion: z.string().max(LIMITS.userText).optional(),
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
  // the keys of the editor commands the empty chat names (the manifest's, src/core/text/keybindings.ts)
  messageSchema('keybindings', { explain: keyBindingSchema.optional(), edit: keyBindingSchema.optional() }),
  // guided setup: the checklist shown until the model is ready
  messageSchema('setup', { setup: setupViewSchema }),
  // attachments: the chips above the input; a question the host did not send goes back into the input
  messageSchema('attachments', {
    items: z.array(attachmentViewSchema).max(LIMITS.attachments),
    activeFile: activeFileViewSchema.nullable(),
  }),
  messageSchema('draft', { text: z.string().max(LIMITS.userText) }),
  // the token meter under the input: the host's figures; the panel adds the chips and the draft (core/composer/meter.ts)
  messageSchema('budget', {
    /** The system prompt with its message overhead (0 without one). */
    systemTokens: count,
    /** Each complete turn the history may keep, oldest first. */
    historyTurns: z.array(count).max(LIMITS.messages),
    maxInputTokens: count.min(1),
    /** Each template command's prompt (translated), for a draft that starts with it. */
    templateTokens: z.object({ explain: count, fix: count, tests: count, doc: count }).strict(),
  }),
]);
export type HostToWebview = z.infer<typeof hostToWebviewSchema>;

export type StateMessage = Extract<HostToWebview, { type: 'state' }>;
export type MessageDone = Extract<HostToWebview, { type: 'messageDone' }>;
export type SetupMessage = Extract<HostToWebview, { type: 'setup' }>;
export type SetupActionMessage = Extract<WebviewToHost, { type: 'setupAction' }>;
export type SetupModelMessage = Extract<WebviewToHost, { type: 'setupModel' }>;
export type AttachmentsMessage = Extract<HostToWebview, { type: 'attachments' }>;
export type BudgetMessage = Extract<HostToWebview, { type: 'budget' }>;

/** Validates a message posted by the webview. Never throws; unknown types, extra fields and oversize text are errors. */
export const parseWebviewToHost: (raw: unknown) => WebviewToHost | ProtocolError = messageParser(webviewToHostSchema);

/** Validates a message posted by the host. Never throws. */
export const parseHostToWebview: (raw: unknown) => HostToWebview | ProtocolError = messageParser(hostToWebviewSchema);
