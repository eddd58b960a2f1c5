// `mailto:` URLs read in full (RFC 6068): the addresses before `?`, then `to`, `cc`, `bcc`, `subject`, `body` and any
// other header field, percent-decoded. What a mail client is handed is rebuilt from this reading, never the raw URL,
// so a header the policy removed (`attach=`, which some clients honour, or anything else non-standard) is gone.

export interface MailHeader {
  /** Lower-case field name: subject, body, in-reply-to, ... */
  name: string;
  value: string;
}

export interface ParsedMailto {
  /** Addresses before `?` (the "plain" recipients). */
  address: string[];
  /** Every recipient by field, the plain ones first in `to`. */
  to: string[];
  cc: string[];
  bcc: string[];
  /** `to` header fields were used (besides or instead of the plain addresses). */
  toHeader: boolean;
  /** The fields that are kept, in order, decoded (subject, body, in-reply-to, references, keywords, comments). */
  headers: MailHeader[];
  /** Names of the fields removed before opening (attach, attachment, from, x-…), as written, each once. */
  removed: string[];
}

export type MailtoProblem = 'malformed' | 'address';

/** Header fields RFC 6068 and RFC 5322 give a meaning a mail client may fill in from a link. Anything else is removed. */
const KEPT = new Set(['subject', 'body', 'in-reply-to', 'references', 'keywords', 'comments']);
const RECIPIENTS = new Set(['to', 'cc', 'bcc']);

const EMAIL_LOCAL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}$/;

/** `isHost` validates the domain part (shared with http links: a DNS name, not an IP literal). */
export function parseMailto(raw: string, isHost: (domain: string) => boolean): ParsedMailto | MailtoProblem {
  if (!/^mailto:/i.test(raw)) return 'malformed';
  const rest = raw.slice('mailto:'.length);
  const q = rest.indexOf('?');
  const decode = (s: string) => decodeURIComponent(s);
  const out: ParsedMailto = { address: [], to: [], cc: [], bcc: [], toHeader: false, headers: [], removed: [] };
  try {
    out.address = splitAddresses(decode(q >= 0 ? rest.slice(0, q) : rest));
    out.to.push(...out.address);
    if (q >= 0) {
      for (const field of rest.slice(q + 1).split('&')) {
        if (field === '') continue;
        const eq = field.indexOf('=');
        if (eq <= 0) return 'malformed';
        const written = decode(field.slice(0, eq));
        const name = written.toLowerCase();
        const value = decode(field.slice(eq + 1));
        if (RECIPIENTS.has(name)) {
          if (name === 'to') out.toHeader = true;
          out[name as 'to' | 'cc' | 'bcc'].push(...splitAddresses(value));
        } else if (KEPT.has(name)) {
          out.headers.push({ name, value });
        } else if (!out.removed.includes(written)) {
          out.removed.push(written);
        }
      }
    }
  } catch {
    return 'malformed'; // a broken percent escape
  }
  const all = [...out.to, ...out.cc, ...out.bcc];
  if (out.to.length === 0 || !all.every((a) => isAddress(a, isHost))) return 'address';
  return out;
}

function splitAddresses(s: string): string[] {
  if (s.trim() === '') return [];
  return s.split(',').map((a) => a.trim());
}

function isAddress(a: string, isHost: (domain: string) => boolean): boolean {
  const at = a.lastIndexOf('@');
  return at > 0 && EMAIL_LOCAL.test(a.slice(0, at)) && isHost(a.slice(at + 1).toLowerCase());
}

const encodeAddress = (a: string) => encodeURIComponent(a).replace(/%40/g, '@');

/** The URL handed to the mail client: the recipients and the kept fields only. */
export function buildMailto(m: ParsedMailto): string {
  const fields = [
    ...(m.cc.length ? [`cc=${m.cc.map(encodeAddress).join(',')}`] : []),
    ...(m.bcc.length ? [`bcc=${m.bcc.map(encodeAddress).join(',')}`] : []),
    ...m.headers.map((h) => `${h.name}=${encodeURIComponent(h.value)}`),
  ];
  return `mailto:${m.to.map(encodeAddress).join(',')}${fields.length ? `?${fields.join('&')}` : ''}`;
}
