// Which links from model output are openable at all: only http:, https: and mailto: with a well-formed host or
// address. The URL is parsed with WHATWG `URL` (as browsers and VS Code do) after a strict syntactic check, so tricks
// that parsers silently repair (tabs and newlines in the scheme, `https:\\host`, percent-encoded hosts, numeric-IP
// shorthands, look-alike scheme letters) are refused rather than repaired. The webview uses this alone (to decide
// what to show as a link); the host's policy (linkPolicy.ts) then judges the label against what this found.
import { parseMailto, type ParsedMailto } from './mailto';

export const MAX_LINK_LENGTH = 8_192;

export type LinkRejection =
  | 'too-long'
  /** Whitespace, control, non-ASCII or backslash characters: nothing a well-formed link written by markdown contains. */
  | 'characters'
  | 'scheme'
  | 'malformed'
  | 'host'
  | 'address';

export type ParsedLink =
  | { kind: 'http'; url: URL; host: string; userInfo?: string }
  | { kind: 'mailto'; mail: ParsedMailto }
  | { kind: 'reject'; reason: LinkRejection };

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
const LDH_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** A DNS name of letter-digit-hyphen labels (punycode included), an IPv4 address or a bracketed IPv6 address. */
export function isWellFormedHost(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  if (/^\[[0-9a-f:.]+\]$/.test(host)) return true; // already validated and canonicalized by URL
  if (IPV4.test(host)) return true;
  const labels = host.split('.');
  return labels.every((l) => LDH_LABEL.test(l)) && !/^\d+$/.test(labels[labels.length - 1]!);
}

/** A mail domain: a DNS name, not an IP literal. */
const isMailDomain = (d: string) => isWellFormedHost(d) && !IPV4.test(d) && !d.startsWith('[');

export function parseLink(url: string): ParsedLink {
  if (url.length > MAX_LINK_LENGTH) return { kind: 'reject', reason: 'too-long' };
  if (!PRINTABLE_ASCII.test(url) || url.includes('\\')) return { kind: 'reject', reason: 'characters' };
  const scheme = /^(https?|mailto):/i.exec(url)?.[1]?.toLowerCase();
  if (!scheme) return { kind: 'reject', reason: 'scheme' };
  return scheme === 'mailto' ? parseMail(url) : parseHttp(url);
}

/** True when `url` is a link the panel may show as one (the host still judges its label). */
export function isOpenableLink(url: string): boolean {
  return parseLink(url).kind !== 'reject';
}

function parseMail(raw: string): ParsedLink {
  try {
    void new URL(raw); // the same parse the opener does
  } catch {
    return { kind: 'reject', reason: 'malformed' };
  }
  const mail = parseMailto(raw, isMailDomain);
  return typeof mail === 'string' ? { kind: 'reject', reason: mail } : { kind: 'mailto', mail };
}

function parseHttp(raw: string): ParsedLink {
  // The authority must be spelled out: `https:host`, `https:/host` and `https:javascript:` are refused.
  const authority = /^https?:\/\/([^/?#]*)/i.exec(raw)?.[1];
  if (!authority) return { kind: 'reject', reason: 'malformed' };
  if (authority.includes('%')) return { kind: 'reject', reason: 'host' };
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return { kind: 'reject', reason: 'malformed' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { kind: 'reject', reason: 'scheme' };
  const at = authority.lastIndexOf('@');
  const hostPort = authority.slice(at + 1);
  const rawHost = hostPort.startsWith('[') ? hostPort.slice(0, hostPort.indexOf(']') + 1) : hostPort.replace(/:\d*$/, '');
  const host = parsed.hostname;
  // What the parser made of the host must be what is written (no numeric-IP shorthands, no case or dot games).
  if (!isWellFormedHost(host) || (!rawHost.startsWith('[') && rawHost.toLowerCase() !== host)) return { kind: 'reject', reason: 'host' };
  return at >= 0 ? { kind: 'http', url: parsed, host, userInfo: authority.slice(0, at) } : { kind: 'http', url: parsed, host };
}
