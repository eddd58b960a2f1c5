// Whether a link's visible text (its label) names where the link goes. A label names an http(s) target only when a
// host it mentions is the target's whole host or the target's registrable domain (public-suffix aware, tldts with
// the private section: `attacker.github.io` is its own registrable domain); a mention that is only a public suffix
// (`com`, `github.io`, `co.uk`) names nothing. Invisible characters are removed first, so `evil<ZWSP>.example.com`
// reads as the evil.example.com it shows.
import { getDomain, parse } from 'tldts';
import { removeInvisibleCharacters } from '../text/invisibleCharacters';

export type LabelJudgement = 'names' | 'differs' | 'silent';

const stripWww = (h: string) => (h.startsWith('www.') ? h.slice(4) : h);

/**
 * Top-level domains that make a bare `name.tld` in link text read as a host. File names (`main.py`,
 * `README.md`) must not, so only common TLDs count; URLs with a scheme and `www.` names always do.
 */
const COMMON_TLDS = new Set([
  'com', 'net', 'org', 'edu', 'gov', 'mil', 'int', 'io', 'dev', 'app', 'ai', 'co', 'me', 'info', 'biz', 'xyz', 'site',
  'online', 'tech', 'cloud', 'page', 'example', 'test', 'invalid', 'localhost', 'local', 'cn', 'uk', 'de', 'jp', 'fr', 'ru',
  'in', 'br', 'au', 'ca', 'us', 'eu', 'nl', 'se', 'ch', 'es', 'it', 'kr', 'tw', 'hk', 'sg', 'ly', 'gg', 'to',
]);

/** Hosts the link text names: URLs with a scheme, `www.` names, bare names under a common TLD, a lone host. */
export function mentionedHosts(label: string): string[] {
  const text = removeInvisibleCharacters(label);
  const out: string[] = [];
  // The whole text is one host without a dot or an IP address (`localhost:3000`, `[::1]:8000`, `10.0.0.1`, `com`)?
  const whole = /^(?:[a-z][a-z0-9+.-]*:\/\/)?([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?(?:[/?#]\S*)?$/i.exec(text.trim());
  if (whole && (!whole[1]!.includes('.') || /^\[|^[\d.]+$/.test(whole[1]!))) {
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

/** The registrable domain of `host` (the public suffix plus one label), or undefined for IPs and bare suffixes. */
export function registrableDomain(host: string): string | undefined {
  if (host.startsWith('[') || /^[\d.]+$/.test(host)) return undefined;
  return getDomain(host, { allowPrivateDomains: true }) ?? undefined;
}

/** A mention that is a public suffix and nothing more (`com`, `co.uk`, `github.io`) names no host. */
function isOnlySuffix(mention: string): boolean {
  if (mention.startsWith('[') || /^[\d.]+$/.test(mention)) return false;
  const p = parse(mention, { allowPrivateDomains: true });
  return p.domain === null && p.publicSuffix === mention && (p.isIcann === true || p.isPrivate === true);
}

export function labelNamesHost(label: string, host: string): LabelJudgement {
  const target = stripWww(host);
  const domain = registrableDomain(target);
  const mentions = mentionedHosts(label).filter((m) => !isOnlySuffix(m));
  if (mentions.length === 0) return 'silent';
  return mentions.every((m) => m === target || (domain !== undefined && m === domain)) ? 'names' : 'differs';
}

/** E-mail addresses a label names (lower case, invisible characters removed). */
export function mentionedAddresses(label: string): string[] {
  return [...removeInvisibleCharacters(label).matchAll(/[^\s@<>()[\]"',;:]+@[^\s@<>()[\]"',;:]+/g)].map((m) => m[0].toLowerCase().replace(/\.$/, ''));
}

/** `names` when every address the label mentions is a recipient (and it mentions one). */
export function labelNamesAddresses(label: string, recipients: readonly string[]): LabelJudgement {
  const lower = recipients.map((a) => a.toLowerCase());
  const mentioned = mentionedAddresses(label);
  if (mentioned.length === 0) return 'silent';
  return mentioned.every((m) => lower.includes(m)) ? 'names' : 'differs';
}

/** Whether the label writes the port (`example.com:8443`, `port 8443` does not count: only `:8443`). */
export function labelNamesPort(label: string, port: string): boolean {
  return new RegExp(`:${port}(?!\\d)`).test(removeInvisibleCharacters(label));
}
