// Explain Selection: every selection (multi-cursor included) becomes its own request, all sent together within
// the concurrency setting so the server batches them. Each answer streams into a comment thread anchored on the
// selected lines and titled with the file and lines, and is kept as a chat conversation the user can continue.
// While an explanation waits, its thread says where: behind how many requests of its own run (the concurrency
// limit), or at the server (its queue, read from the scheduler's metrics while anything waits there).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { MODEL_NAME } from '../../core/repository';
import { canInfer } from '../../core/state/lifecycle';
import type { ActivityBoard } from '../../core/status/activity';
import { serverQueue, type ServerQueue } from '../../core/status/schedulerFigures';
import type { TritonClient } from '../../core/triton';
import type { ChatController } from '../chat/chatController';
import { COMMANDS } from '../commandIds';
import type { SettingsService } from '../config/settingsService';
import type { Log } from '../log';
import type { LifecycleStore } from '../state/lifecycleStore';
import { buildExplainPrompt, usableSelections } from '../../core/explain/explainPrompt';
import { fanout } from '../../core/explain/fanout';
import { queuePositions, type ExplainPhase, type QueuePosition } from '../../core/explain/queuePosition';
import { selectedLines, selectionLocation } from '../../core/explain/selectionLocation';

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

/** One explanation's thread: its comment is rewritten only when what it says changes. */
class ExplanationThread {
  private shown = '';

  constructor(readonly thread: vscode.CommentThread) {}

  show(body: string, label: string | undefined): void {
    const key = `${label ?? ''}\u0000${body}`;
    if (key === this.shown) return;
    this.shown = key;
    const comment = this.thread.comments[0] as ExplanationComment | undefined;
    if (!comment) return;
    comment.body = untrusted(body);
    comment.label = label;
    this.thread.comments = [comment];
  }

  /** Only the label (the answer's text stays). */
  label(label: string): void {
    const comment = this.thread.comments[0] as ExplanationComment | undefined;
    if (!comment) return;
    this.show(comment.body.value, label);
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
      return `${queuedBehind(position.ahead)} ${vscode.l10n.t('Up to {0} explanations are sent at once (tritonChatglm.explainMaxConcurrency).', concurrency)}`;
    case 'server': {
      const generating = position.active ? ` ${vscode.l10n.t('The server is generating {0} answer(s); a row is free when one of them ends.', position.active)}` : '';
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
  private readonly threads = new Set<vscode.CommentThread>();
  private readonly runs = new Set<AbortController>();

  constructor(
    private readonly chat: ChatController,
    private readonly store: LifecycleStore,
    private readonly settings: SettingsService,
    private readonly log: Log,
    private readonly activity: ActivityBoard,
    private readonly client: () => TritonClient | undefined,
  ) {
    this.comments = vscode.comments.createCommentController('tritonChatglm.explain', vscode.l10n.t('ChatGLM3 explanations'));
    this.comments.options = { placeHolder: '', prompt: '' };
  }

  async explainSelections(editor: vscode.TextEditor | undefined): Promise<void> {
    if (!editor) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Select code in an editor to explain it.'));
      return;
    }
    if (!canInfer(this.store.current)) {
      await this.offerToGetReady();
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
      return { prompt, title, thread: this.createThread(doc.uri, range, selectionLocation(fileName, selection)) };
    });
    const trimmed = items.filter((i) => i.prompt.trimmed);
    if (trimmed.length > 0) {
      void vscode.window.showWarningMessage(vscode.l10n.t(
        '{0} of {1} selections were longer than {2} characters; only their beginning is explained.',
        trimmed.length, items.length, settings.explainMaxSelectionChars,
      ));
    }
    this.log.info(`explain: ${items.length} selection(s) of ${fileName}, up to ${settings.explainMaxConcurrency} at once`);

    const run = new AbortController();
    this.runs.add(run);
    const waiting = new ExplainRun(items.map((i) => i.thread), settings.explainMaxConcurrency, () => this.readServerQueue());
    // Every explanation counts as queued in this window until it is sent (or the run ends without sending it).
    const dequeue = items.map(() => this.activity.queueExplanation());
    try {
      await vscode.window.withProgress({
        location: vscode.ProgressLocation.Notification,
        title: vscode.l10n.t('Explaining {0} selection(s)', items.length),
        cancellable: true,
      }, async (progress, token) => {
        const cancel = token.onCancellationRequested(() => run.abort());
        let settled = 0;
        try {
          const outcomes = await fanout(items, (item, i, signal) => {
            dequeue[i]!();
            return this.explainOne(item.thread, item.prompt.prompt, item.title, item.prompt.trimmed, signal, (phase) => waiting.set(i, phase));
          }, {
            concurrency: settings.explainMaxConcurrency,
            signal: run.signal,
            onSettled: () => {
              settled++;
              progress.report({ increment: 100 / items.length, message: vscode.l10n.t('{0} of {1} done', settled, items.length) });
            },
          });
          outcomes.forEach((o, i) => {
            const thread = items[i]!.thread;
            if (o.status === 'skipped') thread.show(vscode.l10n.t('Cancelled before it started.'), vscode.l10n.t('Stopped.'));
            if (o.status === 'rejected') thread.label(vscode.l10n.t('Failed: {0}', o.error instanceof Error ? o.error.message : String(o.error)));
          });
        } finally {
          cancel.dispose();
        }
      });
    } finally {
      for (const done of dequeue) done();
      waiting.stop();
      this.runs.delete(run);
    }
  }

  /** The server's queue now, from its metrics; undefined when there is no server or it publishes no such figures. */
  private async readServerQueue(): Promise<ServerQueue | undefined> {
    const client = this.client();
    if (!client?.metricsUrl) return undefined;
    return serverQueue(await client.metrics({ timeoutMs: QUEUE_POLL_MS }), MODEL_NAME);
  }

  private createThread(uri: vscode.Uri, range: vscode.Range, location: string): ExplanationThread {
    const comment = new ExplanationComment(vscode.l10n.t('ChatGLM3'));
    const thread = this.comments.createCommentThread(uri, range, [comment]);
    thread.canReply = false;
    thread.label = vscode.l10n.t('Explanation of {0}', location);
    thread.contextValue = 'tritonChatglm.explanation';
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    this.threads.add(thread);
    return new ExplanationThread(thread);
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
    render(notes.length ? notes.join(' ') : undefined);
  }

  private async offerToGetReady(): Promise<void> {
    const state = this.store.current;
    const start = vscode.l10n.t('Start Server');
    const load = vscode.l10n.t('Load Model');
    const buttons = state.server === 'running' ? [load] : state.mode === 'managed' ? [start] : [];
    const picked = await vscode.window.showWarningMessage(vscode.l10n.t('ChatGLM3 is not ready: start the server and load the model first.'), ...buttons);
    if (picked === start) await vscode.commands.executeCommand(COMMANDS.startServer);
    if (picked === load) await vscode.commands.executeCommand(COMMANDS.loadModel);
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

  dismiss(thread: vscode.CommentThread | undefined): void {
    if (!thread) return;
    this.threads.delete(thread);
    thread.dispose();
  }

  /** Stops every explanation run, the ones still queued included (Stop Answers). */
  stopAll(): void {
    for (const run of this.runs) run.abort();
  }

  dispose(): void {
    for (const run of this.runs) run.abort();
    for (const t of this.threads) t.dispose();
    this.threads.clear();
    this.comments.dispose();
  }
}
