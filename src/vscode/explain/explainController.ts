// Explain Selection: every selection (multi-cursor included) becomes its own request, all sent together within
// the concurrency setting so Triton's dynamic batcher merges them. Each answer streams into a comment thread
// next to its code and is kept as a chat conversation the user can continue.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { canInfer } from '../../core/state/lifecycle';
import type { ChatController } from '../chat/chatController';
import { COMMANDS } from '../commandIds';
import type { SettingsService } from '../config/settingsService';
import type { Log } from '../log';
import type { LifecycleStore } from '../state/lifecycleStore';
import { buildExplainPrompt, usableSelections } from '../../core/explain/explainPrompt';
import { fanout } from '../../core/explain/fanout';
import { selectionLocation } from '../../core/explain/selectionLocation';

/** Comment bodies are re-rendered at most this often while streaming (each update re-lays out the editor). */
const RENDER_INTERVAL_MS = 100;

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
      const range = new vscode.Range(sel.start, sel.end);
      // The conversation it is kept as, named after what was explained (the history groups these apart).
      const title = vscode.l10n.t('Explain {0}', selectionLocation(fileName, { startLine: sel.start.line, endLine: sel.end.line, endCharacter: sel.end.character }));
      return { prompt, title, range, thread: this.createThread(doc.uri, range) };
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
    try {
      await vscode.window.withProgress({
        location: vscode.ProgressLocation.Notification,
        title: vscode.l10n.t('Explaining {0} selection(s)', items.length),
        cancellable: true,
      }, async (progress, token) => {
        const cancel = token.onCancellationRequested(() => run.abort());
        let settled = 0;
        try {
          const outcomes = await fanout(items, (item, _i, signal) => this.explainOne(item.thread, item.prompt.prompt, item.title, item.prompt.trimmed, signal), {
            concurrency: settings.explainMaxConcurrency,
            signal: run.signal,
            onSettled: () => {
              settled++;
              progress.report({ increment: 100 / items.length, message: vscode.l10n.t('{0} of {1} done', settled, items.length) });
            },
          });
          outcomes.forEach((o, i) => {
            const thread = items[i]!.thread;
            if (o.status === 'skipped') this.finishThread(thread, vscode.l10n.t('Cancelled before it started.'));
            if (o.status === 'rejected') this.finishThread(thread, vscode.l10n.t('Failed: {0}', o.error instanceof Error ? o.error.message : String(o.error)));
          });
        } finally {
          cancel.dispose();
        }
      });
    } finally {
      this.runs.delete(run);
    }
  }

  private createThread(uri: vscode.Uri, range: vscode.Range): vscode.CommentThread {
    const comment = new ExplanationComment(vscode.l10n.t('ChatGLM3'));
    comment.label = vscode.l10n.t('waiting…');
    comment.body = untrusted(vscode.l10n.t('Waiting for the server…'));
    const thread = this.comments.createCommentThread(uri, range, [comment]);
    thread.canReply = false;
    thread.label = vscode.l10n.t('Explanation');
    thread.contextValue = 'tritonChatglm.explanation';
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    this.threads.add(thread);
    return thread;
  }

  private async explainOne(thread: vscode.CommentThread, prompt: string, title: string, trimmed: boolean, signal: AbortSignal | undefined): Promise<void> {
    let text = '';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const render = (label: string | undefined) => {
      timer = undefined;
      const comment = thread.comments[0] as ExplanationComment | undefined;
      if (!comment) return;
      comment.body = untrusted(text || vscode.l10n.t('Waiting for the server…'));
      comment.label = label;
      thread.comments = [comment];
    };
    const { conversationId, outcome } = await this.chat.ask(prompt, signal, (delta) => {
      text += delta;
      timer ??= setTimeout(() => render(vscode.l10n.t('answering…')), RENDER_INTERVAL_MS);
    }, { title });
    if (timer) clearTimeout(timer);
    this.conversationOf.set(thread, conversationId);
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

  private finishThread(thread: vscode.CommentThread, label: string): void {
    const comment = thread.comments[0] as ExplanationComment | undefined;
    if (!comment) return;
    comment.label = label;
    thread.comments = [comment];
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

  dispose(): void {
    for (const run of this.runs) run.abort();
    for (const t of this.threads) t.dispose();
    this.threads.clear();
    this.comments.dispose();
  }
}
