// Which files the user edited lately (and where), for the ###REFERENCE: blocks: the core picks and budgets them.
import * as vscode from 'vscode';
import type { ReferenceCandidate } from '../../core/completion/references';
import type { CompletionSettings } from '../../core/completion/settings';
import { documentVerdict } from './documentFilter';

const KEEP = 20;

export class RecentEdits implements vscode.Disposable {
  private readonly edits = new Map<string, { at: number; offset: number }>();
  private readonly subscriptions: vscode.Disposable[];

  constructor() {
    this.subscriptions = [
      vscode.workspace.onDidChangeTextDocument((e) => {
        const change = e.contentChanges[0];
        if (!change) return;
        const key = e.document.uri.toString();
        this.edits.delete(key);
        this.edits.set(key, { at: Date.now(), offset: e.document.offsetAt(change.range.start) });
        if (this.edits.size > KEEP) this.edits.delete(this.edits.keys().next().value!);
      }),
      vscode.workspace.onDidCloseTextDocument((d) => this.edits.delete(d.uri.toString())),
    ];
  }

  /** Open documents that may be sent (the same filter as the current one), edited ones with when and where. */
  candidates(current: vscode.TextDocument, settings: CompletionSettings): ReferenceCandidate[] {
    const out: ReferenceCandidate[] = [];
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.toString() === current.uri.toString() || documentVerdict(doc, settings) !== 'ok') continue;
      const edit = this.edits.get(doc.uri.toString());
      out.push({ path: vscode.workspace.asRelativePath(doc.uri, false), text: doc.getText(), ...(edit ? { editedAt: edit.at, focus: edit.offset } : {}) });
    }
    return out;
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
  }
}
