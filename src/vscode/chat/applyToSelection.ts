// Apply to Selection (a code block's action in the chat panel): the code replaces the active editor's primary
// selection, or is inserted at the cursor when nothing is selected, after a diff preview and the user's Apply. The
// proposed document is served read-only on our own scheme; Apply makes one WorkspaceEdit of exactly the range
// selected when the preview was made, and is refused when the document changed meanwhile (src/core/edit has the
// rules). Code with invisible or bidirectional control characters gets the same warning as Copy and Insert first.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { checkApplicable, proposeReplacement, type ApplyTarget } from '../../core/edit/applyToSelection';
import { VSCODE_COMMANDS } from '../commandIds';
import { confirmInvisibleCharacters } from './invisibleCodeWarning';

export const PROPOSAL_SCHEME = 'triton-chatglm-proposal';

/** The proposed documents of the previews that are open (the right side of each diff); read-only by their scheme. */
export class ProposalDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private count = 0;

  /** Holds `text` at a new URI ending in `fileName` (the diff editor picks the language from its extension). */
  add(fileName: string, text: string): vscode.Uri {
    this.count += 1;
    const uri = vscode.Uri.parse(`${PROPOSAL_SCHEME}:/${this.count}/${encodeURIComponent(fileName)}`);
    this.texts.set(uri.toString(), text);
    return uri;
  }

  remove(uri: vscode.Uri): void {
    this.texts.delete(uri.toString());
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  dispose(): void {
    this.texts.clear();
  }
}

export async function applyToSelection(code: string, proposals: ProposalDocuments): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  // The diff editor's right side is a proposal itself (read-only); Apply needs the user's own editor.
  if (!editor || editor.document.uri.scheme === PROPOSAL_SCHEME) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Open an editor and select the code to replace (or place the cursor where the code goes).'));
    return;
  }
  if (!(await confirmInvisibleCharacters(code, 'apply'))) return;
  const doc = editor.document;
  const range = new vscode.Range(editor.selection.start, editor.selection.end);
  const target: ApplyTarget = { start: doc.offsetAt(range.start), end: doc.offsetAt(range.end), version: doc.version };
  const proposal = proposeReplacement(doc.getText(), target, code, doc.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n');
  const fileName = path.posix.basename(doc.uri.path) || 'untitled';
  const shown = vscode.workspace.asRelativePath(doc.uri);
  const uri = proposals.add(fileName, proposal.proposed);
  try {
    await vscode.commands.executeCommand(VSCODE_COMMANDS.diff, doc.uri, uri, vscode.l10n.t('{0} ↔ Proposed Change', fileName), { preview: false });
    const apply = vscode.l10n.t('Apply');
    const discard = vscode.l10n.t('Discard');
    const question = proposal.mode === 'insert'
      ? vscode.l10n.t('Insert the code at the cursor in {0}, as the diff shows?', shown)
      : vscode.l10n.t('Replace the selection in {0} with the code, as the diff shows?', shown);
    if ((await vscode.window.showInformationMessage(question, apply, discard)) !== apply) return;
    const check = checkApplicable(target, { closed: doc.isClosed, version: doc.version });
    if (!check.ok) {
      void vscode.window.showWarningMessage(check.reason === 'closed'
        ? vscode.l10n.t('{0} was closed, so the code was not applied.', shown)
        : vscode.l10n.t('{0} changed after the preview, so the code was not applied. Use Apply to Selection again.', shown));
      return;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, range, proposal.replacement);
    if (!(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showErrorMessage(vscode.l10n.t('The code could not be applied to {0}.', shown));
      return;
    }
    await closePreview(uri);
    // The editor again, the new code selected: what changed is where the user looks.
    const end = doc.positionAt(target.start + proposal.replacement.length);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(range.start, end), viewColumn: editor.viewColumn });
  } finally {
    await closePreview(uri);
    proposals.remove(uri);
  }
}

/** Closes the diff editor of a proposal, wherever the user left it. */
async function closePreview(uri: vscode.Uri): Promise<void> {
  const key = uri.toString();
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs)
    .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === key);
  if (tabs.length > 0) await vscode.window.tabGroups.close(tabs);
}
