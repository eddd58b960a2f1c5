// The review's progress drawn in the diff itself (its right side, the proposal): while a rewrite is written, its
// lines are highlighted with "ChatGLM is writing…" and the count of lines so far, so the two sides never look the
// same without a word; once every rewrite has ended, the first range says how to Accept or Discard, with the keys.
// The lines and phases come from src/core/edit/reviewProgress.ts.
import * as vscode from 'vscode';
import { targetLines, targetPhases, type TargetPhase } from '../../core/edit/reviewProgress';
import type { RangeReplacement } from '../../core/edit/applyToSelection';

/** What a review shows now (Review in proposalReview.ts). */
export interface ReviewProgressView {
  readonly uri: vscode.Uri;
  readonly text: string;
  readonly targets: readonly { start: number; end: number }[];
  readonly codes: readonly (string | undefined)[];
  readonly proposal: { replacements: RangeReplacement[]; proposed: string };
  readonly finished: boolean;
}

const mac = process.platform === 'darwin';

export class ReviewDecorations implements vscode.Disposable {
  /** The lines of a rewrite still being written. */
  private readonly writing = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
  });
  /** The words at the end of a range's first line (after its text, never before it). */
  private readonly note = vscode.window.createTextEditorDecorationType({
    after: { margin: '0 0 0 2em', color: new vscode.ThemeColor('editorCodeLens.foreground') },
  });

  /** Draws `review` in every visible editor of its proposal (the diff's right side). */
  render(review: ReviewProgressView): void {
    const editors = vscode.window.visibleTextEditors.filter((e) => e.document.uri.toString() === review.uri.toString());
    if (editors.length === 0) return;
    const lines = targetLines(review.proposal.proposed, review.text.length, review.targets, review.proposal.replacements);
    const phases = targetPhases(review.codes, review.finished);
    for (const editor of editors) {
      const document = editor.document;
      const endOf = (line: number) => document.lineAt(Math.max(0, Math.min(line, document.lineCount - 1))).range.end;
      const writing: vscode.Range[] = [];
      const notes: vscode.DecorationOptions[] = [];
      phases.forEach((phase, i) => {
        const at = lines[i];
        if (!at) return;
        const note = { range: new vscode.Range(endOf(at.first), endOf(at.first)), renderOptions: { after: { contentText: phaseText(phase) } } };
        // Complete: said once, on the first range (the diff shows what changed; the keys are the same for all).
        if (phase.kind === 'complete') {
          if (i === 0) notes.push(note);
          return;
        }
        writing.push(new vscode.Range(at.first, 0, at.last, 0));
        notes.push(note);
      });
      editor.setDecorations(this.writing, writing);
      editor.setDecorations(this.note, notes);
    }
  }

  dispose(): void {
    this.writing.dispose();
    this.note.dispose();
  }
}

function phaseText(phase: TargetPhase): string {
  switch (phase.kind) {
    case 'waiting': return `⟳ ${vscode.l10n.t('ChatGLM is writing the rewrite of these lines…')}`;
    case 'writing': return `⟳ ${phase.lines === 1
      ? vscode.l10n.t('ChatGLM is writing the rewrite… 1 line so far')
      : vscode.l10n.t('ChatGLM is writing the rewrite… {0} lines so far', phase.lines)}`;
    case 'complete': return `✓ ${vscode.l10n.t('Complete: Accept {0} · Discard {1}', mac ? '⌘Enter' : 'Ctrl+Enter', 'Escape')}`;
  }
}
