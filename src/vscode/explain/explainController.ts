// Explain Selection: every selection (multi-cursor included) becomes its own request, all sent together within
// the concurrency setting so the server batches them. Each answer streams into a comment thread anchored on the
// selected lines and titled with the file and lines, and is kept as a chat conversation the user can continue.
// Several threads open brief, one line each (the answer's first sentence), so the code between them stays readable;
// no notification (the status bar says what runs); the threads of an editor go when its last tab closes.
// While an explanation waits, its thread says where: behind how many requests of its own run (the concurrency
// limit), or at the server (its queue, read from the scheduler's metrics while anything waits there).
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
import { plural } from '../util/plural';
import { buildExplainPrompt, usableSelections } from '../../core/explain/explainPrompt';
import { fanout } from '../../core/explain/fanout';
import { queuePositions, type ExplainPhase, type QueuePosition } from '../../core/explain/queuePosition';
import { firstSentence } from '../../core/explain/explanationSummary';
import { selectedLines, selectionLocation } from '../../core/explain/selectionLocation';

/** True while explanation threads are shown (Dismiss All Explanations in the palette). */
export const EXPLANATIONS_CONTEXT = 'tritonChatglm.hasExplanations';

/** Comment bodies are re-rendered at most this often while streaming (each update re-lays out the editor). */
const RENDER_INTERVAL_MS = 100;
/** While an explanation waits at the server, its queue is read this often. */
const QUEUE_POLL_MS = 1_000;

class ExplanationComment implements vscode.Comment {
  body: vscode.MarkdownString;
  readonly mode = vscode.CommentMode.Preview;
  readonly author: vscode.CommentAuthorInformation;
  label: string | undefined;
  contextValue = 'tritonChatglm.explanation';

  constructor(authorName: string) {
    this.author = { name: authorName };
    this.body = untrusted('');
  }
}

/** Model output is untrusted: no command links, no HTML, no theme icons. */
function untrusted(text: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString(text, false);
  md.isTrusted = false;
  md.supportHtml = false;
  return md;
}

/**
 * VS Code opens the Comments panel when a thread is first shown with a comment that says something
 * (comments.openView "firstFile"). A full thread is created with an empty comment and says something only after it
 * was shown: the panel stays closed, and the title says what the thread waits for meanwhile. (A brief thread has no
 * comment; the first one opened in full in a window does open the panel: VS Code's rule.)
 */
const FIRST_COMMENT_DELAY_MS = 1_500;

/** Thread context values: a brief thread (its title line only) offers Show Full Explanation, a full one the reverse. */
const BRIEF = 'tritonChatglm.explanation.brief';
const FULL = 'tritonChatglm.explanation.full';

/**
 * One explanation's thread. Brief, it is one line: its title, the place and the answer's first sentence, and no
 * comment (VS Code's own collapsed state would hide the thread altogether, leaving only a gutter icon). Full, the
 * comment holds the whole answer. The comment is rewritten only when what it says changes.
 */
class ExplanationThread {
  private shown = '';
  private body = '';
  private note: string | undefined;
  private attached = false;
  private readonly comment = new ExplanationComment(vscode.l10n.t('ChatGLM3'));
  private readonly attach: ReturnType<typeof setTimeout>;
  readonly abort = new AbortController();

  constructor(readonly thread: vscode.CommentThread, private readonly location: string, private brief: boolean) {
    thread.contextValue = brief ? BRIEF : FULL;
    if (!brief) thread.comments = [this.comment];
    this.attach = setTimeout(() => { this.attached = true; this.shown = ''; this.render(); }, FIRST_COMMENT_DELAY_MS);
  }

  show(body: string, label: string | undefined): void {
    this.body = body;
    this.note = label;
    this.render();
  }

  /** Only the label (the answer's text stays). */
  label(label: string): void {
    this.show(this.body, label);
  }

  /** Show Full Explanation (true) or back to its first sentence (false). */
  setBrief(brief: boolean): void {
    if (this.brief === brief) return;
    this.brief = brief;
    this.thread.contextValue = brief ? BRIEF : FULL;
    this.attached = true; // asked for by the user: the thread is shown already
    this.shown = '';
    this.render();
  }

  private render(): void {
    const key = `${this.brief}\u0000${this.note ?? ''}\u0000${this.body}`;
    if (key === this.shown) return;
    this.shown = key;
    // Brief: the first sentence of what the thread would say (the answer, or where it waits).
    const summary = this.brief ? firstSentence(this.body) || this.note || '' : '';
    this.thread.label = summary
      ? vscode.l10n.t('Explanation of {0}: {1}', this.location, summary)
      : vscode.l10n.t('Explanation of {0}', this.location);
    if (!this.attached) return;
    if (this.brief) {
      if (this.thread.comments.length > 0) this.thread.comments = [];
      return;
    }
    this.comment.body = untrusted(this.body);
    this.comment.label = this.note;
    this.thread.comments = [this.comment];
  }

  dispose(): void {
    clearTimeout(this.attach);
    this.abort.abort();
    this.thread.dispose();
  }
}

/** The explanations of one run, in sending order: their phases and what their waiting threads say. */
class ExplainRun {
  readonly phases: ExplainPhase[];
  private server: ServerQueue | undefined;
  private poll: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly threads: readonly ExplanationThread[],
    private readonly concurrency: number,
    private readonly readQueue: () => Promise<ServerQueue | undefined>,
  ) {
    this.phases = threads.map(() => 'queued');
    this.render();
  }

  set(index: number, phase: ExplainPhase): void {
    if (this.phases[index] === phase) return;
    this.phases[index] = phase;
    this.watchServer();
    this.render();
  }

  /** Every thread still waiting says where (answering and finished ones are written by their answers). */
  private render(): void {
    queuePositions(this.phases, this.server).forEach((position, i) => {
      const phase = this.phases[i];
      if (phase === 'queued' || phase === 'sent') this.threads[i]!.show(waitingText(position, this.concurrency), waitingLabel(position));
    });
  }

  /** Reads the server's queue while an explanation waits there; stops when none does. */
  private watchServer(): void {
    const waiting = this.phases.includes('sent');
    if (waiting && !this.poll) {
      this.poll = setInterval(() => void this.refreshQueue(), QUEUE_POLL_MS);
      void this.refreshQueue();
    } else if (!waiting && this.poll) {
      this.stop();
    }
  }

  private async refreshQueue(): Promise<void> {
    this.server = await this.readQueue().catch(() => undefined);
    if (this.poll) this.render();
  }

  stop(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
  }
}

function waitingLabel(position: QueuePosition): string {
  return position.where === 'none' ? vscode.l10n.t('waiting…') : vscode.l10n.t('queued');
}

function waitingText(position: QueuePosition, concurrency: number): string {
  switch (position.where) {
    case 'client':
      return `${queuedBehind(position.ahead)} ${plural(concurrency,
        vscode.l10n.t('One explanation is sent at a time (tritonChatglm.explainMaxConcurrency).'),
        vscode.l10n.t('Up to {0} explanations are sent at once (tritonChatglm.explainMaxConcurrency).', concurrency))}`;
    case 'server': {
      const generating = position.active ? ` ${plural(position.active,
        vscode.l10n.t('The server is generating 1 answer; a row is free when it ends.'),
        vscode.l10n.t('The server is generating {0} answers; a row is free when one of them ends.', position.active))}` : '';
      const ahead = position.ahead === 0 ? vscode.l10n.t('Next in line at the server.')
        : position.ahead === 1 ? vscode.l10n.t('Queued behind 1 request at the server.') : vscode.l10n.t('Queued behind {0} requests at the server.', position.ahead);
      return `${ahead}${generating}`;
    }
    case 'none':
      return vscode.l10n.t('Waiting for the server…');
  }
}

function queuedBehind(ahead: number): string {
  return ahead === 1 ? vscode.l10n.t('Queued behind 1 request.') : vscode.l10n.t('Queued behind {0} requests.', ahead);
}

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
    this.comments = vscode.comments.createCommentController('tritonChatglm.explain', vscode.l10n.t('ChatGLM3 explanations'));
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
      await offerToGetReady(this.store.current);
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
    }).map((item, _, all) => ({ ...item, thread: this.createThread(doc.uri, item.range, item.location, all.length > 1) }));
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

  /** A thread of its own run: brief (one line) when the run has several, full when it is the only one. */
  private createThread(uri: vscode.Uri, range: vscode.Range, location: string, collapsed: boolean): ExplanationThread {
    const thread = this.comments.createCommentThread(uri, range, []);
    thread.canReply = false;
    thread.label = vscode.l10n.t('Explanation of {0}', location);
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    const view = new ExplanationThread(thread, location, collapsed);
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

  /** Dismiss All Explanations (any thread's toolbar, the palette): every thread, and the runs still going. */
  dismissAll(): void {
    for (const run of this.runs) run.abort();
    for (const view of this.threads.values()) view.dispose();
    this.threads.clear();
    this.updateContext();
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
