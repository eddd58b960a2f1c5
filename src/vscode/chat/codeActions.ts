// What the chat panel's code-block buttons do in the editor: copy, insert at every cursor, open as a new file.
import * as vscode from 'vscode';

export async function copyCode(code: string): Promise<void> {
  await vscode.env.clipboard.writeText(code);
}

export async function insertAtCursor(code: string): Promise<void> {
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
