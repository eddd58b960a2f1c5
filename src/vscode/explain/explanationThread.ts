// One explanation's comment thread. Every thread opens brief, whatever the count of selections: one line, its title
// (the place and the answer's first sentence) and no comment, so the code between threads stays readable and
// Explain itself never gives VS Code a comment to show (with comments.openView "firstFile", its default, VS Code
// opens the Comments panel the first time a thread of the window shows a comment with text; an extension can
// neither query nor keep that panel as it was, so only the user's Show Full Explanation may open it).
// Full, the comment holds the whole answer. The comment is rewritten only when what it says changes.
import * as vscode from 'vscode';
import { firstSentence } from '../../core/explain/explanationSummary';

/** Thread context values: a brief thread (its title line only) offers Show Full Explanation, a full one the reverse. */
const BRIEF = 'tritonChatglm.explanation.brief';
const FULL = 'tritonChatglm.explanation.full';

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

/** What a dismissed thread said, to bring it back (Undo of Dismiss All). */
export interface ThreadSnapshot {
  uri: vscode.Uri;
  range: vscode.Range;
  location: string;
  body: string;
  note: string | undefined;
  brief: boolean;
  author: string;
}

export class ExplanationThread {
  private shown = '';
  private body = '';
  private note: string | undefined;
  private brief = true;
  readonly abort = new AbortController();

  private readonly comment: ExplanationComment;

  /** `author`: the display name of the model that explains (the comment's author). */
  constructor(readonly thread: vscode.CommentThread, private readonly location: string, private readonly author: string) {
    this.comment = new ExplanationComment(author);
    thread.contextValue = BRIEF;
    this.render();
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

  /** Show Full Explanation (false) or back to its first sentence (true). */
  setBrief(brief: boolean): void {
    if (this.brief === brief) return;
    this.brief = brief;
    this.thread.contextValue = brief ? BRIEF : FULL;
    this.render();
  }

  snapshot(): ThreadSnapshot {
    return { uri: this.thread.uri, range: this.thread.range ?? new vscode.Range(0, 0, 0, 0), location: this.location, body: this.body, note: this.note, brief: this.brief, author: this.author };
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
    if (this.brief) {
      if (this.thread.comments.length > 0) this.thread.comments = [];
      return;
    }
    this.comment.body = untrusted(this.body);
    this.comment.label = this.note;
    this.thread.comments = [this.comment];
  }

  dispose(): void {
    this.abort.abort();
    this.thread.dispose();
  }
}
