// Picks the message of a count's plural form in VS Code's display language (src/core/text/plural.ts). Both
// messages are written out at the call (vscode.l10n.t literals), so each is in the bundles with its translation.
import * as vscode from 'vscode';
import { pluralForm } from '../../core/text/plural';

export function plural(count: number, one: string, other: string): string {
  return pluralForm(count, vscode.env.language) === 'one' ? one : other;
}
