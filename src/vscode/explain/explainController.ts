// Explain Selection: every selection (multi-cursor included) becomes its own request, all sent together within
// the concurrency setting so the server batches them. Each answer streams into a comment thread anchored on the
// selected lines and titled with the file and lines (explanationThread.ts: brief, one line, whatever the count),
// and is kept as a chat conversation the user can continue. No notification (the status bar says what runs); the
// threads of an editor go when its last tab closes; Dismiss All can be undone. While an explanation waits, its
// thread says where (explainWaiting.ts).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { canInfer } from '../../core/state/lifecycle';
import type { ActivityBoard } from '../../core/status/activity';
import { serverQueue, type ServerQueue } from '../../core/status/schedulerFigures';
import type { TritonClient } from '../../core/triton';
import type { ChatController } from '../chat/chatController';
import type { EditorContext } from '../chat/editorContext';
import { COMMANDS, VSCODE_COMMANDS } from '../commandIds';
import type { SettingsService } from '../config/settingsService';
import type { Log } from '../log';
import { offerToGetReady } from '../server/offerToGetReady';
import type { LifecycleStore } from '../state/lifecycleStore';
import { buildExplainPrompt, usableSelections } from '../../core/explain/explainPrompt';
import { fanout } from '../../core/explain/fanout';
import type { ExplainPhase } from '../../core/explain/queuePosition';
import { selectedLines, selectionLocation } from '../../core/explain/selectionLocation';
import { ExplanationThread, type ThreadSnapshot } from './explanationThread';
import { modelDisplayName } from '../../core/models/choice';
import { ExplainRun, QUEUE_POLL_MS } from './explainWaiting';

/** True while explanation threads are shown (Dismiss All Explanations in the palette). */
export const EXPLANATIONS_CONTEXT = 'tritonChatglm.hasExplanations';

/** Comment bodies are re-rendered at most this often while streaming (each update re-lays out the editor). */
const RENDER_INTERVAL_MS = 100;

export class ExplainController implements vscode.Disposable {
  private readonly comments: vscode.CommentController;
  private readonly conversationOf = new WeakMap<vscode.CommentThread, string>();
  private readonly threads = new Map<vscode.CommentThread, ExplanationThread>();
  private readonly runs = new Set<AbortController>();
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly chat: ChatController,
    private readonly store: LifecycleStore,
    private readonly settings: SettingsService,
    private readonly log: Log,
    private readonly activity: ActivityBoard,
    private readonly client: () => TritonClient | undefined,
    private readonly editorContext: EditorContext,
    /** Triton's name of the model that answers (its queue is read off the metrics). */
    private readonly modelName: () => string,
  ) {
    this.comments = vscode.comments.createCommentController('tritonChatglm.explain', vscode.l10n.t('ChatGLM explanations'));
    this.comments.options = { placeHolder: '', prompt: '' };
    // An editor's explanations go with its last tab (Close All Editors included).
    this.subscriptions = [vscode.window.tabGroups.onDidChangeTabs((e) => { if (e.closed.length > 0) this.dropUnshown(); })];
    this.updateContext();
  }

  async explainSelections(editor: vscode.TextEditor | undefined): Promise<void> {
    if (!editor) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Select code in an editor to explain it.'));
      return;
    }
    if (!canInfer(this.store.current)) {
      await offerToGetReady(this.store.current, this.modelName());
      return;
    }
    const doc = editor.document;
    const selections = usableSelections(editor.selections.map((sel) => ({
      sel, text: doc.getText(sel), start: doc.offsetAt(sel.start), end: doc.offsetAt(sel.end),
    })));
    if (selections.length === 0) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Select code in an editor to explain it.'));
      return;
    }
    const settings = this.settings.current;
    const fileName = path.basename(doc.fileName || doc.uri.path) || doc.uri.path;
    if (settings['explain.target'] === 'chat') {
      await this.explainInChat(doc, selections.map((s) => s.sel), fileName);
      return;
    }
    const items = selections.map(({ sel, text }) => {
      const prompt = buildExplainPrompt(
        { text, languageId: doc.languageId, fileName },
        settings.explainMaxSelectionChars,
        (lang, file) => vscode.l10n.t('Explain what this {0} code from {1} does. Be concise; mention anything surprising or risky.', lang, file),
      );
      // The thread sits on the lines the selection covers, under their last one, and is named after them.
      const selection = { startLine: sel.start.line, endLine: sel.end.line, endCharacter: sel.end.character };
      const { first, last } = selectedLines(selection);
      const range = new vscode.Range(new vscode.Position(first, 0), new vscode.Position(last, doc.lineAt(last).text.length));
      // The conversation it is kept as, named after what was explained (the history groups these apart).
      const title = vscode.l10n.t('Explain {0}', selectionLocation(fileName, selection));
      return { prompt, title, location: selectionLocation(fileName, selection), range };
    }).map((item) => ({ ...item, thread: this.createThread(doc.uri, item.range, item.location) }));
    this.log.info(`explain: ${items.length} selection(s) of ${fileName}, up to ${settings.explainMaxConcurrency} at once`);

    const run = new AbortController();
    this.runs.add(run);
    const waiting = new ExplainRun(items.map((i) => i.thread), settings.explainMaxConcurrency, () => this.readServerQueue());
    // Every explanation counts as queued in this window until it is sent (or the run ends without sending it).
    const dequeue = items.map(() => this.activity.queueExplanation());
    try {
      // No notification: the status bar says what runs ("generating (n)"); Dismiss stops an explanation.
      const outcomes = await fanout(items, (item, i, signal) => {
        dequeue[i]!();
        const own = item.thread.abort.signal;
        return this.explainOne(item.thread, item.prompt.prompt, item.title, item.prompt.trimmed, signal ? AbortSignal.any([signal, own]) : own, (phase) => waiting.set(i, phase));
      }, { concurrency: settings.explainMaxConcurrency, signal: run.signal });
      outcomes.forEach((o, i) => {
        const thread = items[i]!.thread;
        if (o.status === 'skipped') thread.show(vscode.l10n.t('Cancelled before it started.'), vscode.l10n.t('Stopped.'));
        if (o.status === 'rejected') thread.label(vscode.l10n.t('Failed: {0}', o.error instanceof Error ? o.error.message : String(o.error)));
      });
    } finally {
      for (const done of dequeue) done();
      waiting.stop();
      this.runs.delete(run);
    }
  }

  /**
   * tritonChatglm.explain.target = chat: a new chat with one question per selection, each with the selection as its
   * chip (the attachment layout of every chat question), answered one after the other in the panel.
   */
  private async explainInChat(doc: vscode.TextDocument, selections: readonly vscode.Selection[], fileName: string): Promise<void> {
    await vscode.commands.executeCommand(COMMANDS.newChat);
    for (const sel of selections) {
      await this.editorContext.addSelection(doc.uri, new vscode.Range(sel.start, sel.end));
      await this.chat.send(vscode.l10n.t('Explain what this {0} code from {1} does. Be concise; mention anything surprising or risky.', doc.languageId, fileName));
    }
  }

  /** The server's queue now, from its metrics; undefined when there is no server or it publishes no such figures. */
  private async readServerQueue(): Promise<ServerQueue | undefined> {
    const client = this.client();
    if (!client?.metricsUrl) return undefined;
    return serverQueue(await client.metrics({ timeoutMs: QUEUE_POLL_MS }), this.modelName());
  }

  /** A thread of its own run, brief (one line) whatever the count of selections. */
  private createThread(uri: vscode.Uri, range: vscode.Range, location: string, author = modelDisplayName(this.modelName())): ExplanationThread {
    const thread = this.comments.createCommentThread(uri, range, []);
    thread.canReply = false;
    thread.label = vscode.l10n.t('Explanation of {0}', location);
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    const view = new ExplanationThread(thread, location, author);
    this.threads.set(thread, view);
    this.updateContext();
    return view;
  }

  private async explainOne(
    view: ExplanationThread,
    prompt: string,
    title: string,
    trimmed: boolean,
    signal: AbortSignal | undefined,
    onPhase: (phase: ExplainPhase) => void,
  ): Promise<void> {
    let text = '';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const render = (label: string | undefined) => {
      timer = undefined;
      view.show(text || vscode.l10n.t('Waiting for the server…'), label);
    };
    onPhase('sent');
    const { conversationId, outcome } = await this.chat.ask(prompt, signal, (delta) => {
      if (!text) onPhase('answering');
      text += delta;
      timer ??= setTimeout(() => render(vscode.l10n.t('answering…')), RENDER_INTERVAL_MS);
    }, { title });
    onPhase('done');
    if (timer) clearTimeout(timer);
    this.conversationOf.set(view.thread, conversationId);
    text = outcome.text;
    const notes: string[] = [];
    if (trimmed) notes.push(vscode.l10n.t('The selection was trimmed.'));
    if (outcome.status === 'stopped') notes.push(vscode.l10n.t('Stopped.'));
    if (outcome.status === 'failed') {
      notes.push(vscode.l10n.t('Failed.'));
      const error = outcome.error ?? '';
      text = text ? `${text}\n\n---\n\n${error}` : error;
    }
    // Ended without text: not "Waiting for the server…" any more (a stopped one says only its note, "Stopped.").
    view.show(text || (outcome.status === 'complete' ? vscode.l10n.t('The model answered with no text.') : ''), notes.length ? notes.join(' ') : undefined);
  }

  /**
   * "Continue in Chat" on a thread: opens its conversation in the panel with the explained code attached to the next
   * question, as "Add Selection to Chat" attaches it (the code as it is now, from the thread's range).
   */
  async continueInChat(thread: vscode.CommentThread | undefined): Promise<void> {
    const id = thread ? this.conversationOf.get(thread) : undefined;
    if (!id) {
      void vscode.window.showInformationMessage(vscode.l10n.t('This explanation is still being written.'));
      return;
    }
    await this.chat.reveal(id);
    if (thread?.range) await vscode.commands.executeCommand(COMMANDS.addSelectionToChat, thread.uri, thread.range);
  }

  /** Dismiss (the thread's toolbar): the thread goes, and its request stops when it still runs. */
  dismiss(thread: vscode.CommentThread | undefined): void {
    if (!thread) return;
    this.threads.get(thread)?.dispose();
    if (!this.threads.delete(thread)) thread.dispose();
    this.updateContext();
  }

  /** Show Full Explanation / Show First Sentence Only (the thread's toolbar). */
  setBrief(thread: vscode.CommentThread | undefined, brief: boolean): void {
    if (thread) this.threads.get(thread)?.setBrief(brief);
  }

  /**
   * Dismiss All Explanations (any thread's toolbar, at its far end from Dismiss; the palette): every thread, and the
   * runs still going. A notification offers Undo: the threads come back as they were (a stopped one with what it had).
   */
  async dismissAll(): Promise<void> {
    const gone = [...this.threads].map(([thread, view]) => ({ snapshot: view.snapshot(), conversationId: this.conversationOf.get(thread) }));
    for (const run of this.runs) run.abort();
    for (const view of this.threads.values()) view.dispose();
    this.threads.clear();
    this.updateContext();
    if (gone.length === 0) return;
    const undo = vscode.l10n.t('Undo');
    const picked = await vscode.window.showInformationMessage(gone.length === 1
      ? vscode.l10n.t('Dismissed 1 explanation.')
      : vscode.l10n.t('Dismissed {0} explanations.', gone.length), undo);
    if (picked === undo) for (const { snapshot, conversationId } of gone) this.restore(snapshot, conversationId);
  }

  /** A dismissed thread back where it was, saying what it said. */
  private restore(s: ThreadSnapshot, conversationId: string | undefined): void {
    const view = this.createThread(s.uri, s.range, s.location, s.author);
    view.show(s.body, s.note);
    view.setBrief(s.brief);
    if (conversationId) this.conversationOf.set(view.thread, conversationId);
  }

  /** Removes the threads of documents no tab shows any more. */
  private dropUnshown(): void {
    const shown = new Set(vscode.window.tabGroups.all.flatMap((g) => g.tabs).flatMap((t) => {
      const input = t.input;
      if (input instanceof vscode.TabInputText) return [input.uri.toString()];
      if (input instanceof vscode.TabInputTextDiff) return [input.original.toString(), input.modified.toString()];
      return [];
    }));
    for (const [thread, view] of this.threads) {
      if (shown.has(thread.uri.toString())) continue;
      view.dispose();
      this.threads.delete(thread);
    }
    this.updateContext();
  }

  private updateContext(): void {
    void vscode.commands.executeCommand(VSCODE_COMMANDS.setContext, EXPLANATIONS_CONTEXT, this.threads.size > 0);
  }

  /** Stops every explanation run, the ones still queued included (Stop Answers). */
  stopAll(): void {
    for (const run of this.runs) run.abort();
  }

  dispose(): void {
    for (const run of this.runs) run.abort();
    for (const view of this.threads.values()) view.dispose();
    this.threads.clear();
    for (const s of this.subscriptions) s.dispose();
    this.comments.dispose();
  }
}
