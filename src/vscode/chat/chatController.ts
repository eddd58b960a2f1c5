// The chat's host side: the validated webview messages drive the ConversationService (persisted in global
// storage) and the core's AnswerRunner; the history list and the Markdown export act on conversations through it.
// Questions are saved before they are sent; Stop aborts the request (the closed connection makes Triton cancel it);
// a crash or a reload keeps the partial answer, marked.
import * as vscode from 'vscode';
import {
  AnswerRunner,
  commandPrompt,
  composerBudget,
  parseSlashCommand,
  toAnswerSettings,
  type AnswerOutcome,
  type Attachment,
  type Conversation,
  type ConversationService,
  type ConversationSummary,
} from '../../core/chat';
import type { RunningAnswer } from '../../core/status/activity';
import { canInfer } from '../../core/state/lifecycle';
import { LIMITS, type HostToWebview, type WebviewToHost } from '../../protocol';
import { COMMANDS, VSCODE_COMMANDS } from '../commandIds';
import type { SettingsService } from '../config/settingsService';
import { errorText, presentError } from '../errors/presentError';
import type { Log } from '../log';
import type { ServerController } from '../server/serverController';
import type { LifecycleStore } from '../state/lifecycleStore';
import type { ProposalReviews } from '../edit/proposalReview';
import { applyToSelection } from './applyToSelection';
import { clip, deltaMessages, doneMessage, stateMessage } from './chatViewState';
import { copyCode, insertAtCursor, openInEditor } from './codeActions';
import { EditorContext } from './editorContext';
import { ExitNotice } from './exitNotice';
import { openChatLink } from './linkOpener';

export type { AnswerOutcome } from '../../core/chat';

const ACTIVE_KEY = 'tritonChatglm.activeConversation';
/**
 * True while the chat panel has the keyboard focus: the `when` of its keybindings (package.json). A webview view
 * is an iframe laid over its pane, so VS Code's own focusedView does not reliably follow it.
 */
const CHAT_FOCUS_CONTEXT = 'tritonChatglm.chatFocus';

/** The chat view as the controller sees it (see ChatViewProvider). */
export interface ChatView {
  post(message: HostToWebview): void;
  /** The active conversation's title, shown next to the view's name ('' for a new chat). */
  showTitle(title: string): void;
}

export class ChatController implements vscode.Disposable {
  private activeId: string | null;
  private view: ChatView | undefined;
  private readonly answers: AnswerRunner;
  private readonly answersChanged = new vscode.EventEmitter<void>();
  /** An answer (chat or Explain) started or ended: see runningAnswers(). */
  readonly onDidChangeAnswers = this.answersChanged.event;
  private readonly historyChanged = new vscode.EventEmitter<void>();
  /** Conversations were added, changed or removed (the open history list refreshes). */
  readonly onDidChangeHistory = this.historyChanged.event;
  private readonly subscriptions: vscode.Disposable[] = [this.answersChanged, this.historyChanged];
  private readonly exitNotice = new ExitNotice();

  constructor(
    private readonly service: ConversationService,
    private readonly server: ServerController,
    private readonly store: LifecycleStore,
    private readonly settings: SettingsService,
    private readonly memento: vscode.Memento,
    private readonly log: Log,
    private readonly context: EditorContext,
    private readonly proposals: ProposalReviews,
  ) {
    // The meter follows the chips: each new set of chips comes with the figures of the next request.
    context.connect((m) => { this.post(m); if (m.type === 'attachments') this.postBudget(); });
    const saved = memento.get<string>(ACTIVE_KEY);
    this.activeId = saved && service.get(saved) ? saved : service.list()[0]?.id ?? null;
    this.answers = new AnswerRunner({
      service,
      client: () => server.tritonClient,
      modelName: () => server.modelName,
      settings: () => toAnswerSettings(settings.current),
      track: (request) => server.track(request),
      checkServer: () => void server.probe(),
      explainFailure: (e) => server.explainFailure(e),
      modelFailed: (e) => server.reportModelFailure(e),
      describeFailure: (e) => {
        const presentation = presentError(e);
        return { code: presentation.code, text: clip(errorText(presentation), LIMITS.errorText) };
      },
      describeRefusal: (refusal) => {
        switch (refusal.code) {
          case 'prompt-too-long':
            return vscode.l10n.t('The question is too long for the model\'s input budget (about {0} tokens). Shorten it.', refusal.estimatedInputTokens ?? 0);
          case 'too-long-to-continue':
            return vscode.l10n.t('The answer is too long to be continued within the model\'s input budget.');
          default:
            return vscode.l10n.t('There is no question to answer.');
        }
      },
      log,
      onBusyChanged: () => { this.changed(); this.answersChanged.fire(); },
      onDelta: (conversationId, messageId, text) => { for (const m of deltaMessages(conversationId, messageId, text)) this.post(m); },
      onSettled: (conversationId, message) => {
        const done = doneMessage(conversationId, message);
        if (done) this.post(done);
      },
      onFailed: (conversationId, messageId, code) => this.offerRetry(conversationId, messageId, code),
    });
    this.subscriptions.push(store.onDidChange(() => this.postState()), server.onDidChangeSetup(() => this.post(server.setupMessage())),
      // A stopped server serves the chosen model next: the panel names the new choice.
      settings.onDidChange((change) => { if (change.keys.includes('model')) this.postState(); }));
  }

  /** The chat view connects (or goes away: undefined). */
  connectView(view: ChatView | undefined): void {
    this.view = view;
  }

  /** Triton's name of the model the server serves, else the chosen one (answers that do not name theirs). */
  get modelName(): string {
    return this.server.modelName;
  }

  get activeConversationId(): string | null {
    return this.activeId;
  }

  /** Called for every message that passed the protocol parser. */
  async handle(msg: WebviewToHost): Promise<void> {
    try {
      if (EditorContext.handles(msg)) { await this.context.handle(msg, () => this.activeAttachments()); return; }
      switch (msg.type) {
        case 'ready': this.postState(); this.context.postChips(); this.post(this.server.setupMessage()); return;
        case 'send': await this.send(msg.text); return;
        case 'stop': this.stopActive(); return;
        case 'regenerate': await this.regenerate(msg.messageId); return;
        case 'editQuestion': await this.editQuestion(msg.messageId, msg.text); return;
        case 'continueAnswer': await this.continueAnswer(msg.messageId); return;
        case 'copyMessage': await this.copyMessage(msg.messageId); return;
        case 'focusChanged': await this.setFocused(msg.focused); return;
        case 'copyCode': await copyCode(msg.code); return;
        case 'insertCode': await insertAtCursor(msg.code); return;
        case 'applyCode': await applyToSelection(msg.code, this.proposals); return;
        case 'openLink': await openChatLink(msg.url, msg.text); return;
        case 'openInEditor': await openInEditor(msg.code, msg.language); return;
        case 'startServer': await vscode.commands.executeCommand(COMMANDS.startServer); return;
        case 'loadModel': await vscode.commands.executeCommand(COMMANDS.loadModel); return;
        case 'openSettings': await vscode.commands.executeCommand(COMMANDS.openSettings); return;
        case 'retry': await this.retry(msg.messageId); return;
        case 'setupAction': await this.server.runSetupAction(msg); return;
        case 'setupModel': await this.server.runSetupModel(msg); return;
      }
    } catch (e) {
      this.log.error(`chat: ${msg.type} failed`, e);
      this.post({ type: 'error', message: clip(errorText(presentError(e)), LIMITS.errorText) });
    }
  }

  /** A new chat: nothing is created until its first question (an empty conversation is never kept). */
  newChat(): void {
    this.setActive(null);
    this.postState();
    this.focusInput();
  }

  focusInput(): void {
    this.post({ type: 'focusInput' });
  }

  /** Whether the panel has the keyboard focus (the view also reports losing it when it is hidden or closed). */
  async setFocused(focused: boolean): Promise<void> {
    await vscode.commands.executeCommand(VSCODE_COMMANDS.setContext, CHAT_FOCUS_CONTEXT, focused);
  }

  select(id: string): void {
    if (!this.service.get(id)) return;
    this.setActive(id);
    this.postState();
  }

  /** Saved conversations, newest first (the history list). */
  list(): ConversationSummary[] {
    return this.service.list();
  }

  /** A copy of a conversation (the export). */
  conversation(id: string): Conversation | undefined {
    return this.service.get(id);
  }

  /**
   * Sends a question in the active conversation (a new one when there is none). A `/` command at its start: `/new`
   * starts a new chat (the rest, if any, is its first question); the others send their template (slashCommands.ts)
   * while the transcript keeps what was typed; `/fix` attaches the current file's problems when no chip has them.
   */
  async send(typed: string): Promise<void> {
    let text = typed;
    let parsed = parseSlashCommand(text);
    if (parsed?.command === 'new') {
      this.newChat();
      if (!parsed.rest) return;
      text = parsed.rest;
      parsed = parseSlashCommand(text);
      if (parsed?.command === 'new') parsed = undefined;
    }
    if (!this.ensureReady()) return;
    const id = this.activeId && this.service.get(this.activeId) ? this.activeId : this.setActive(this.createConversation());
    if (parsed?.command === 'fix' && !this.context.hasProblems()) this.context.addProblems(false);
    const modelText = parsed && parsed.command !== 'new' ? commandPrompt(parsed.command, parsed.rest, (english) => vscode.l10n.t(english)) : undefined;
    // Checked against the input budget before anything is sent; cancelled, the question goes back into the input.
    const attachments = await this.context.forSend(modelText ?? text, this.service.get(id)?.systemPrompt);
    if (!attachments) { this.post({ type: 'draft', text }); return; }
    await this.service.appendUserMessage(id, text, attachments, modelText);
    this.context.sent(attachments);
    this.changed();
    await this.answers.answer(id);
  }

  /** Answers the question of `answerId` again; the turns after it are replaced. */
  async regenerate(answerId: string): Promise<void> {
    await this.changeAndAnswer((id) => this.service.regenerateAnswer(id, answerId));
  }

  /** Replaces question `questionId` and answers it; the turns after it are replaced. */
  async editQuestion(questionId: string, text: string): Promise<void> {
    const parsed = parseSlashCommand(text);
    const modelText = parsed && parsed.command !== 'new' ? commandPrompt(parsed.command, parsed.rest, (english) => vscode.l10n.t(english)) : undefined;
    await this.changeAndAnswer((id) => this.service.editQuestion(id, questionId, text, modelText));
  }

  /** Changes the active conversation so that its last message is a question, then answers it. */
  private async changeAndAnswer(change: (conversationId: string) => Promise<unknown>): Promise<void> {
    const id = this.activeId;
    if (!id || !this.ensureReady()) return;
    await change(id);
    this.changed();
    await this.answers.answer(id);
  }

  /** Continues the last answer (cut at the length limit, or stopped); the new text is appended to it. */
  async continueAnswer(answerId: string): Promise<void> {
    const id = this.activeId;
    if (!id || !this.ensureReady()) return;
    await this.answers.continue(id, answerId);
  }

  async copyMessage(messageId: string): Promise<void> {
    const message = this.activeId ? this.service.get(this.activeId)?.messages.find((m) => m.id === messageId) : undefined;
    if (message) await copyCode(message.content);
  }

  stopActive(): void {
    if (this.activeId) this.answers.stop(this.activeId);
  }

  /** Stops every answer of this window, in any conversation (explanations included: they are answers too). */
  stopAll(): void {
    for (const id of this.answers.answering()) this.answers.stop(id);
  }

  /** Deletes a conversation (stopping its answer); returns it for restore(). */
  async delete(id: string): Promise<Conversation | undefined> {
    if (!this.service.get(id)) return undefined;
    this.answers.stop(id);
    const removed = await this.service.delete(id);
    if (this.activeId === id) this.setActive(null);
    this.changed();
    return removed;
  }

  /** The Undo of delete(). */
  async restore(conversation: Conversation): Promise<void> {
    await this.service.restore(conversation);
    this.changed();
  }

  async rename(id: string, title: string): Promise<void> {
    await this.service.rename(id, title);
    this.changed();
  }

  /**
   * A new conversation holding one question, answered like any other (used by Explain Selection, which names it
   * after the file and lines). It is not made active, so explaining ten selections does not flip the panel ten times.
   */
  async ask(question: string, signal: AbortSignal | undefined, onDelta?: (text: string) => void, options: { title?: string } = {}): Promise<{ conversationId: string; outcome: AnswerOutcome }> {
    const id = this.createConversation({ kind: 'explain', ...options });
    await this.service.appendUserMessage(id, question);
    this.changed();
    const outcome = await this.answers.answer(id, signal, onDelta);
    if (outcome.status === 'failed' && outcome.cause !== undefined) this.exitNotice.offer(outcome.cause);
    return { conversationId: id, outcome };
  }

  /** Shows a conversation in the panel (Explain's "Continue in Chat"). */
  async reveal(conversationId: string): Promise<void> {
    if (!this.service.get(conversationId)) return;
    this.setActive(conversationId);
    await vscode.commands.executeCommand(COMMANDS.openChat);
    this.postState();
    this.focusInput();
  }

  /** Attachments of the questions of the conversation shown (their transcript chips open them). */
  private activeAttachments(): Attachment[] {
    return (this.activeId ? this.service.get(this.activeId)?.messages : undefined)?.flatMap((m) => m.attachments ?? []) ?? [];
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

  private createConversation(options: { kind?: 'explain'; title?: string } = {}): string {
    const systemPrompt = this.settings.current.systemPrompt;
    return this.service.create({ ...options, ...(systemPrompt ? { systemPrompt } : {}) }).id;
  }

  private setActive<T extends string | null>(id: T): T {
    this.activeId = id;
    void this.memento.update(ACTIVE_KEY, id ?? undefined);
    return id;
  }

  private post(message: HostToWebview): void {
    this.view?.post(message);
  }

  /** Conversations changed: the panel and the history list follow. */
  private changed(): void {
    this.historyChanged.fire();
    this.postState();
  }

  postState(): void {
    if (!this.view) return;
    const active = this.activeId ? this.service.get(this.activeId) : undefined;
    const busy = active ? this.answers.isAnswering(active.id) : false;
    this.post(stateMessage(active, busy, this.store.current, this.server.modelName, active?.messages.some((m) => m.role === 'user') ? undefined : this.lastQuestion()));
    this.view.showTitle(active?.title ?? '');
    this.postBudget();
  }

  /** The meter's figures for the next question of the conversation shown (the panel adds its chips and draft). */
  private postBudget(): void {
    if (!this.view) return;
    const active = this.activeId ? this.service.get(this.activeId) : undefined;
    const settings = this.settings.current;
    const budget = composerBudget(active, { historyTurns: settings.historyTurns, newChatSystemPrompt: settings.systemPrompt }, (english) => vscode.l10n.t(english));
    this.post({ type: 'budget', ...budget, historyTurns: budget.historyTurns.slice(-LIMITS.messages) });
  }

  /** The last question of the most recent chat (what ArrowUp recalls in a new chat). */
  private lastQuestion(): string | undefined {
    const recent = this.service.list().find((c) => c.kind === 'chat');
    const messages = recent ? this.service.get(recent.id)?.messages ?? [] : [];
    return [...messages].reverse().find((m) => m.role === 'user')?.content;
  }

  /** Stops listening; answers still streaming are saved as such (they reload as `interrupted`), then flushed. */
  async dispose(): Promise<void> {
    this.view = undefined;
    for (const d of this.subscriptions) d.dispose();
    await this.answers.dispose();
    await this.service.dispose().catch((e: unknown) => this.log.error('Saving conversations failed', e));
  }
}
