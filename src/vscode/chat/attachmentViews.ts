// How attachments read in VS Code: the workspace-relative path of a file, a chip's label and its view for the
// webview (never the content), a refused file's message, and Add File…'s picker over the workspace's files.
import * as vscode from 'vscode';
import { attachmentName, attachmentTokens, MAX_ATTACHMENT_BYTES, type Attachment, type TextRefusal } from '../../core/chat';
import { LIMITS, type AttachmentView } from '../../protocol';
import { searchExcludeGlob } from './searchExcludes';

/** Files the quick pick lists at most (per workspace folder). */
const MAX_PICK_FILES = 5_000;

/** Workspace-relative with forward slashes (the folder's name first in a multi-root workspace); the file name outside it. */
export function displayPath(uri: vscode.Uri): string {
  if (uri.scheme === 'untitled' || !vscode.workspace.getWorkspaceFolder(uri)) return uri.path.slice(uri.path.lastIndexOf('/') + 1) || uri.path;
  return vscode.workspace.asRelativePath(uri, (vscode.workspace.workspaceFolders?.length ?? 0) > 1).replace(/\\/g, '/');
}

/** What the tooltip shows: the file's path on its machine, or the URI of anything else. */
export function fullPathOf(uri: string): string {
  const parsed = vscode.Uri.parse(uri);
  return parsed.scheme === 'file' ? parsed.fsPath : uri;
}

export function clipPath(p: string): string {
  return p.length <= LIMITS.attachmentPath ? p : `…${p.slice(-(LIMITS.attachmentPath - 1))}`;
}

/** "geometry.py:3-4": the chip's label, also in the budget question. */
export function chipLabel(a: Attachment): string {
  if (a.kind === 'changes') return vscode.l10n.t('Changes');
  if (a.kind === 'problems') return vscode.l10n.t('Problems: {0}', attachmentName(a));
  const name = a.kind === 'symbol' && a.label ? a.label : attachmentName(a);
  if (!a.lines) return name;
  return a.lines.start === a.lines.end ? `${name}:${a.lines.start}` : `${name}:${a.lines.start}-${a.lines.end}`;
}

/** A figure in the user's language ("19,169"). */
export function count(n: number): string {
  return n.toLocaleString(vscode.env.language);
}

export function refusalText(path: string, refusal: TextRefusal): string {
  return refusal.reason === 'binary'
    ? vscode.l10n.t('{0} is a binary file and cannot be attached.', path)
    : vscode.l10n.t('{0} is too large to attach ({1} KB; the limit is {2} KB).', path, count(Math.ceil(refusal.bytes / 1024)), count(MAX_ATTACHMENT_BYTES / 1024));
}

/**
 * A stored or pending attachment as its chip: never its content. `withTokens` (the chips above the input) adds its
 * estimate; the transcript leaves it out, so a state message does not re-estimate every stored attachment.
 */
export function toAttachmentView(a: Attachment, withTokens = false): AttachmentView {
  const view: AttachmentView = { id: a.id, kind: a.kind, path: clipPath(a.path), fullPath: clipPath(fullPathOf(a.uri)) };
  if (a.label) view.label = a.label.slice(0, LIMITS.title);
  if (withTokens) view.tokens = attachmentTokens(a);
  if (a.lines) {
    view.startLine = Math.min(a.lines.start, LIMITS.attachmentLine);
    view.endLine = Math.min(a.lines.end, LIMITS.attachmentLine);
  }
  return view;
}

/** Add File…'s quick pick: the workspace's files (files.exclude and search.exclude honoured), searched by name. */
export async function pickWorkspaceFile(): Promise<vscode.Uri[] | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (!folders.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Open a folder to pick files from it, or add a selection from an editor.'));
    return undefined;
  }
  const items = Promise.all(folders.map((folder) => vscode.workspace.findFiles(
    new vscode.RelativePattern(folder, '**/*'),
    searchExcludeGlob(vscode.workspace.getConfiguration('search', folder.uri).get('exclude')),
    MAX_PICK_FILES,
  ))).then((found) => found.flat()
    .map((uri) => ({ uri, path: displayPath(uri) }))
    .sort((a, b) => a.path.localeCompare(b.path))
    .map(({ uri, path }): vscode.QuickPickItem & { uri: vscode.Uri } => {
      const slash = path.lastIndexOf('/');
      return { label: path.slice(slash + 1), description: slash > 0 ? path.slice(0, slash) : '', uri, iconPath: vscode.ThemeIcon.File };
    }));
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Add File to Chat'),
    placeHolder: vscode.l10n.t('Search the workspace files by name'),
    matchOnDescription: true,
  });
  return picked ? [picked.uri] : undefined;
}
