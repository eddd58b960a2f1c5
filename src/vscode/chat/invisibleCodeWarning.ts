// Copy, Insert and Apply pass code from the chat panel on exactly (and Accept, Edit Selection's rewrite); when it holds invisible or bidirectional control
// characters (which make code read differently from what it does), a modal names them first and the user chooses
// to go on or cancel. Open in Editor needs no warning: the editor highlights such characters itself.
import * as vscode from 'vscode';
import { describeInvisibleCharacters, findInvisibleCharacters } from '../../core/text/invisibleCharacters';

export type CodeTransfer = 'copy' | 'insert' | 'apply' | 'accept';

/** True when `code` may be passed on (it has no such characters, or the user said so). */
export async function confirmInvisibleCharacters(code: string, transfer: CodeTransfer): Promise<boolean> {
  const found = findInvisibleCharacters(code);
  if (found.length === 0) return true;
  const go = { copy: () => vscode.l10n.t('Copy Anyway'), insert: () => vscode.l10n.t('Insert Anyway'), apply: () => vscode.l10n.t('Apply Anyway'), accept: () => vscode.l10n.t('Accept Anyway') }[transfer]();
  const list = describeInvisibleCharacters(found, 6, (n) => vscode.l10n.t('{0} more', n));
  const choice = await vscode.window.showWarningMessage(
    vscode.l10n.t('This code contains invisible or bidirectional control characters: {0}', list),
    { modal: true, detail: vscode.l10n.t('They can make code read differently from what it does (for example, reorder what the editor shows). The chat panel marks each one with its code point.') },
    go,
  );
  return choice === go;
}
