// Apply to Selection (a code block's action in the chat panel): the code replaces the active editor's primary
// selection, or is inserted at the cursor when nothing is selected, through the same review as Edit Selection: a
// diff of the file and the proposal with Accept and Discard as the diff editor's title actions (proposalReview.ts;
// the rules are src/core/edit's). Code with invisible or bidirectional control characters gets the same warning as
// Copy and Insert first.
import * as vscode from 'vscode';
import { PROPOSAL_SCHEME, type ProposalReviews } from '../edit/proposalReview';
import { confirmInvisibleCharacters } from './invisibleCodeWarning';

export async function applyToSelection(code: string, reviews: ProposalReviews): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  // The diff editor's right side is a proposal itself (read-only); Apply needs the user's own editor.
  if (!editor || editor.document.uri.scheme === PROPOSAL_SCHEME) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Open an editor and select the code to replace (or place the cursor where the code goes).'));
    return;
  }
  if (!(await confirmInvisibleCharacters(code, 'apply'))) return;
  const review = await reviews.open('apply', editor, [new vscode.Range(editor.selection.start, editor.selection.end)]);
  review.setCode(0, code);
  review.finish();
}
