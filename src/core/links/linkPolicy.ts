// Which links from model output may be opened, and when the user must first see where one really goes. The
// panel never navigates: it posts the URL and the link's text, and the host asks this policy. Only http:, https:
// and mailto: with a well-formed host or address are openable; the URL is parsed with WHATWG `URL` (as browsers
// and VS Code do) after a strict syntactic check, so tricks that parsers silently repair (tabs and newlines in the
// scheme, `https:\\host`, percent-encoded hosts, numeric-IP shorthands, look-alike scheme letters) are refused
// rather than repaired. Pure: used by the extension host and by the webview (to decide what to show as a link).

export const MAX_LINK_LENGTH = 8_192;

export type LinkConcern =
  /** `https://example.com@attacker.example/`: the part before `@` is user info, not the destination. */
  | 'user-info'
  /** The link text names another host or address than the one it opens. */
  | 'text-differs'
  /** The link text does not name where it goes (`[the docs](https://…)`). */
  | 'text-silent'
  /** An internationalized (punycode) host, which can imitate another one. */
  | 'idn';

export type LinkRejection =
  | 'too-long'
  /** Whitespace, control, non-ASCII or backslash characters: nothing a well-formed link written by markdown contains. */
  | 'characters'
  | 'scheme'
  | 'malformed'
  | 'host'
  | 'address';

export type LinkVerdict =
  | { action: 'open'; url: string; target: string }
  | { action: 'confirm'; url: string; target: string; concerns: LinkConcern[]; userInfo?: string }
  | { action: 'reject'; reason: LinkRejection };

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
const LDH_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const EMAIL_LOCAL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}$/;

/** A DNS name of letter-digit-hyphen labels (punycode included), an IPv4 address or a bracketed IPv6 address. */
export function isWellFormedHost(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  if (/^\[[0-9a-f:.]+\]$/.test(host)) return true; // already validated and canonicalized by URL
  if (IPV4.test(host)) return true;
  const labels = host.split('.');
  return labels.every((l) => LDH_LABEL.test(l)) && !/^\d+$/.test(labels[labels.length - 1]!);
}

/** The policy's answer for a link `url` whose visible text is `text`. */
export function evaluateLink(url: string, text: string): LinkVerdict {
  if (url.length > MAX_LINK_LENGTH) return { action: 'reject', reason: 'too-long' };
  if (!PRINTABLE_ASCII.test(url) || url.includes('\\')) return { action: 'reject', reason: 'characters' };
  const scheme = /^(https?|mailto):/i.exec(url)?.[1]?.toLowerCase();
  if (!scheme) return { action: 'reject', reason: 'scheme' };
  return scheme === 'mailto' ? evaluateMailto(url, text) : evaluateHttp(url, text);
}

function evaluateHttp(raw: string, text: string): LinkVerdict {
  // The authority must be spelled out: `https:host`, `https:/host` and `https:javascript:` are refused.
  const authority = /^https?:\/\/([^/?#]*)/i.exec(raw)?.[1];
  if (!authority) return { action: 'reject', reason: 'malformed' };
  if (authority.includes('%')) return { action: 'reject', reason: 'host' };
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return { action: 'reject', reason: 'malformed' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { action: 'reject', reason: 'scheme' };
  const at = authority.lastIndexOf('@');
  const hostPort = authority.slice(at + 1);
  const rawHost = hostPort.startsWith('[') ? hostPort.slice(0, hostPort.indexOf(']') + 1) : hostPort.replace(/:\d*$/, '');
  const host = parsed.hostname;
  // What the parser made of the host must be what is written (no numeric-IP shorthands, no case or dot games).
  if (!isWellFormedHost(host) || (!rawHost.startsWith('[') && rawHost.toLowerCase() !== host)) return { action: 'reject', reason: 'host' };
  const concerns: LinkConcern[] = [];
  let userInfo: string | undefined;
  if (at >= 0) {
    concerns.push('user-info');
    userInfo = authority.slice(0, at);
  }
  if (host.split('.').some((l) => l.startsWith('xn--'))) concerns.push('idn');
  const textConcern = compareText(mentionedHosts(text), (m) => host === m || host.endsWith(`.${m}`), stripWww);
  if (textConcern) concerns.push(textConcern);
  return verdict(parsed.href, host, concerns, userInfo);
}

function evaluateMailto(raw: string, text: string): LinkVerdict {
  const rest = raw.slice('mailto:'.length);
  const query = rest.indexOf('?');
  let addresses: string[];
  try {
    addresses = decodeURIComponent(query >= 0 ? rest.slice(0, query) : rest).split(',').map((a) => a.trim());
    void new URL(raw); // the same parse the opener does
  } catch {
    return { action: 'reject', reason: 'malformed' };
  }
  for (const a of addresses) {
    const at = a.lastIndexOf('@');
    if (at <= 0 || !EMAIL_LOCAL.test(a.slice(0, at))) return { action: 'reject', reason: 'address' };
    const domain = a.slice(at + 1).toLowerCase();
    if (!isWellFormedHost(domain) || IPV4.test(domain) || domain.startsWith('[')) return { action: 'reject', reason: 'address' };
  }
  const target = addresses.join(', ');
  const lower = addresses.map((a) => a.toLowerCase());
  const mentioned = [...text.matchAll(/[^\s@<>()[\]"',;:]+@[^\s@<>()[\]"',;:]+/g)].map((m) => m[0].toLowerCase().replace(/\.$/, ''));
  const concerns: LinkConcern[] = [];
  const textConcern = compareText(mentioned, (m) => lower.includes(m), (s) => s);
  if (textConcern) concerns.push(textConcern);
  if (addresses.some((a) => a.toLowerCase().includes('xn--'))) concerns.push('idn');
  return verdict(raw, target, concerns);
}

function verdict(url: string, target: string, concerns: LinkConcern[], userInfo?: string): LinkVerdict {
  if (concerns.length === 0) return { action: 'open', url, target };
  return userInfo === undefined ? { action: 'confirm', url, target, concerns } : { action: 'confirm', url, target, concerns, userInfo };
}

function compareText(mentioned: string[], matches: (m: string) => boolean, normalize: (s: string) => string): LinkConcern | undefined {
  if (mentioned.length === 0) return 'text-silent';
  return mentioned.every((m) => matches(normalize(m))) ? undefined : 'text-differs';
}

const stripWww = (h: string) => (h.startsWith('www.') ? h.slice(4) : h);

/**
 * Top-level domains that make a bare `name.tld` in link text read as a host. File names (`main.py`,
 * `README.md`) must not, so only common TLDs count; URLs with a scheme and `www.` names always do.
 */
const COMMON_TLDS = new Set([
  'com', 'net', 'org', 'edu', 'gov', 'mil', 'int', 'io', 'dev', 'app', 'ai', 'co', 'me', 'info', 'biz', 'xyz', 'site',
  'online', 'tech', 'cloud', 'page', 'example', 'test', 'invalid', 'localhost', 'cn', 'uk', 'de', 'jp', 'fr', 'ru',
  'in', 'br', 'au', 'ca', 'us', 'eu', 'nl', 'se', 'ch', 'es', 'it', 'kr', 'tw', 'hk', 'sg', 'ly', 'gg', 'to',
]);

/** Hosts the link text names: URLs with a scheme, `www.` names and bare names under a common TLD. */
export function mentionedHosts(text: string): string[] {
  const out: string[] = [];
  // The whole text is one host (`localhost:3000`, `127.0.0.1`, `https://example.com/a`)?
  const whole = /^(?:[a-z][a-z0-9+.-]*:\/\/)?([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?(?:[/?#]\S*)?$/i.exec(text.trim());
  if (whole && !whole[1]!.includes('.')) {
    try { out.push(new URL(`http://${whole[1]}`).hostname); } catch { /* not a host */ }
  }
  const NAME = /(?:([a-z][a-z0-9+.-]*):\/\/)?((?:[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?\.)+[\p{L}\p{N}-]*[\p{L}\p{N}])/giu;
  for (const m of text.matchAll(NAME)) {
    const name = m[2]!;
    const tld = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
    if (!m[1] && !/^www\./i.test(name) && !COMMON_TLDS.has(tld)) continue;
    try {
      out.push(stripWww(new URL(`http://${name}`).hostname));
    } catch {
      out.push(name.toLowerCase()); // not even a host: it cannot match, so the text "differs"
    }
  }
  return out;
}
