// Conversation operations for the chat panel and the CLI. State lives in memory; saving is throttled while an
// answer streams, but every user message is flushed to the store before the caller may send the request.
import { buildContinuationRequest, type ContinuationRefusal } from './continuation';
import type { Attachment } from './attachments';
import {
  canContinue,
  newId as defaultNewId,
  markInterrupted,
  summarize,
  titleFrom,
  type Conversation,
  type ConversationKind,
  type ConversationSummary,
  type StoredMessage,
} from './conversation';
import type { FinishReason } from './messages';
import { buildChatRequest, type BuildRequestOptions, type BuildRequestResult } from './requestBuilder';
import type { ConversationStore, LoadProblem } from './store';

export type ChatErrorCode =
  | 'not-found'
  | 'message-not-found'
  | 'empty-text'
  | 'answer-in-progress'
  | 'nothing-to-regenerate'
  | 'nothing-to-edit'
  | 'nothing-to-continue'
  | 'not-streaming';

/** Errors carry a code for the UI to localize and an English message for logs and the CLI. */
export class ChatError extends Error {
  constructor(readonly code: ChatErrorCode, message: string) {
    super(message);
    this.name = 'ChatError';
  }
}

export interface AnswerFinal {
  finishReason: FinishReason;
  promptTokens: number;
  completionTokens: number;
  /** Messages dropped by the model for its token budget (ChatStreamEvent.historyTrimmed). */
  historyTrimmed: number;
}

export interface ConversationServiceOptions {
  /** Delay before a change made while streaming is written (default 1000 ms). */
  persistDelayMs?: number;
  now?: () => number;
  newId?: () => string;
  /** Told about every change (the chat view re-renders its list / state from it). */
  onDidChange?: (conversationId: string | undefined) => void;
  /** Told when a background (throttled) save fails; explicit flush() calls reject instead. */
  onSaveError?: (error: unknown) => void;
}

export class ConversationService {
  private readonly conversations = new Map<string, Conversation>();
  /** Client-side trimming of the request being answered, added to the model's own count at finish(). */
  private readonly pendingTrim = new Map<string, number>();
  /** Deleted while an answer was streaming: the stream may still deliver and end into it (never saved). */
  private readonly detached = new Map<string, Conversation>();
  /** Answers being continued (by conversation): the answer tokens counted before the continuation began. */
  private readonly continuing = new Map<string, { messageId: string; completionTokens: number }>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private dirty = false;
  private saving: Promise<void> = Promise.resolve();
  private readonly persistDelayMs: number;
  private readonly now: () => number;
  private readonly makeId: () => string;

  constructor(private readonly store: ConversationStore, private readonly options: ConversationServiceOptions = {}) {
    this.persistDelayMs = options.persistDelayMs ?? 1000;
    this.now = options.now ?? Date.now;
    this.makeId = options.newId ?? defaultNewId;
  }

  /** Loads the store; returns its problems (damaged file, restored backup) for the caller to show. */
  async init(): Promise<LoadProblem[]> {
    const result = await this.store.load();
    this.conversations.clear();
    for (const c of result.conversations) this.conversations.set(c.id, markInterrupted(c));
    return result.problems;
  }

  /** Newest first; a conversation nobody wrote in yet is not listed (nor saved, see flush). */
  list(): ConversationSummary[] {
    return [...this.conversations.values()].filter((c) => c.messages.length > 0).sort((a, b) => b.updatedAt - a.updatedAt).map(summarize);
  }

  /** A deep copy, safe to hand to the webview or keep. */
  get(id: string): Conversation | undefined {
    const c = this.conversations.get(id);
    return c ? structuredClone(c) : undefined;
  }

  /** A title given here (Explain's "Explain a.py:3–9") is kept; otherwise the first question names it. */
  create(options: { systemPrompt?: string; kind?: ConversationKind; title?: string } = {}): Conversation {
    const t = this.now();
    const c: Conversation = { id: this.makeId(), title: options.title ? titleFrom(options.title) : '', createdAt: t, updatedAt: t, messages: [] };
    if (options.kind === 'explain') c.kind = 'explain';
    if (options.systemPrompt) c.systemPrompt = options.systemPrompt;
    this.conversations.set(c.id, c);
    this.changed(c.id, false);
    return structuredClone(c);
  }

  /**
   * Adds the question (with the editor context attached to it, if any) and writes it to the store before returning:
   * it survives whatever happens to the request.
   */
  async appendUserMessage(conversationId: string, text: string, attachments: readonly Attachment[] = [], modelText?: string): Promise<StoredMessage> {
    const c = this.must(conversationId);
    if (text.trim() === '') throw new ChatError('empty-text', 'The message is empty.');
    this.refuseWhileAnswering(c);
    const m: StoredMessage = { id: this.makeId(), role: 'user', content: text, status: 'complete', createdAt: this.now() };
    if (attachments.length) m.attachments = structuredClone([...attachments]);
    if (modelText !== undefined) m.modelText = modelText;
    c.messages.push(m);
    if (!c.title) c.title = titleFrom(text);
    this.touch(c);
    await this.flush();
    return structuredClone(m);
  }

  /** Adds an empty `streaming` assistant message answering the last question; `model` names who writes it. */
  startAnswer(conversationId: string, model?: string): StoredMessage {
    const c = this.must(conversationId);
    this.refuseWhileAnswering(c);
    const last = c.messages.at(-1);
    if (!last || last.role !== 'user') throw new ChatError('nothing-to-regenerate', 'There is no question to answer.');
    const m: StoredMessage = { id: this.makeId(), role: 'assistant', content: '', status: 'streaming', createdAt: this.now(), ...(model ? { model } : {}) };
    c.messages.push(m);
    this.touch(c);
    return { ...m };
  }

  /** In memory; written by the throttled save (a crash loses at most persistDelayMs of text, marked interrupted). */
  appendDelta(conversationId: string, messageId: string, text: string): void {
    if (text === '') return;
    const m = this.streamingMessage(conversationId, messageId);
    m.content += text;
    this.touch(this.answering(conversationId), false);
  }

  async finish(conversationId: string, messageId: string, final: AnswerFinal): Promise<StoredMessage> {
    const c = this.answering(conversationId);
    const m = this.streamingMessage(conversationId, messageId);
    m.status = 'complete';
    m.finishReason = final.finishReason;
    m.promptTokens = final.promptTokens;
    // A continued answer counts the tokens of all its parts.
    const continued = this.continuing.get(conversationId);
    m.completionTokens = final.completionTokens + (continued?.messageId === messageId ? continued.completionTokens : 0);
    this.continuing.delete(conversationId);
    const trimmed = (this.pendingTrim.get(conversationId) ?? 0) + final.historyTrimmed;
    this.pendingTrim.delete(conversationId);
    if (trimmed > 0) m.historyTrimmed = trimmed;
    this.detached.delete(conversationId);
    this.touch(c);
    await this.flush();
    return { ...m };
  }

  /** Keeps the partial answer, marked `failed` with the error text. */
  async fail(conversationId: string, messageId: string, error: string): Promise<StoredMessage> {
    return this.end(conversationId, messageId, 'failed', error);
  }

  /** Keeps the partial answer, marked `stopped`. */
  async stop(conversationId: string, messageId: string): Promise<StoredMessage> {
    return this.end(conversationId, messageId, 'stopped');
  }

  /** Drops the last answer (whatever its status) so the last question can be answered again with startAnswer(). */
  async regenerate(conversationId: string): Promise<StoredMessage> {
    const c = this.must(conversationId);
    const last = c.messages.at(-1);
    if (last?.role === 'assistant') return this.regenerateAnswer(conversationId, last.id);
    this.refuseWhileAnswering(c);
    if (!last) throw new ChatError('nothing-to-regenerate', 'There is no question to answer again.');
    return { ...last };
  }

  /**
   * Drops the answer `answerId` and every later turn, so that its question (returned) is the last message and can be
   * answered again with startAnswer(). Any answer, not only the last one: the turns after it are replaced.
   */
  async regenerateAnswer(conversationId: string, answerId: string): Promise<StoredMessage> {
    const c = this.must(conversationId);
    this.refuseWhileAnswering(c);
    const idx = c.messages.findIndex((m) => m.id === answerId);
    const question = c.messages[idx - 1];
    if (idx < 1 || c.messages[idx].role !== 'assistant' || question.role !== 'user') {
      throw new ChatError('nothing-to-regenerate', 'There is no question to answer again.');
    }
    c.messages.splice(idx);
    this.touch(c);
    await this.flush();
    return { ...question };
  }

  /** Replaces the text of the last question and drops its answer; the caller then starts a new answer. */
  async editLast(conversationId: string, text: string): Promise<StoredMessage> {
    const c = this.must(conversationId);
    const last = [...c.messages].reverse().find((m) => m.role === 'user');
    if (!last) throw new ChatError('nothing-to-edit', 'There is no question to edit.');
    return this.editQuestion(conversationId, last.id, text);
  }

  /**
   * Replaces the text of question `questionId` and drops everything after it (its answer and the later turns, as
   * Copilot does); the caller then starts a new answer. A title taken from the first question follows its edit.
   */
  /** `modelText`: what the model receives for the new text (a command's template), absent for the text itself. */
  async editQuestion(conversationId: string, questionId: string, text: string, modelText?: string): Promise<StoredMessage> {
    const c = this.must(conversationId);
    if (text.trim() === '') throw new ChatError('empty-text', 'The message is empty.');
    this.refuseWhileAnswering(c);
    const idx = c.messages.findIndex((m) => m.id === questionId);
    if (idx < 0 || c.messages[idx].role !== 'user') throw new ChatError('nothing-to-edit', 'There is no such question to edit.');
    const first = c.messages.findIndex((m) => m.role === 'user');
    const wasAutoTitle = c.title === titleFrom(c.messages[first].content);
    c.messages.splice(idx + 1);
    const { modelText: _old, ...question } = c.messages[idx];
    c.messages[idx] = { ...question, content: text, createdAt: this.now(), ...(modelText !== undefined ? { modelText } : {}) };
    if (idx === first && wasAutoTitle) c.title = titleFrom(text); // a title the user chose is kept
    this.touch(c);
    await this.flush();
    return { ...c.messages[idx] };
  }

  /**
   * Reopens the last answer, cut at the length limit, for more text: it becomes `streaming` again (deltas append to
   * it) and finish() records the final state with the answer tokens of both parts. Build its request with
   * buildContinueRequest().
   */
  startContinuation(conversationId: string, answerId: string): StoredMessage {
    const c = this.must(conversationId);
    this.refuseWhileAnswering(c);
    const m = c.messages.at(-1);
    if (!m || m.id !== answerId || !canContinue(m)) {
      throw new ChatError('nothing-to-continue', 'Only the last answer, cut at the length limit, can be continued.');
    }
    this.continuing.set(conversationId, { messageId: m.id, completionTokens: m.completionTokens ?? 0 });
    m.status = 'streaming';
    this.touch(c);
    return { ...m };
  }

  /** Deletes a conversation; returns a copy of it for restore() (the Undo of the history list). */
  async delete(conversationId: string): Promise<Conversation> {
    const c = this.must(conversationId);
    this.conversations.delete(conversationId);
    if (this.streamingOf(c)) this.detached.set(conversationId, c);
    this.pendingTrim.delete(conversationId);
    this.changed(conversationId, false);
    await this.flush();
    return structuredClone(c);
  }

  /** Puts a deleted conversation back (an answer that was streaming in it comes back `interrupted`). */
  async restore(conversation: Conversation): Promise<void> {
    if (this.conversations.has(conversation.id)) return;
    this.conversations.set(conversation.id, structuredClone(markInterrupted(conversation)));
    this.changed(conversation.id, false);
    await this.flush();
  }

  async rename(conversationId: string, title: string): Promise<void> {
    const c = this.must(conversationId);
    const t = titleFrom(title);
    if (!t) throw new ChatError('empty-text', 'The title is empty.');
    c.title = t;
    // A new name is not new activity: the chat keeps its place (and its "Today"/"Yesterday" group) in the history.
    this.touch(c, false);
    await this.flush();
  }

  /**
   * The request for the last question (see buildChatRequest for the history policy). Remembers how many messages
   * were trimmed so finish() can record the total on the answer.
   */
  buildRequest(conversationId: string, options: BuildRequestOptions = {}): BuildRequestResult {
    const result = buildChatRequest(this.must(conversationId), options);
    this.remember(conversationId, result);
    return result;
  }

  /** The request that continues the answer opened by startContinuation() (see continuation.ts). */
  buildContinueRequest(conversationId: string, answerId: string, options: BuildRequestOptions = {}): BuildRequestResult | ContinuationRefusal {
    const result = buildContinuationRequest(this.must(conversationId), answerId, options);
    this.remember(conversationId, result);
    return result;
  }

  /** Writes pending changes now (and waits for any save in flight). If the write fails the changes stay pending. */
  async flush(): Promise<void> {
    if (this.timer) { clearTimeout(this.timer); this.timer = undefined; }
    if (this.dirty) {
      this.dirty = false;
      // A copy (deltas keep arriving while the store writes), without conversations nobody wrote in yet (each
      // New Chat click would otherwise leave an empty one behind).
      const snapshot = structuredClone([...this.conversations.values()].filter((c) => c.messages.length > 0));
      this.saving = this.saving.catch(() => undefined).then(() => this.store.save(snapshot)).catch((e: unknown) => {
        this.dirty = true; // retried by the next flush or throttled save
        throw e;
      });
    }
    await this.saving;
  }

  /** Flushes and stops the timer; call on deactivate. Answers still streaming are saved as `streaming` and come back `interrupted`. */
  async dispose(): Promise<void> {
    await this.flush();
  }

  private async end(conversationId: string, messageId: string, status: 'failed' | 'stopped', error?: string): Promise<StoredMessage> {
    const c = this.answering(conversationId);
    const m = this.streamingMessage(conversationId, messageId);
    m.status = status;
    if (error !== undefined) m.error = error;
    if (status === 'stopped') m.finishReason = 'cancelled';
    this.pendingTrim.delete(conversationId);
    this.continuing.delete(conversationId);
    this.detached.delete(conversationId);
    this.touch(c);
    await this.flush();
    return { ...m };
  }

  private must(id: string): Conversation {
    const c = this.conversations.get(id);
    if (!c) throw new ChatError('not-found', `No conversation ${id}.`);
    return c;
  }

  private streamingOf(c: Conversation): StoredMessage | undefined {
    return c.messages.find((m) => m.status === 'streaming');
  }

  private refuseWhileAnswering(c: Conversation): void {
    if (this.streamingOf(c)) throw new ChatError('answer-in-progress', 'An answer is still being generated in this conversation.');
  }

  /** Remembers the client-side trimming of a request built for the answer now running (added at finish()). */
  private remember(conversationId: string, result: BuildRequestResult | ContinuationRefusal): void {
    if (result.ok) this.pendingTrim.set(conversationId, result.trimmedByTurns + result.trimmedByTokens);
  }

  /** A conversation an answer is being written into: a live one, or one deleted mid-answer. */
  private answering(id: string): Conversation {
    return this.detached.get(id) ?? this.must(id);
  }

  private streamingMessage(conversationId: string, messageId: string): StoredMessage {
    const m = this.answering(conversationId).messages.find((x) => x.id === messageId);
    if (!m) throw new ChatError('message-not-found', `No message ${messageId}.`);
    if (m.status !== 'streaming') throw new ChatError('not-streaming', `Message ${messageId} is not being generated.`);
    return m;
  }

  /** Bumps updatedAt (list order) and schedules a throttled save. */
  private touch(c: Conversation, bump = true): void {
    if (bump) c.updatedAt = Math.max(this.now(), c.updatedAt);
    this.changed(c.id, true);
  }

  private changed(id: string | undefined, schedule: boolean): void {
    this.dirty = true;
    if (schedule && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flush().catch((e) => this.options.onSaveError?.(e));
      }, this.persistDelayMs);
      // Node: do not keep the process (CLI, tests) alive just for a pending save.
      (this.timer as { unref?: () => void }).unref?.();
    }
    this.options.onDidChange?.(id);
  }
}
