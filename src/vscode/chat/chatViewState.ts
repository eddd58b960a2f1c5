// What the chat panel is shown, as protocol messages: the active conversation, the server banner with the actions
// valid now, and an answer's final state. Everything is clipped to the protocol's limits, so the webview's
// validation never has to drop a host message.
import { modelDisplayName, modelTitle } from '../../core/models/choice';
import * as vscode from 'vscode';
import type { Conversation, StoredMessage } from '../../core/chat';
import { MODEL_FAILED_CODE, type LifecycleState } from '../../core/state/lifecycle';
import { LIMITS, type HostToWebview, type MessageView, type ServerView } from '../../protocol';
import { toAttachmentView } from './editorContext';

/** Error codes whose fix is in the settings: the banner offers Open Settings. */
const SETTINGS_ERRORS = new Set(['weights-missing', 'weights-invalid', 'settings-invalid', 'port-allocated', 'image-missing']);

export function stateMessage(
  active: Conversation | undefined,
  busy: boolean,
  lifecycle: LifecycleState,
  /** Triton's name of the model the server serves, else the chosen one (the server session's modelName). */
  model: string,
  /** The last question asked anywhere, for ArrowUp in a conversation that has none yet. */
  previousQuestion?: string,
): HostToWebview {
  return {
    type: 'state',
    activeId: active ? active.id : null,
    messages: (active?.messages ?? []).slice(-LIMITS.messages).map(toView),
    server: serverView(lifecycle, modelDisplayName(model)),
    busy,
    modelName: clip(modelDisplayName(model), LIMITS.title) || 'ChatGLM',
    ...(previousQuestion ? { previousQuestion: clip(previousQuestion, LIMITS.userText) } : {}),
  };
}

function serverView(s: LifecycleState, modelName: string): ServerView {
  // "setup needed" is drawn by the setup checklist (setup message), which hides this box meanwhile.
  const server: ServerView['server'] = s.server === 'error' ? 'failed' : s.server === 'stopping' || s.server === 'setup' ? 'stopped' : s.server;
  const faulted = s.model === 'failed' && s.modelError?.code === MODEL_FAILED_CODE;
  const model: ServerView['model'] = s.server !== 'running' ? 'unknown' : s.model === 'unloading' ? 'unloaded' : faulted ? 'faulted' : s.model;
  const actions: ServerView['actions'] = [];
  if (s.mode === 'managed' && (s.server === 'stopped' || s.server === 'error')) actions.push('startServer');
  if (s.server === 'running' && faulted) actions.push('reloadModel');
  else if (s.server === 'running' && (s.model === 'unloaded' || s.model === 'failed')) actions.push('loadModel');
  const err = s.serverError ?? s.modelError;
  if ((err && SETTINGS_ERRORS.has(err.code)) || (s.mode === 'external' && s.server !== 'running')) actions.push('openSettings');
  const view: ServerView = { server, model, actions };
  if (err) {
    const reason = err.code === 'model-load-failed' ? vscode.l10n.t('{0} failed to load: {1}', modelName, err.message)
      : err.code === MODEL_FAILED_CODE ? vscode.l10n.t('The model failed: reload it. ({0})', err.message) : err.message;
    view.reason = clip(reason, LIMITS.errorText);
  }
  return view;
}

/** The answer's final state; undefined while it is still streaming. */
export function doneMessage(conversationId: string, m: StoredMessage): HostToWebview | undefined {
  if (m.status === 'streaming') return undefined;
  return {
    type: 'messageDone',
    conversationId,
    messageId: m.id,
    status: m.status,
    ...(m.finishReason ? { finishReason: m.finishReason } : {}),
    ...(m.promptTokens !== undefined ? { promptTokens: m.promptTokens } : {}),
    ...(m.completionTokens !== undefined ? { completionTokens: m.completionTokens } : {}),
    ...(m.historyTrimmed !== undefined ? { historyTrimmed: m.historyTrimmed } : {}),
    ...(m.error !== undefined ? { error: clip(m.error, LIMITS.errorText) } : {}),
  };
}

/** A streamed delta, in pieces the protocol accepts. */
export function deltaMessages(conversationId: string, messageId: string, text: string): HostToWebview[] {
  const out: HostToWebview[] = [];
  for (let i = 0; i < text.length; i += LIMITS.delta) out.push({ type: 'delta', conversationId, messageId, text: text.slice(i, i + LIMITS.delta) });
  return out;
}

function toView(m: StoredMessage): MessageView {
  const v: MessageView = { id: m.id, role: m.role, content: clip(m.content, LIMITS.content), status: m.status };
  if (m.error !== undefined) v.error = clip(m.error, LIMITS.errorText);
  if (m.finishReason !== undefined) v.finishReason = m.finishReason;
  if (m.promptTokens !== undefined) v.promptTokens = m.promptTokens;
  if (m.completionTokens !== undefined) v.completionTokens = m.completionTokens;
  if (m.historyTrimmed !== undefined) v.historyTrimmed = m.historyTrimmed;
  if (m.model !== undefined) v.model = clip(modelTitle(m.model), 200);
  // The protocol takes no empty name (a hand-edited file): such an answer is labelled like one that names none.
  if (m.model) v.modelName = clip(modelDisplayName(m.model), LIMITS.title);
  if (m.attachments?.length) v.attachments = m.attachments.slice(0, LIMITS.attachments).map((a) => toAttachmentView(a));
  return v;
}

export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
