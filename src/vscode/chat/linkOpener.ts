// Opens a link from the chat panel after the shared policy (src/core/links) has judged it: refused links are
// explained; links whose text, user info, host or mail fields hide where they go or what they send ask first, in a
// modal that names the real host (with port and path for local ones) or every recipient and header of an e-mail;
// the rest open with vscode.env.openExternal. What opens is the policy's URL (for mail: rebuilt without the fields it
// removed), never the raw one. The panel itself never navigates.
import * as vscode from 'vscode';
import { evaluateLink, type LinkConcern, type LinkRejection, type LinkVerdict } from '../../core/links/linkPolicy';
import { showInvisibleCharacters } from '../../core/text/invisibleCharacters';

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

type Confirm = Extract<LinkVerdict, { action: 'confirm' }>;

function concernText(concern: LinkConcern, v: Confirm): string {
  switch (concern) {
    case 'user-info': return vscode.l10n.t('The address starts with "{0}@", which is not where it goes: it opens {1}.', v.userInfo ?? '', v.target);
    case 'text-differs': return vscode.l10n.t('The link text names a different address than the one the link opens.');
    case 'text-silent': return vscode.l10n.t('The link text does not say where the link goes.');
    case 'idn': return vscode.l10n.t('{0} is an internationalized (punycode) name, which can imitate another one.', v.target);
    case 'local': return vscode.l10n.t('{0} is on this computer or your local network (a local server may trust it): port {1}, path {2}.', v.local?.host ?? v.target, v.local?.port ?? '', v.local?.path ?? '');
    case 'port': return vscode.l10n.t('The link opens port {0} of {1}, which its text does not name.', v.port ?? '', v.target);
    case 'mail-invisible': return vscode.l10n.t('The e-mail\'s fields contain invisible or bidirectional control characters (shown below as <U+…>).');
    case 'mail-recipients': return vscode.l10n.t('The e-mail goes to more than one recipient or adds copies (cc, bcc): check every address below.');
    case 'mail-content': return vscode.l10n.t('The link fills in the e-mail\'s text or header fields beyond a subject.');
    case 'mail-removed': return vscode.l10n.t('Removed before opening (not standard e-mail fields, such as attachments): {0}', (v.mail?.removed ?? []).join(', '));
  }
}

/** One line per recipient field and kept header; long values are shortened, invisible characters shown. */
function mailLines(v: Confirm): string[] {
  const m = v.mail;
  if (!m) return [];
  const shown = (s: string) => {
    const one = showInvisibleCharacters(s.replace(/\r\n|\r|\n/g, ' ⏎ '));
    return one.length > 300 ? `${one.slice(0, 300)}…` : one;
  };
  const lines: string[] = [];
  if (m.to.length) lines.push(vscode.l10n.t('To: {0}', m.to.join(', ')));
  if (m.cc.length) lines.push(vscode.l10n.t('Cc: {0}', m.cc.join(', ')));
  if (m.bcc.length) lines.push(vscode.l10n.t('Bcc: {0}', m.bcc.join(', ')));
  for (const h of m.headers) {
    if (h.name === 'subject') lines.push(vscode.l10n.t('Subject: {0}', shown(h.value)));
    else if (h.name === 'body') lines.push(vscode.l10n.t('Body: {0}', shown(h.value)));
    else lines.push(`${h.name}: ${shown(h.value)}`);
  }
  return lines;
}

/** Handles the panel's `openLink` message. */
export async function openChatLink(url: string, text: string): Promise<void> {
  const verdict = evaluateLink(url, text);
  if (verdict.action === 'reject') {
    void vscode.window.showWarningMessage(vscode.l10n.t('The link was not opened. {0}', rejectionText(verdict.reason)));
    return;
  }
  if (verdict.action === 'confirm') {
    const mail = verdict.mail !== undefined;
    const open = mail ? vscode.l10n.t('Open E-mail') : vscode.l10n.t('Open Link');
    const detail = [
      ...verdict.concerns.map((c) => concernText(c, verdict)),
      ...mailLines(verdict),
      vscode.l10n.t('Full address: {0}', verdict.url),
    ].join('\n');
    const question = mail ? vscode.l10n.t('Write an e-mail to {0}?', verdict.target) : vscode.l10n.t('Open a link to {0}?', verdict.target);
    const choice = await vscode.window.showWarningMessage(question, { modal: true, detail }, open);
    if (choice !== open) return;
  }
  await vscode.env.openExternal(vscode.Uri.parse(verdict.url, true));
}
