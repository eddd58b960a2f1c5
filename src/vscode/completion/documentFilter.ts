// Which documents may be sent for completion: real files or untitled buffers (not output, git or diff views),
// in a trusted workspace, in an enabled language, not a secret file by name, not matched by completions.exclude.
import * as vscode from 'vscode';
import { isSecretFileName, languageEnabled } from '../../core/completion/availability';
import type { CompletionSettings } from '../../core/completion/settings';

const SCHEMES = new Set(['file', 'untitled', 'vscode-remote', 'vscode-notebook-cell']);

export type DocumentVerdict = 'ok' | 'scheme' | 'untrusted' | 'language' | 'secret' | 'excluded';

export function documentVerdict(document: vscode.TextDocument, settings: CompletionSettings): DocumentVerdict {
  if (!SCHEMES.has(document.uri.scheme)) return 'scheme';
  if (!vscode.workspace.isTrusted) return 'untrusted';
  if (!languageEnabled(settings.languages, document.languageId)) return 'language';
  if (isSecretFileName(document.uri.path)) return 'secret';
  // The editor's own glob matcher, so patterns mean what they mean in files.exclude.
  if (settings.exclude.some((pattern) => vscode.languages.match({ pattern }, document) > 0)) return 'excluded';
  return 'ok';
}
