// What the chat panel's code-block buttons do in the editor: copy, insert at every cursor, open as a new file.
// Copy and Insert warn first when the text holds invisible or bidirectional control characters.
import * as vscode from 'vscode';
import { confirmInvisibleCharacters } from './invisibleCodeWarning';

/** Copies `text` (a code block, or a whole message) to the clipboard. */
export async function copyCode(text: string): Promise<void> {
  if (!(await confirmInvisibleCharacters(text, 'copy'))) return;
  await vscode.env.clipboard.writeText(text);
}

export async function insertAtCursor(code: string): Promise<void> {
  if (!(await confirmInvisibleCharacters(code, 'insert'))) return;
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Open an editor to insert the code into.'));
    return;
  }
  await editor.edit((b) => {
    for (const sel of editor.selections) b.replace(sel, code);
  });
}

export async function openInEditor(code: string, language: string): Promise<void> {
  const known = language ? (await vscode.languages.getLanguages()).includes(language) : false;
  const doc = await vscode.workspace.openTextDocument({ content: code, language: known ? language : 'plaintext' });
  await vscode.window.showTextDocument(doc, { preview: false });
}
