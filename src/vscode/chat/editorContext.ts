// Editor context in chat, the VS Code side: "Add Selection to Chat", "Add File to Chat…" (a quick pick of workspace
// files honouring files.exclude and search.exclude), the `#` sources of the input (#file, #selection, #problems,
// #changes, #symbol; read in contextSources.ts), the active editor's file as a chip (suggested, always attached or
// never: tritonChatglm.chat.currentFile), and the budget question before a question goes out. What is attached, how it is laid out, what fits and what to offer dropping is decided
// in src/core/chat/attachments*.ts; this file reads editors and files, shows the chips and asks the user.
import * as vscode from 'vscode';
import {
  attachmentTokens,
  budgetDiff,
  checkBudget,
  formatProblems,
  fileRefusal,
  MAX_ATTACHMENTS,
  newId,
  PendingAttachments,
  selectedLines,
  sizeAllowed,
  textRefusal,
  withoutAttachment,
  type ActiveFile,
  type AddResult,
  type Attachment,
  type CurrentFileMode,
  type TextRefusal,
} from '../../core/chat';
import { DEFAULT_MODEL_SETTINGS } from '../../core/repository';
import { LIMITS, type ActiveFileView, type ContextSource, type HostToWebview, type WebviewToHost } from '../../protocol';
import { COMMANDS } from '../commandIds';
import type { SettingsService } from '../config/settingsService';
import type { Log } from '../log';
import { pickSymbol, problemsOf, workingTreeChanges } from './contextSources';
import { chipLabel, clipPath, count, displayPath, fullPathOf, pickWorkspaceFile, refusalText, toAttachmentView } from './attachmentViews';

/**
 * Documents whose text can be attached: files on disk (local or remote) and unsaved new files; not VS Code's own
 * (settings.json, which may hold tokens in tritonChatglm.externalHeaders), output channels or git's views.
 */
const ATTACHABLE_SCHEMES = new Set(['file', 'untitled', 'vscode-remote']);
/** How long typing in the active file waits before its chip's token estimate is refreshed. */
const ACTIVE_REFRESH_MS = 750;

type AttachmentMessage = Extract<WebviewToHost, { type: 'removeAttachment' | 'toggleActiveFile' | 'addFile' | 'openAttachment' | 'addContext' }>;

export class EditorContext implements vscode.Disposable {
  private readonly pending: PendingAttachments;
  private readonly subscriptions: vscode.Disposable[] = [];
  private post: (message: HostToWebview) => void = () => undefined;
  private activeTokens: number | undefined;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly log: Log, private readonly settings?: Pick<SettingsService, 'current' | 'onDidChange'>) {
    this.pending = new PendingAttachments(vscode.workspace.isTrusted, this.mode());
    this.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor((editor) => { this.trackActive(editor); this.postChips(); }),
      vscode.workspace.onDidChangeTextDocument((e) => { if (e.document.uri.toString() === this.pending.activeFile?.file.uri) this.scheduleActiveRefresh(); }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => { this.pending.setTrusted(true); this.postChips(); }),
    );
    if (settings) this.subscriptions.push(settings.onDidChange(() => { this.pending.setMode(this.mode()); this.postChips(); }));
    this.trackActive(vscode.window.activeTextEditor);
  }

  /** Where the chips go (the chat view, through the chat controller). */
  connect(post: (message: HostToWebview) => void): void {
    this.post = post;
  }

  /** The messages of the chips, for the chat controller's switch. */
  static handles(msg: WebviewToHost): msg is AttachmentMessage {
    return msg.type === 'removeAttachment' || msg.type === 'toggleActiveFile' || msg.type === 'addFile' || msg.type === 'openAttachment' || msg.type === 'addContext';
  }

  private mode(): CurrentFileMode {
    return this.settings?.current['chat.currentFile'] ?? 'suggest';
  }

  async handle(msg: AttachmentMessage, conversationAttachments: () => readonly Attachment[]): Promise<void> {
    switch (msg.type) {
      case 'removeAttachment': this.pending.remove(msg.id); break;
      case 'toggleActiveFile':
        // A suggested chip is attached by its click (as an ordinary file chip); an `always` one switches on and off.
        if (this.pending.activeFile?.suggested) { if (msg.enabled) this.attachActive(); return; }
        this.pending.toggleActiveFile(msg.enabled);
        break;
      case 'addFile': await this.addFile(); return;
      case 'addContext': await this.addContext(msg.source); return;
      case 'openAttachment': await this.open([...this.pending.items, ...conversationAttachments()].find((a) => a.id === msg.id)); return;
    }
    this.postChips();
  }

  /**
   * "Add Selection to Chat": each non-empty selection of the editor becomes a chip (the whole file when nothing is
   * selected). With `uri` and `range` (Explain's "Continue in Chat"), that range of that document.
   */
  async addSelection(uri?: vscode.Uri, range?: vscode.Range): Promise<void> {
    let document: vscode.TextDocument | undefined;
    let ranges: readonly vscode.Range[] = [];
    if (uri instanceof vscode.Uri && range instanceof vscode.Range) {
      document = await vscode.workspace.openTextDocument(uri);
      ranges = [range];
    } else {
      const editor = vscode.window.activeTextEditor;
      document = editor?.document;
      ranges = editor?.selections.filter((s) => !s.isEmpty) ?? [];
    }
    if (!document || !ATTACHABLE_SCHEMES.has(document.uri.scheme)) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Select code in an editor to add it to the chat.'));
      return;
    }
    const attachments = ranges.length
      ? ranges.map((r) => this.fromDocument(document, r))
      : [this.fromDocument(document)];
    if (this.addAll(attachments)) await this.revealChat();
  }

  /** A `#` source picked in the chat input. */
  async addContext(source: ContextSource): Promise<void> {
    switch (source) {
      case 'file': await this.addFile(); break;
      case 'selection': await this.addSelection(); break;
      case 'problems': this.addProblems(); break;
      case 'changes': await this.addChanges(); break;
      case 'symbol': await this.addSymbol(); break;
    }
    this.post({ type: 'focusInput' });
  }

  /** `#problems` (and `/fix`): the active file's diagnostics with their lines; false when it has none. */
  addProblems(notify = true): boolean {
    const document = this.currentDocument();
    if (!document) {
      if (notify) void vscode.window.showInformationMessage(vscode.l10n.t('Open a file in an editor to attach its problems.'));
      return false;
    }
    const problems = problemsOf(document);
    if (!problems.length) {
      if (notify) void vscode.window.showInformationMessage(vscode.l10n.t('{0} has no problems to attach.', displayPath(document.uri)));
      return false;
    }
    return this.addAll([{
      id: newId(), kind: 'problems', path: displayPath(document.uri), uri: document.uri.toString(), languageId: 'text', content: formatProblems(problems),
    }]);
  }

  /** Whether a chip of the next question holds problems already (`/fix` adds the current file's otherwise). */
  hasProblems(): boolean {
    return this.pending.items.some((a) => a.kind === 'problems');
  }

  /** `#changes`: the working tree's diff against HEAD (the built-in Git extension), within its token budget. */
  private async addChanges(): Promise<void> {
    const near = this.currentDocument()?.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
    const changes = await workingTreeChanges(near);
    if (!changes.ok) {
      const text = {
        'no-git': vscode.l10n.t('The Git extension is not available, so the changes cannot be attached.'),
        'no-repository': vscode.l10n.t('No Git repository is open in this window.'),
        'no-changes': vscode.l10n.t('The working tree has no changes against HEAD.'),
      }[changes.reason];
      void vscode.window.showInformationMessage(text);
      return;
    }
    const budgeted = budgetDiff(changes.files);
    if (budgeted.omitted.length) this.log.info(`chat: #changes left out ${budgeted.omitted.length} files to fit its budget`);
    const untracked = changes.untracked.length ? `\n(untracked, not in HEAD: ${changes.untracked.join(', ')})` : '';
    const folder = vscode.workspace.getWorkspaceFolder(changes.root);
    // The repository's folder: the workspace folder's name when it is one, else its path in the workspace.
    const name = folder && folder.uri.toString() === changes.root.toString() ? folder.name
      : folder ? displayPath(changes.root) : changes.root.path.slice(changes.root.path.lastIndexOf('/') + 1);
    this.addAll([{
      id: newId(), kind: 'changes', path: name || '.', uri: changes.root.toString(), languageId: 'diff', content: `${budgeted.content}${untracked}`.replace(/^\n/, ''),
    }]);
  }

  /** `#symbol`: a workspace symbol picked by name, attached with its whole range. */
  private async addSymbol(): Promise<void> {
    const picked = await pickSymbol((uri) => displayPath(uri), () => this.currentDocument());
    if (!picked) return;
    if (!ATTACHABLE_SCHEMES.has(picked.document.uri.scheme)) return;
    const a = this.fromDocument(picked.document, picked.range);
    this.addAll([{ ...a, kind: 'symbol', label: picked.name.slice(0, LIMITS.title) }]);
  }

  /** The active editor's document, or the current file's while focus is elsewhere (the chat). */
  private currentDocument(): vscode.TextDocument | undefined {
    const editor = vscode.window.activeTextEditor;
    if (editor && ATTACHABLE_SCHEMES.has(editor.document.uri.scheme)) return editor.document;
    const uri = this.pending.activeFile?.file.uri;
    return uri ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri) : undefined;
  }

  /** The suggested current file, clicked: attached as an ordinary file chip. */
  private attachActive(): void {
    const uri = this.pending.activeFile?.file.uri;
    const document = uri ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri) : undefined;
    if (document) this.addAll([this.fromDocument(document)]);
  }

  /**
   * "Add File to Chat…": from the Explorer or an editor tab (`uri`, `uris`), those files; from the chat or the
   * palette, a quick pick of the workspace's files.
   */
  async addFile(uri?: vscode.Uri, uris?: readonly vscode.Uri[]): Promise<void> {
    const chosen = uris?.length ? [...uris] : uri instanceof vscode.Uri ? [uri] : await pickWorkspaceFile();
    if (!chosen?.length) return;
    const attachments: Attachment[] = [];
    for (const file of chosen) {
      try {
        const read = await this.readFile(file);
        if (read === undefined) continue; // a folder among the Explorer's selection
        if ('reason' in read) this.refuse(file, read);
        else attachments.push(read);
      } catch (e) {
        this.log.warn(`chat: cannot read ${file.toString()} to attach it: ${e instanceof Error ? e.message : String(e)}`);
        void vscode.window.showWarningMessage(vscode.l10n.t('{0} cannot be read, so it was not attached.', displayPath(file)));
      }
    }
    if (attachments.length && this.addAll(attachments)) await this.revealChat();
  }

  /**
   * The attachments of the question about to be sent, checked against the model's input budget first. Over it, the
   * user is told and may drop the largest attachment (again, while it does not fit) or cancel: undefined.
   */
  async forSend(question: string, systemPrompt: string | undefined): Promise<Attachment[] | undefined> {
    const active = this.readActive();
    let list = this.pending.forSend(active);
    for (;;) {
      const check = checkBudget({ question, attachments: list, systemPrompt, maxInputTokens: DEFAULT_MODEL_SETTINGS.maxInputTokens });
      // Without attachments there is nothing to offer: the request builder refuses a question that is too long itself.
      if (check.ok || !check.largest) return list;
      const largest = list.find((a) => a.id === check.largest!.id)!;
      const drop = vscode.l10n.t('Remove {0} and Send', chipLabel(largest));
      const detail = check.costs.map((c) => {
        const a = list.find((x) => x.id === c.id)!;
        return vscode.l10n.t('{0}: about {1} tokens', chipLabel(a), count(c.tokens));
      }).join('\n');
      const picked = await vscode.window.showWarningMessage(
        vscode.l10n.t('The question and its attachments come to about {0} tokens, more than the {1} the model accepts. Nothing has been sent.', count(check.tokens), count(check.maxInputTokens)),
        { modal: true, detail },
        drop,
      );
      if (picked !== drop) return undefined;
      this.log.info(`chat: over the input budget (${check.tokens} > ${check.maxInputTokens} tokens): dropped an attachment of ${check.largest.tokens} tokens`);
      list = withoutAttachment(list, largest.id);
      if (largest !== active) this.pending.remove(largest.id);
      this.postChips();
    }
  }

  /** The question went out with `attachments`: their chips go (the active-file chip stays). */
  sent(attachments: readonly Attachment[]): void {
    this.pending.sent(attachments.map((a) => a.id));
    this.postChips();
  }

  postChips(): void {
    const state = this.pending.activeFile;
    let activeFile: ActiveFileView | null = null;
    if (state) {
      activeFile = {
        path: clipPath(state.file.path),
        fullPath: clipPath(fullPathOf(state.file.uri)),
        ...(state.suggested ? { suggested: true } : {}),
        enabled: state.enabled,
        untrusted: !this.pending.isTrusted,
        ...(this.activeTokens !== undefined ? { tokens: this.activeTokens } : {}),
        ...(state.file.refusal ? { refusal: refusalText(state.file.path, state.file.refusal) } : {}),
      };
    }
    this.post({ type: 'attachments', items: this.pending.items.map((a) => toAttachmentView(a, true)), activeFile });
  }

  /** Estimated tokens of the chips the next question carries (the meter), the current file's when it goes. */
  chipTokens(): number {
    const own = this.pending.items.reduce((sum, a) => sum + attachmentTokens(a), 0);
    return own + (this.pending.activeFileToSend() && this.activeTokens !== undefined ? this.activeTokens : 0);
  }

  private addAll(attachments: readonly Attachment[]): boolean {
    let added = 0;
    for (const a of attachments) {
      const refusal = textRefusal(a.content);
      if (refusal) { this.refuse(vscode.Uri.parse(a.uri), refusal); continue; }
      const result: AddResult = this.pending.add(a);
      if (result === 'full') {
        void vscode.window.showWarningMessage(vscode.l10n.t('At most {0} attachments can go with one question.', MAX_ATTACHMENTS));
        break;
      }
      if (result === 'covered') {
        void vscode.window.showInformationMessage(vscode.l10n.t('{0} is already attached (inside another chip), so it goes once.', chipLabel(a)));
        continue;
      }
      added += 1;
    }
    this.postChips();
    return added > 0;
  }

  private fromDocument(document: vscode.TextDocument, range?: vscode.Range): Attachment {
    const a: Attachment = {
      id: newId(),
      kind: range ? 'selection' : 'file',
      path: displayPath(document.uri),
      uri: document.uri.toString(),
      languageId: document.languageId,
      content: document.getText(range),
    };
    if (range) a.lines = selectedLines(range.start, range.end);
    return a;
  }

  /**
   * A file's text: an open document's (unsaved edits included), else read from disk after the size and binary checks.
   * Undefined for a folder.
   */
  private async readFile(uri: vscode.Uri): Promise<Attachment | TextRefusal | undefined> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (open) return this.fromDocument(open);
    const stat = await vscode.workspace.fs.stat(uri);
    if (stat.type & vscode.FileType.Directory) return undefined;
    if (!sizeAllowed(stat.size)) return { reason: 'too-large', bytes: stat.size };
    const refusal = fileRefusal(await vscode.workspace.fs.readFile(uri));
    if (refusal) return refusal;
    // Opened (not shown) for its language and for VS Code's decoding (files.encoding, a BOM, auto-guessing).
    return this.fromDocument(await vscode.workspace.openTextDocument(uri));
  }

  private trackActive(editor: vscode.TextEditor | undefined): void {
    const document = editor?.document;
    if (document && !ATTACHABLE_SCHEMES.has(document.uri.scheme)) {
      // Focus moved to an editor of another kind (the Output panel, a diff's git side): the file the user was in
      // stays the current file while it is still on screen.
      const shown = this.pending.activeFile?.file.uri;
      if (shown && vscode.window.visibleTextEditors.some((e) => e.document.uri.toString() === shown)) return;
    }
    if (!document || !ATTACHABLE_SCHEMES.has(document.uri.scheme)) {
      this.pending.setActiveFile(undefined);
      this.activeTokens = undefined;
      return;
    }
    const text = document.getText();
    const refusal = textRefusal(text);
    const file: ActiveFile = { uri: document.uri.toString(), path: displayPath(document.uri), languageId: document.languageId };
    if (refusal) file.refusal = refusal;
    this.pending.setActiveFile(file);
    this.activeTokens = refusal ? undefined : attachmentTokens(this.fromDocument(document));
  }

  private scheduleActiveRefresh(): void {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      this.trackActive(vscode.window.activeTextEditor);
      this.postChips();
    }, ACTIVE_REFRESH_MS);
  }

  /** The active file's attachment as it is now, when it goes with the question. */
  private readActive(): Attachment | undefined {
    const file = this.pending.activeFileToSend();
    const document = file && vscode.workspace.textDocuments.find((d) => d.uri.toString() === file.uri);
    if (!document || textRefusal(document.getText())) return undefined;
    return this.fromDocument(document);
  }

  private async open(a: Attachment | undefined): Promise<void> {
    if (!a) return;
    try {
      const selection = a.lines ? new vscode.Range(a.lines.start - 1, 0, a.lines.end - 1, Number.MAX_SAFE_INTEGER) : undefined;
      await vscode.window.showTextDocument(vscode.Uri.parse(a.uri), { preview: true, ...(selection ? { selection } : {}) });
    } catch (e) {
      this.log.warn(`chat: cannot open attachment ${a.uri}: ${e instanceof Error ? e.message : String(e)}`);
      void vscode.window.showWarningMessage(vscode.l10n.t('{0} cannot be opened; it may have been moved or deleted.', a.path));
    }
  }

  private refuse(uri: vscode.Uri, refusal: TextRefusal): void {
    void vscode.window.showWarningMessage(refusalText(displayPath(uri), refusal));
  }

  private async revealChat(): Promise<void> {
    await vscode.commands.executeCommand(COMMANDS.openChat);
    this.post({ type: 'focusInput' });
  }

  dispose(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    for (const d of this.subscriptions) d.dispose();
  }
}

// chatViewState.ts reads the chips' views from here.
export { toAttachmentView };
