// Opens a link from the chat panel after the shared policy (src/core/links) has judged it: refused links are
// explained, links whose text or user info hides where they go ask first (a modal naming the real host), and the
// rest open with vscode.env.openExternal. The panel itself never navigates.
import * as vscode from 'vscode';
import { evaluateLink, type LinkConcern, type LinkRejection } from '../../core/links/linkPolicy';

function rejectionText(reason: LinkRejection): string {
  switch (reason) {
    case 'too-long': return vscode.l10n.t('The link is too long.');
    case 'characters': return vscode.l10n.t('The link contains spaces, control characters, non-ASCII characters or backslashes.');
    case 'scheme': return vscode.l10n.t('Only http, https and mailto links are opened.');
    case 'malformed': return vscode.l10n.t('The link is not a well-formed address.');
    case 'host': return vscode.l10n.t('The link\'s host name is not well-formed.');
    case 'address': return vscode.l10n.t('The link is not a well-formed e-mail address.');
  }
}

function concernText(concern: LinkConcern, target: string, userInfo: string | undefined): string {
  switch (concern) {
    case 'user-info': return vscode.l10n.t('The address starts with "{0}@", which is not where it goes: it opens {1}.', userInfo ?? '', target);
    case 'text-differs': return vscode.l10n.t('The link text names a different address than the one the link opens.');
    case 'text-silent': return vscode.l10n.t('The link text does not say where the link goes.');
    case 'idn': return vscode.l10n.t('{0} is an internationalized (punycode) name, which can imitate another one.', target);
  }
}

/** Handles the panel's `openLink` message. */
export async function openChatLink(url: string, text: string): Promise<void> {
  const verdict = evaluateLink(url, text);
  if (verdict.action === 'reject') {
    void vscode.window.showWarningMessage(vscode.l10n.t('The link was not opened. {0}', rejectionText(verdict.reason)));
    return;
  }
  if (verdict.action === 'confirm') {
    const open = vscode.l10n.t('Open Link');
    const detail = [...verdict.concerns.map((c) => concernText(c, verdict.target, verdict.userInfo)), vscode.l10n.t('Full address: {0}', verdict.url)].join('\n');
    const choice = await vscode.window.showWarningMessage(vscode.l10n.t('Open a link to {0}?', verdict.target), { modal: true, detail }, open);
    if (choice !== open) return;
  }
  await vscode.env.openExternal(vscode.Uri.parse(verdict.url, true));
}
