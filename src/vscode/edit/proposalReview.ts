// The review of a proposed change, shared by Edit Selection (the model's rewrite streams in) and the chat's Apply to
// Selection (the code block is the proposal): a diff editor with the file on the left and the proposal, served
// read-only on our own scheme, on the right; Accept and Discard are the diff editor's title actions, in words, and
// keybindings; Accept is enabled once every rewrite has ended, and the diff itself shows the progress
// (reviewDecorations.ts).
// Accept makes one WorkspaceEdit of exactly the ranges the proposal was made for, and is refused when the document
// changed since (src/core/edit has the rules); Discard, or closing the diff, drops the proposal and stops a rewrite
// still being written.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { checkApplicable, proposeReplacements, type MultiProposal } from '../../core/edit/applyToSelection';
import { confirmInvisibleCharacters } from '../chat/invisibleCodeWarning';
import { VSCODE_COMMANDS } from '../commandIds';
import { ReviewDecorations } from './reviewDecorations';

export const PROPOSAL_SCHEME = 'triton-chatglm-proposal';
/** True while the active editor is a proposal's diff (its title actions and keybindings). */
export const PROPOSAL_ACTIVE_CONTEXT = 'tritonChatglm.proposalActive';
/** True while the proposal Accept would take is complete (Accept's enablement). */
export const PROPOSAL_READY_CONTEXT = 'tritonChatglm.proposalReady';

/** While a rewrite streams, the right side is rewritten at most this often. */
const UPDATE_INTERVAL_MS = 100;

/** The proposed documents of the open reviews (the right side of each diff). */
export class ProposalDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changes = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changes.event;
  private count = 0;

  /** Holds `text` at a new URI ending in `fileName` (the diff editor picks the language from its extension). */
  add(fileName: string, text: string): vscode.Uri {
    this.count += 1;
    const uri = vscode.Uri.parse(`${PROPOSAL_SCHEME}:/${this.count}/${encodeURIComponent(fileName)}`);
    this.texts.set(uri.toString(), text);
    return uri;
  }

  update(uri: vscode.Uri, text: string): void {
    if (!this.texts.has(uri.toString()) || this.texts.get(uri.toString()) === text) return;
    this.texts.set(uri.toString(), text);
    this.changes.fire(uri);
  }

  remove(uri: vscode.Uri): void {
    this.texts.delete(uri.toString());
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  dispose(): void {
    this.texts.clear();
    this.changes.dispose();
  }
}

export type ReviewKind = 'edit' | 'apply';

/** What a review's owner (the rewrite running, or Apply) writes into it. */
export interface ProposalReview {
  /** Aborts when the user discards (or closes) the proposal: a rewrite still running stops. */
  readonly signal: AbortSignal;
  /** The code proposed for target `index` so far (undefined: nothing yet, the target keeps its text). */
  setCode(index: number, code: string | undefined): void;
  /** Every target's code is final: Accept may go ahead. */
  finish(): void;
}

class Review implements ProposalReview {
  private readonly abort = new AbortController();
  readonly signal = this.abort.signal;
  readonly codes: (string | undefined)[];
  proposal: MultiProposal;
  finished = false;
  /** The document changed after the proposal was made (told once; Accept is refused). */
  stale = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly kind: ReviewKind,
    readonly doc: vscode.TextDocument,
    readonly targets: readonly { start: number; end: number }[],
    readonly version: number,
    readonly text: string,
    readonly eol: '\n' | '\r\n',
    readonly uri: vscode.Uri,
    readonly viewColumn: vscode.ViewColumn | undefined,
    private readonly documents: ProposalDocuments,
    /** The proposal changed or was finished: redraw its progress. */
    private readonly changed: (review: Review) => void,
  ) {
    this.codes = targets.map(() => undefined);
    this.proposal = { replacements: [], proposed: text };
  }

  setCode(index: number, code: string | undefined): void {
    if (this.signal.aborted || this.codes[index] === code) return;
    this.codes[index] = code;
    this.proposal = proposeReplacements(this.text, this.targets, this.codes, this.eol);
    this.timer ??= setTimeout(() => this.flush(), UPDATE_INTERVAL_MS);
  }

  finish(): void {
    this.finished = true;
    this.flush();
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.signal.aborted) return;
    this.documents.update(this.uri, this.proposal.proposed);
    this.changed(this);
  }

  end(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.abort.abort();
    this.documents.remove(this.uri);
  }
}

export class ProposalReviews implements vscode.Disposable {
  private readonly reviews = new Map<string, Review>();
  private readonly subscriptions: vscode.Disposable[];
  private readonly decorations = new ReviewDecorations();

  constructor(private readonly documents: ProposalDocuments) {
    this.subscriptions = [
      this.decorations,
      // The diff's right side becomes visible after the review opened, and its text follows the proposal a moment
      // after each update: draw again then.
      vscode.window.onDidChangeVisibleTextEditors(() => { for (const r of this.reviews.values()) this.decorations.render(r); }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        const review = this.reviews.get(e.document.uri.toString());
        if (review) this.decorations.render(review);
      }),
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        // Closing the diff is Discard.
        for (const tab of e.closed) {
          const review = this.reviewOfTab(tab);
          if (review && !this.isShown(review)) this.end(review);
        }
        this.updateContext();
      }),
      vscode.window.tabGroups.onDidChangeTabGroups(() => this.updateContext()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length === 0) return;
        for (const review of this.reviews.values()) {
          if (review.doc !== e.document || review.stale) continue;
          review.stale = true;
          void vscode.window.showWarningMessage(this.staleText(review));
        }
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        for (const review of [...this.reviews.values()]) if (review.doc === doc) review.stale = true;
      }),
    ];
  }

  /** Opens the diff of a proposal for `ranges` of `editor`'s document; the caller fills in the code. */
  async open(kind: ReviewKind, editor: vscode.TextEditor, ranges: readonly vscode.Range[]): Promise<ProposalReview> {
    const doc = editor.document;
    const targets = ranges.map((r) => ({ start: doc.offsetAt(r.start), end: doc.offsetAt(r.end) }));
    const fileName = path.posix.basename(doc.uri.path) || 'untitled';
    const text = doc.getText();
    const uri = this.documents.add(fileName, text);
    const review = new Review(kind, doc, targets, doc.version, text, doc.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n', uri, editor.viewColumn, this.documents, (r) => {
      this.decorations.render(r);
      this.updateContext();
    });
    this.reviews.set(uri.toString(), review);
    const title = kind === 'edit' ? vscode.l10n.t('{0} ↔ ChatGLM Edit', fileName) : vscode.l10n.t('{0} ↔ Proposed Change', fileName);
    await vscode.commands.executeCommand(VSCODE_COMMANDS.diff, doc.uri, uri, title, { preview: false, viewColumn: editor.viewColumn });
    this.decorations.render(review);
    this.updateContext();
    return review;
  }

  /** Accept (the title action or its key): the proposal of the active diff, else the only one open. */
  async accept(uri?: vscode.Uri): Promise<void> {
    const review = this.target(uri);
    if (!review) {
      void vscode.window.showInformationMessage(vscode.l10n.t('There is no proposed change to accept.'));
      return;
    }
    const shown = vscode.workspace.asRelativePath(review.doc.uri);
    if (!review.finished) {
      void vscode.window.showInformationMessage(vscode.l10n.t('The rewrite is still being written. Accept it when it is complete, or Discard it.'));
      return;
    }
    const { replacements } = review.proposal;
    if (replacements.length === 0) {
      void vscode.window.showInformationMessage(vscode.l10n.t('The proposal changes nothing.'));
      return;
    }
    // Apply to Selection warned before its preview; an edit's rewrite is seen first here.
    if (review.kind === 'edit' && !(await confirmInvisibleCharacters(replacements.map((r) => r.text).join('\n'), 'accept'))) return;
    const check = checkApplicable({ version: review.version }, { closed: review.doc.isClosed, version: review.doc.version });
    if (!check.ok) {
      void vscode.window.showWarningMessage(check.reason === 'closed'
        ? vscode.l10n.t('{0} was closed, so the change was not applied.', shown)
        : this.staleText(review));
      return;
    }
    review.stale = true; // our own edit: not a change to warn about
    const edit = new vscode.WorkspaceEdit();
    for (const r of replacements) edit.replace(review.doc.uri, new vscode.Range(review.doc.positionAt(r.start), review.doc.positionAt(r.end)), r.text);
    if (!(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showErrorMessage(vscode.l10n.t('The change could not be applied to {0}.', shown));
      return;
    }
    await this.close(review);
    // The editor again, each new piece of code selected: what changed is where the user looks.
    let shift = 0;
    const selections = replacements.map((r) => {
      const start = r.start + shift;
      shift += r.text.length - (r.end - r.start);
      return new vscode.Selection(review.doc.positionAt(start), review.doc.positionAt(start + r.text.length));
    });
    const editor = await vscode.window.showTextDocument(review.doc, { viewColumn: review.viewColumn, selection: selections[0] });
    editor.selections = selections;
  }

  /** Discard: closes the diff, the file stays as it is; a rewrite still running stops. */
  async discard(uri?: vscode.Uri): Promise<void> {
    const review = this.target(uri);
    if (review) await this.close(review);
  }

  private staleText(review: Review): string {
    const shown = vscode.workspace.asRelativePath(review.doc.uri);
    return review.kind === 'edit'
      ? vscode.l10n.t('{0} changed after the rewrite was requested, so it cannot be applied. Run Edit Selection again.', shown)
      : vscode.l10n.t('{0} changed after the preview, so the code was not applied. Use Apply to Selection again.', shown);
  }

  private target(uri: vscode.Uri | undefined): Review | undefined {
    if (uri) {
      const named = this.reviews.get(uri.toString());
      if (named) return named;
    }
    const active = this.activeReview();
    if (active) return active;
    return this.reviews.size === 1 ? [...this.reviews.values()][0] : undefined;
  }

  private activeReview(): Review | undefined {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    return tab ? this.reviewOfTab(tab) : undefined;
  }

  private reviewOfTab(tab: vscode.Tab): Review | undefined {
    return tab.input instanceof vscode.TabInputTextDiff ? this.reviews.get(tab.input.modified.toString()) : undefined;
  }

  private isShown(review: Review): boolean {
    return vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => this.reviewOfTab(t) === review));
  }

  private async close(review: Review): Promise<void> {
    this.end(review);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === review.uri.toString());
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs);
    this.updateContext();
  }

  private end(review: Review): void {
    review.end();
    this.reviews.delete(review.uri.toString());
  }

  private updateContext(): void {
    void vscode.commands.executeCommand(VSCODE_COMMANDS.setContext, PROPOSAL_ACTIVE_CONTEXT, this.activeReview() !== undefined);
    void vscode.commands.executeCommand(VSCODE_COMMANDS.setContext, PROPOSAL_READY_CONTEXT, this.target(undefined)?.finished === true);
  }

  dispose(): void {
    for (const review of this.reviews.values()) review.end();
    this.reviews.clear();
    for (const s of this.subscriptions) s.dispose();
  }
}
