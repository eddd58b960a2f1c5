// The chat's host side: the validated webview messages drive the ConversationService (persisted in global
// storage) and the core's AnswerRunner. Questions are saved before they are sent; Stop aborts the request (the
// closed connection makes Triton cancel it); a crash or a reload keeps the partial answer, marked.
import * as vscode from 'vscode';
import { AnswerRunner, toAnswerSettings, type AnswerOutcome, type ConversationService } from '../../core/chat';
import type { RunningAnswer } from '../../core/status/activity';
import { canInfer } from '../../core/state/lifecycle';
import { LIMITS, type HostToWebview, type WebviewToHost } from '../../protocol';
import { COMMANDS } from '../commandIds';
import type { SettingsService } from '../config/settingsService';
import { errorText, presentError } from '../errors/presentError';
import type { Log } from '../log';
import type { ServerController } from '../server/serverController';
import type { LifecycleStore } from '../state/lifecycleStore';
import { clip, deltaMessages, doneMessage, stateMessage, type SendToWebview } from './chatViewState';
import { copyCode, insertAtCursor, openInEditor } from './codeActions';

export type { AnswerOutcome } from '../../core/chat';

const ACTIVE_KEY = 'tritonChatglm.activeConversation';

export class ChatController implements vscode.Disposable {
  private activeId: string | null;
  private sendToView: SendToWebview | undefined;
  private readonly answers: AnswerRunner;
  private readonly answersChanged = new vscode.EventEmitter<void>();
  /** An answer (chat or Explain) started or ended: see runningAnswers(). */
  readonly onDidChangeAnswers = this.answersChanged.event;
  private readonly subscriptions: vscode.Disposable[] = [this.answersChanged];

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
    this.answers = new AnswerRunner({
      service,
      client: () => server.tritonClient,
      settings: () => toAnswerSettings(settings.current),
      track: (request) => server.track(request),
      checkServer: () => void server.probe(),
      describeFailure: (e) => {
        const presentation = presentError(e);
        return { code: presentation.code, text: clip(errorText(presentation), LIMITS.errorText) };
      },
      describeRefusal: (refusal) => refusal.code === 'prompt-too-long'
        ? vscode.l10n.t('The question is too long for the model\'s input budget (about {0} tokens). Shorten it.', refusal.estimatedInputTokens ?? 0)
        : vscode.l10n.t('There is no question to answer.'),
      log,
      onBusyChanged: () => { this.postState(); this.answersChanged.fire(); },
      onDelta: (conversationId, messageId, text) => { for (const m of deltaMessages(conversationId, messageId, text)) this.post(m); },
      onSettled: (conversationId, message) => {
        const done = doneMessage(conversationId, message);
        if (done) this.post(done);
      },
      onFailed: (conversationId, messageId, code) => this.offerRetry(conversationId, messageId, code),
    });
    this.subscriptions.push(store.onDidChange(() => this.postState()));
  }

  /** The chat view connects (or goes away: undefined). */
  connectView(send: SendToWebview | undefined): void {
    this.sendToView = send;
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
        case 'copyCode': await copyCode(msg.code); return;
        case 'insertCode': await insertAtCursor(msg.code); return;
        case 'openInEditor': await openInEditor(msg.code, msg.language); return;
        case 'startServer': await vscode.commands.executeCommand(COMMANDS.startServer); return;
        case 'loadModel': await vscode.commands.executeCommand(COMMANDS.loadModel); return;
        case 'openSettings': await vscode.commands.executeCommand(COMMANDS.openSettings); return;
        case 'retry': await this.retry(msg.messageId); return;
      }
    } catch (e) {
      this.log.error(`chat: ${msg.type} failed`, e);
      this.post({ type: 'error', message: clip(errorText(presentError(e)), LIMITS.errorText) });
    }
  }

  newChat(): void {
    this.setActive(this.createConversation());
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
    const id = this.activeId && this.service.get(this.activeId) ? this.activeId : this.setActive(this.createConversation());
    await this.service.appendUserMessage(id, text);
    this.postState();
    await this.answers.answer(id);
  }

  async regenerate(): Promise<void> {
    if (!this.activeId || !this.ensureReady()) return;
    await this.service.regenerate(this.activeId);
    this.postState();
    await this.answers.answer(this.activeId);
  }

  async editLast(text: string): Promise<void> {
    if (!this.activeId || !this.ensureReady()) return;
    await this.service.editLast(this.activeId, text);
    this.postState();
    await this.answers.answer(this.activeId);
  }

  stopActive(): void {
    if (this.activeId) this.answers.stop(this.activeId);
  }

  async delete(id: string): Promise<void> {
    this.answers.stop(id);
    await this.service.delete(id);
    if (this.activeId === id) this.setActive(this.service.list()[0]?.id ?? null);
    this.postState();
  }

  /**
   * A new conversation holding one question, answered like any other (used by Explain Selection). It is not
   * made active, so explaining ten selections does not flip the panel ten times.
   */
  async ask(question: string, signal: AbortSignal | undefined, onDelta?: (text: string) => void): Promise<{ conversationId: string; outcome: AnswerOutcome }> {
    const id = this.createConversation();
    await this.service.appendUserMessage(id, question);
    this.postState();
    const outcome = await this.answers.answer(id, signal, onDelta);
    return { conversationId: id, outcome };
  }

  /** Shows a conversation in the panel (Explain's "Continue in Chat"). */
  async reveal(conversationId: string): Promise<void> {
    if (!this.service.get(conversationId)) return;
    this.setActive(conversationId);
    await vscode.commands.executeCommand(COMMANDS.openChat);
    this.postState();
    this.post({ type: 'focusInput' });
  }

  /** The answers being generated now (chat and Explain), with their conversations' titles. */
  runningAnswers(): RunningAnswer[] {
    return this.answers.answering().map((conversationId) => ({ conversationId, title: this.service.get(conversationId)?.title ?? '' }));
  }

  /** A lost connection (the server still runs) is worth asking again: the banner offers Retry for that answer. */
  private offerRetry(conversationId: string, messageId: string, code: string): void {
    if (code !== 'connection-lost' || conversationId !== this.activeId) return;
    this.post({ type: 'error', message: vscode.l10n.t('The connection to the server was lost; the answer is incomplete. Retry asks the same question again.'), retry: messageId });
  }

  /** Retry: asks the question of failed answer `answerId` again in the same conversation; the failed answer stays. */
  private async retry(answerId: string): Promise<void> {
    const messages = this.activeId ? this.service.get(this.activeId)?.messages ?? [] : [];
    const at = messages.findIndex((m) => m.id === answerId && m.role === 'assistant' && m.status === 'failed');
    const question = at > 0 ? messages[at - 1] : undefined;
    if (question?.role === 'user') await this.send(question.content);
  }

  private ensureReady(): boolean {
    if (canInfer(this.store.current) && this.server.tritonClient) return true;
    this.post({ type: 'error', message: vscode.l10n.t('The model is not ready, so questions cannot be sent yet.') });
    this.postState();
    return false;
  }

  private createConversation(): string {
    const systemPrompt = this.settings.current.systemPrompt;
    return this.service.create(systemPrompt ? { systemPrompt } : {}).id;
  }

  private setActive<T extends string | null>(id: T): T {
    this.activeId = id;
    void this.memento.update(ACTIVE_KEY, id ?? undefined);
    return id;
  }

  private post(message: HostToWebview): void {
    this.sendToView?.(message);
  }

  postState(): void {
    if (!this.sendToView) return;
    const active = this.activeId ? this.service.get(this.activeId) : undefined;
    this.post(stateMessage(this.service.list(), active, active ? this.answers.isAnswering(active.id) : false, this.store.current));
  }

  /** Stops listening; answers still streaming are saved as such (they reload as `interrupted`), then flushed. */
  async dispose(): Promise<void> {
    this.sendToView = undefined;
    for (const d of this.subscriptions) d.dispose();
    await this.answers.dispose();
    await this.service.dispose().catch((e: unknown) => this.log.error('Saving conversations failed', e));
  }
}
