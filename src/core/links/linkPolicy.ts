// Which links from model output open at once, and when the user must first see where one really goes. The panel
// never navigates: it posts the URL and the link's text, and the host asks this policy. A link opens without a word
// only when its label names its target (labelNames.ts, the port too when it is not the default), it hides no user
// info, its host is not punycode and not on this computer or the local network (nor a name that spells such an
// address), and, for mail, it is one plain address with at most a subject free of control and invisible characters. Everything
// else asks first, with what the modal must list. Pure: no VS Code, no DOM.
import { hasInvisibleCharacters } from '../text/invisibleCharacters';
import { labelNamesAddresses, labelNamesHost, labelNamesPort, type LabelJudgement } from './labelNames';
import { localHostKind, type LocalKind } from './localHosts';
import { isOpenableLink, isWellFormedHost, MAX_LINK_LENGTH, parseLink, type LinkRejection } from './linkSyntax';
import { buildMailto, type ParsedMailto } from './mailto';

export { isOpenableLink, isWellFormedHost, MAX_LINK_LENGTH, type LinkRejection };
export { mentionedHosts } from './labelNames';

export type LinkConcern =
  /** `https://example.com@attacker.example/`: the part before `@` is user info, not the destination. */
  | 'user-info'
  /** The link text names another host or address than the one it opens. */
  | 'text-differs'
  /** The link text does not name where it goes (`[the docs](https://…)`, `[com](https://attacker.com/)`). */
  | 'text-silent'
  /** An internationalized (punycode) host, which can imitate another one. */
  | 'idn'
  /** A host on this computer or the local network (details in `local`). */
  | 'local'
  /** A port other than the scheme's default that the link text does not name (`[example.com](https://example.com:8443/)`). */
  | 'port'
  /** A mail link with several recipients, a `to` field, or cc/bcc (all listed in `mail`). */
  | 'mail-recipients'
  /** A mail link that fills in a body or header fields beyond one plain subject. */
  | 'mail-content'
  /** A subject, body or other field holds invisible or bidirectional control characters (shown in the prompt). */
  | 'mail-invisible'
  /** Header fields were removed before opening (`attach=`, anything non-standard; listed in `mail.removed`). */
  | 'mail-removed';

export interface LocalTarget {
  kind: LocalKind;
  host: string;
  /** The port, explicit or the scheme's default. */
  port: string;
  /** Path, query and fragment. */
  path: string;
}

export type LinkVerdict =
  | { action: 'open'; url: string; target: string }
  | { action: 'confirm'; url: string; target: string; concerns: LinkConcern[]; userInfo?: string; mail?: ParsedMailto; local?: LocalTarget; port?: string }
  | { action: 'reject'; reason: LinkRejection };

type Confirm = Extract<LinkVerdict, { action: 'confirm' }>;

/** The policy's answer for a link `url` whose visible text is `text`. */
export function evaluateLink(url: string, text: string): LinkVerdict {
  const link = parseLink(url);
  switch (link.kind) {
    case 'reject': return { action: 'reject', reason: link.reason };
    case 'mailto': return evaluateMailto(link.mail, text);
    case 'http': return evaluateHttp(link.url, link.host, link.userInfo, text);
  }
}

const labelConcern = (j: LabelJudgement): LinkConcern | undefined => (j === 'names' ? undefined : j === 'differs' ? 'text-differs' : 'text-silent');

function evaluateHttp(url: URL, host: string, userInfo: string | undefined, text: string): LinkVerdict {
  const concerns: LinkConcern[] = [];
  const extra: Partial<Confirm> = {};
  if (userInfo !== undefined) {
    concerns.push('user-info');
    extra.userInfo = userInfo;
  }
  if (host.split('.').some((l) => l.startsWith('xn--'))) concerns.push('idn');
  const kind = localHostKind(host);
  if (kind) {
    concerns.push('local');
    extra.local = { kind, host, port: url.port || (url.protocol === 'https:' ? '443' : '80'), path: `${url.pathname}${url.search}${url.hash}` };
  }
  const label = labelConcern(labelNamesHost(text, host));
  if (label) concerns.push(label);
  // URL drops a default port; any other one is a different service than the name alone says.
  if (!kind && url.port !== '' && label === undefined && !labelNamesPort(text, url.port)) {
    concerns.push('port');
    extra.port = url.port;
  }
  return verdict(url.href, host, concerns, extra);
}

function evaluateMailto(mail: ParsedMailto, text: string): LinkVerdict {
  const recipients = [...mail.to, ...mail.cc, ...mail.bcc];
  const concerns: LinkConcern[] = [];
  if (recipients.length > 1 || mail.toHeader || mail.cc.length > 0 || mail.bcc.length > 0) concerns.push('mail-recipients');
  // One plain subject is all a link may fill in unasked (and one without line breaks: those would forge headers).
  const plainSubject = mail.headers.length === 1 && mail.headers[0]!.name === 'subject' && !/[\p{Cc}\u2028\u2029]/u.test(mail.headers[0]!.value);
  if (mail.headers.length > 0 && !plainSubject) concerns.push('mail-content');
  // Nor invisible or bidi characters: the prompt shows them as code points, opening unasked would not.
  if (mail.headers.some((h) => hasInvisibleCharacters(h.value))) concerns.push('mail-invisible');
  if (mail.removed.length > 0) concerns.push('mail-removed');
  const label = labelConcern(labelNamesAddresses(text, recipients));
  if (label) concerns.push(label);
  if (recipients.some((a) => /(^|[@.])xn--/i.test(a))) concerns.push('idn');
  return verdict(buildMailto(mail), recipients.join(', '), concerns, concerns.length > 0 ? { mail } : {});
}

function verdict(url: string, target: string, concerns: LinkConcern[], extra: Partial<Confirm>): LinkVerdict {
  if (concerns.length === 0) return { action: 'open', url, target };
  return { action: 'confirm', url, target, concerns, ...extra };
}

