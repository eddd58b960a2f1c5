// The chat's host side: D's ConversationService (persisted in global storage) + B's streamChat, driven by the
// validated webview messages. Questions are saved before they are sent; Stop aborts the request (the closed
// connection makes Triton cancel it); a crash or a reload keeps the partial answer, marked.
import * as vscode from 'vscode';
import type { Conversation, ConversationService, StoredMessage } from '../../core/chat';
import { DEFAULT_MODEL_SETTINGS, MODEL_NAME } from '../../core/repository';
import { canInfer } from '../../core/state/lifecycle';
import { chatOnce, isTritonError, streamChat, TritonError } from '../../core/triton';
import { LIMITS, type HostToWebview, type MessageView, type ServerView, type WebviewToHost } from '../../protocol';
import type { SettingsService } from '../config/settingsService';
import { errorText, presentError } from '../errors/presentError';
import type { Log } from '../log';
import { confirmInvisibleCharacters } from './invisibleCodeWarning';
import { openChatLink } from './linkOpener';
import type { ServerController } from '../server/serverController';
import type { LifecycleStore } from '../state/lifecycleStore';

export type Poster = (message: HostToWebview) => void;

/** Callbacks of an answer that someone other than the panel watches (an explanation's comment thread). */
export interface AnswerHooks {
  onDelta?: (text: string) => void;
}

export interface AnswerOutcome {
  status: 'complete' | 'stopped' | 'failed';
  text: string;
  /** Localized, for `failed`. */
  error?: string;
}

const ACTIVE_KEY = 'tritonChatglm.activeConversation';

export class ChatController implements vscode.Disposable {
  private activeId: string | null;
  private readonly streams = new Map<string, AbortController>();
  private readonly running = new Set<Promise<unknown>>();
  private poster: Poster | undefined;
  private shuttingDown = false;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly service: ConversationService,
    private readonly server: ServerController,
    private readonly store: LifecycleStore,
    private readonly settings: SettingsService,
    private readonly memento: vscode.Memento,
    private readonly log: Log,
  ) {
    const saved = memento.get<string>(ACTIVE_KEY);
    this.activeId = saved && service.get(saved) ? saved : service.list()[0]?.id ?? null;
    this.subscriptions.push(store.onDidChange(() => this.postState()));
  }

  /** The chat view connects (or goes away: undefined). */
  setPoster(poster: Poster | undefined): void {
    this.poster = poster;
  }

  /** Called for every message that passed the protocol parser. */
  async handle(msg: WebviewToHost): Promise<void> {
    try {
      switch (msg.type) {
        case 'ready': this.postState(); return;
        case 'send': await this.send(msg.text); return;
        case 'stop': this.stopActive(); return;
        case 'regenerate': await this.regenerate(); return;
        case 'editLast': await this.editLast(msg.text); return;
        case 'newChat': this.newChat(); return;
        case 'selectConversation': this.select(msg.id); return;
        case 'deleteConversation': await this.delete(msg.id); return;
        case 'renameConversation': await this.service.rename(msg.id, msg.title); this.postState(); return;
        case 'copyCode': if (await confirmInvisibleCharacters(msg.code, 'copy')) await vscode.env.clipboard.writeText(msg.code); return;
        case 'insertCode': if (await confirmInvisibleCharacters(msg.code, 'insert')) await insertAtCursor(msg.code); return;
        case 'openLink': await openChatLink(msg.url, msg.text); return;
        case 'openInEditor': await openInEditor(msg.code, msg.language); return;
        case 'startServer': await vscode.commands.executeCommand('tritonChatglm.startServer'); return;
        case 'loadModel': await vscode.commands.executeCommand('tritonChatglm.loadModel'); return;
        case 'openSettings': await vscode.commands.executeCommand('tritonChatglm.openSettings'); return;
      }
    } catch (e) {
      this.log.error(`chat: ${msg.type} failed`, e);
      this.post({ type: 'error', message: clip(errorText(presentError(e)), LIMITS.errorText) });
    }
  }

  newChat(): void {
    const c = this.service.create(this.settings.current.systemPrompt ? { systemPrompt: this.settings.current.systemPrompt } : {});
    this.setActive(c.id);
    this.postState();
    this.post({ type: 'focusInput' });
  }

  select(id: string): void {
    if (!this.service.get(id)) return;
    this.setActive(id);
    this.postState();
  }

  /** Sends a question in the active conversation (a new one when there is none). */
  async send(text: string): Promise<void> {
    if (!this.ensureReady()) return;
    const id = this.activeId && this.service.get(this.activeId) ? this.activeId : this.createConversation();
    await this.service.appendUserMessage(id, text);
    this.postState();
    await this.answer(id);
  }

  async regenerate(): Promise<void> {
    if (!this.activeId || !this.ensureReady()) return;
    await this.service.regenerate(this.activeId);
    this.postState();
    await this.answer(this.activeId);
  }

  async editLast(text: string): Promise<void> {
    if (!this.activeId || !this.ensureReady()) return;
    await this.service.editLast(this.activeId, text);
    this.postState();
    await this.answer(this.activeId);
  }

  stopActive(): void {
    if (this.activeId) this.streams.get(this.activeId)?.abort();
  }

  async delete(id: string): Promise<void> {
    this.streams.get(id)?.abort();
    await this.service.delete(id);
    if (this.activeId === id) this.setActive(this.service.list()[0]?.id ?? null);
    this.postState();
  }

  /**
   * A new conversation holding one question, answered like any other (used by Explain Selection). It is not
   * made active, so explaining ten selections does not flip the panel ten times.
   */
  async ask(question: string, signal: AbortSignal | undefined, hooks: AnswerHooks = {}): Promise<{ conversationId: string; outcome: AnswerOutcome }> {
    const id = this.createConversation(false);
    await this.service.appendUserMessage(id, question);
    this.postState();
    const outcome = await this.answer(id, signal, hooks);
    return { conversationId: id, outcome };
  }

  /** Shows a conversation in the panel (Explain's "Continue in Chat"). */
  async reveal(conversationId: string): Promise<void> {
    if (!this.service.get(conversationId)) return;
    this.setActive(conversationId);
    await vscode.commands.executeCommand('tritonChatglm.chat.focus');
    this.postState();
    this.post({ type: 'focusInput' });
  }

  // ---- answering -------------------------------------------------------------------------------------------

  private ensureReady(): boolean {
    if (canInfer(this.store.current) && this.server.tritonClient) return true;
    this.post({ type: 'error', message: vscode.l10n.t('The model is not ready, so questions cannot be sent yet.') });
    this.postState();
    return false;
  }

  private answer(conversationId: string, outer?: AbortSignal, hooks: AnswerHooks = {}): Promise<AnswerOutcome> {
    const p = this.runAnswer(conversationId, outer, hooks);
    this.running.add(p);
    // Settle handler on both paths: the caller handles the rejection, this bookkeeping must not re-raise it.
    const forget = () => { this.running.delete(p); };
    p.then(forget, forget);
    return p;
  }

  private async runAnswer(conversationId: string, outer: AbortSignal | undefined, hooks: AnswerHooks): Promise<AnswerOutcome> {
    const client = this.server.tritonClient;
    const s = this.settings.current;
    const message = this.service.startAnswer(conversationId);
    const ctrl = new AbortController();
    const onOuter = () => ctrl.abort();
    outer?.addEventListener('abort', onOuter, { once: true });
    if (outer?.aborted) ctrl.abort();
    this.streams.set(conversationId, ctrl);
    this.postState();
    let text = '';
    const deliver = (delta: string) => {
      text += delta;
      this.service.appendDelta(conversationId, message.id, delta);
      hooks.onDelta?.(delta);
      for (let i = 0; i < delta.length; i += LIMITS.delta) {
        this.post({ type: 'delta', conversationId, messageId: message.id, text: delta.slice(i, i + LIMITS.delta) });
      }
    };
    try {
      if (!client) throw new TritonError('server-not-running', 'Not connected to a Triton server.', { operation: 'generate-stream', model: MODEL_NAME });
      const built = this.service.buildRequest(conversationId, {
        historyLen: s.historyTurns,
        maxInputTokens: DEFAULT_MODEL_SETTINGS.maxInputTokens,
        temperature: s.temperature,
        topP: s.topP,
        maxNewTokens: s.maxNewTokens,
      });
      if (!built.ok) {
        const error = built.code === 'PROMPT_TOO_LONG'
          ? vscode.l10n.t('The question is too long for the model\'s input budget (about {0} tokens). Shorten it.', built.estimatedInputTokens ?? 0)
          : vscode.l10n.t('There is no question to answer.');
        const done = await this.service.fail(conversationId, message.id, error);
        this.postDone(conversationId, done);
        return { status: 'failed', text, error };
      }
      const request = this.server.track((async () => {
        if (s.streaming) {
          for await (const ev of streamChat(client, MODEL_NAME, built.request, { signal: ctrl.signal, idleTimeoutMs: s.streamIdleTimeoutSeconds * 1000 })) {
            if (ev.type === 'delta') deliver(ev.text);
            else return ev;
          }
          throw new Error('stream ended without a final event');
        }
        const once = await chatOnce(client, MODEL_NAME, built.request, { signal: ctrl.signal, timeoutMs: s.requestTimeoutSeconds * 1000 });
        deliver(once.text);
        return once.final;
      })());
      const final = await request;
      const done = await this.service.finish(conversationId, message.id, final);
      this.postDone(conversationId, done);
      return { status: 'complete', text };
    } catch (e) {
      if (this.shuttingDown) return { status: 'stopped', text }; // saved as `streaming`: it comes back `interrupted`
      if (ctrl.signal.aborted || isTritonError(e, 'cancelled')) {
        const done = await this.service.stop(conversationId, message.id);
        this.postDone(conversationId, done);
        return { status: 'stopped', text };
      }
      const presentation = presentError(e);
      const error = clip(errorText(presentation), LIMITS.errorText);
      this.log.error(`chat: answer failed [${presentation.code}]`, e);
      const done = await this.service.fail(conversationId, message.id, error);
      this.postDone(conversationId, done);
      // A refused connection may mean the server died: let the controller find out and say so.
      if (isTritonError(e, 'server-not-running') || isTritonError(e, 'model-not-loaded')) void this.server.probe();
      return { status: 'failed', text, error };
    } finally {
      outer?.removeEventListener('abort', onOuter);
      if (this.streams.get(conversationId) === ctrl) this.streams.delete(conversationId);
      this.postState();
    }
  }

  // ---- view state ------------------------------------------------------------------------------------------

  private createConversation(activate = true): string {
    const c = this.service.create(this.settings.current.systemPrompt ? { systemPrompt: this.settings.current.systemPrompt } : {});
    if (activate) this.setActive(c.id);
    return c.id;
  }

  private setActive(id: string | null): void {
    this.activeId = id;
    void this.memento.update(ACTIVE_KEY, id ?? undefined);
  }

  private post(message: HostToWebview): void {
    this.poster?.(message);
  }

  private postDone(conversationId: string, m: StoredMessage): void {
    if (m.status === 'streaming') return;
    this.post({
      type: 'messageDone',
      conversationId,
      messageId: m.id,
      status: m.status,
      ...(m.finishReason ? { finishReason: m.finishReason } : {}),
      ...(m.promptTokens !== undefined ? { promptTokens: m.promptTokens } : {}),
      ...(m.completionTokens !== undefined ? { completionTokens: m.completionTokens } : {}),
      ...(m.historyTrimmed !== undefined ? { historyTrimmed: m.historyTrimmed } : {}),
      ...(m.error !== undefined ? { error: clip(m.error, LIMITS.errorText) } : {}),
    });
  }

  postState(): void {
    if (!this.poster) return;
    const active: Conversation | undefined = this.activeId ? this.service.get(this.activeId) : undefined;
    this.post({
      type: 'state',
      conversations: this.service.list().slice(0, LIMITS.conversations).map((c) => ({ ...c, title: clip(c.title, LIMITS.title) })),
      activeId: active ? active.id : null,
      messages: (active?.messages ?? []).slice(-LIMITS.messages).map(toView),
      server: this.serverView(),
      busy: active ? this.streams.has(active.id) : false,
    });
  }

  private serverView(): ServerView {
    const s = this.store.current;
    const server: ServerView['server'] = s.server === 'error' ? 'failed' : s.server === 'stopping' ? 'stopped' : s.server;
    const model: ServerView['model'] = s.server !== 'running' ? 'unknown' : s.model === 'unloading' ? 'unloaded' : s.model;
    const actions: ServerView['actions'] = [];
    if (s.mode === 'managed' && (s.server === 'stopped' || s.server === 'error')) actions.push('startServer');
    if (s.server === 'running' && (s.model === 'unloaded' || s.model === 'failed')) actions.push('loadModel');
    const err = s.serverError ?? s.modelError;
    const settingsRelated = err && ['weights-missing', 'weights-invalid', 'settings-invalid', 'port-allocated', 'image-missing', 'invalid-settings'].includes(err.code);
    if (settingsRelated || (s.mode === 'external' && s.server !== 'running')) actions.push('openSettings');
    const view: ServerView = { server, model, actions };
    if (err) view.reason = clip(err.code === 'model-load-failed' ? vscode.l10n.t('ChatGLM3 failed to load: {0}', err.message) : err.message, LIMITS.errorText);
    return view;
  }

  /** Stops listening; answers still streaming are saved as such (they reload as `interrupted`), then flushed. */
  async dispose(): Promise<void> {
    this.shuttingDown = true;
    this.poster = undefined;
    for (const d of this.subscriptions) d.dispose();
    await this.service.flush().catch((e: unknown) => this.log.error('Saving conversations failed', e));
    for (const ctrl of this.streams.values()) ctrl.abort();
    await Promise.race([Promise.allSettled([...this.running]), new Promise((r) => setTimeout(r, 2_000))]);
    await this.service.dispose().catch((e: unknown) => this.log.error('Saving conversations failed', e));
  }
}

function toView(m: StoredMessage): MessageView {
  const v: MessageView = { id: m.id, role: m.role, content: clip(m.content, LIMITS.content), status: m.status };
  if (m.error !== undefined) v.error = clip(m.error, LIMITS.errorText);
  if (m.finishReason !== undefined) v.finishReason = m.finishReason;
  if (m.promptTokens !== undefined) v.promptTokens = m.promptTokens;
  if (m.completionTokens !== undefined) v.completionTokens = m.completionTokens;
  if (m.historyTrimmed !== undefined) v.historyTrimmed = m.historyTrimmed;
  return v;
}

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

async function insertAtCursor(code: string): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Open an editor to insert the code into.'));
    return;
  }
  await editor.edit((b) => {
    for (const sel of editor.selections) b.replace(sel, code);
  });
}

async function openInEditor(code: string, language: string): Promise<void> {
  const known = language ? (await vscode.languages.getLanguages()).includes(language) : false;
  const doc = await vscode.workspace.openTextDocument({ content: code, language: known ? language : 'plaintext' });
  await vscode.window.showTextDocument(doc, { preview: false });
}
