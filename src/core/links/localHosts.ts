// Hosts that are this computer or its local network: loopback, private and link-local addresses, `.local` (mDNS),
// `.localhost`, `.internal`, `home.arpa` and single-label names; and public names that resolve to such an address
// because they spell it (wildcard DNS: `127.0.0.1.nip.io`, `10-0-0-1.sslip.io`, `7f000001.nip.io`, `--1.sslip.io`,
// `lvh.me`). A link from an answer to one of them can reach a
// service that trusts its network (this extension's own Triton server listens on 127.0.0.1), so the user always
// sees the port and path first. `host` is WHATWG URL's `hostname` (IPv6 in brackets, canonical).

export type LocalKind = 'loopback' | 'private' | 'link-local' | 'local-name';

export function localHostKind(host: string): LocalKind | undefined {
  if (host.startsWith('[')) return ipv6Kind(host.slice(1, -1));
  const v4 = ipv4Octets(host);
  if (v4) return ipv4Kind(v4);
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  if (!host.includes('.') || /\.(?:local|internal|lan|home\.arpa)$/.test(host)) return 'local-name';
  return spelledAddressKind(host);
}

/** Public names that resolve to 127.0.0.1 for anyone (and every name under them). */
const LOOPBACK_NAMES = ['localtest.me', 'lvh.me', 'vcap.me', 'lacolhost.com'];

/**
 * A name that spells a local address the way wildcard DNS services read it: four numeric labels in a row, a label
 * ending in four dash-separated numbers, an eight-digit hex label, or dashes for the colons of an IPv6 address.
 */
function spelledAddressKind(host: string): LocalKind | undefined {
  if (LOOPBACK_NAMES.some((n) => host === n || host.endsWith(`.${n}`))) return 'loopback';
  const labels = host.split('.');
  const kinds: (LocalKind | undefined)[] = [];
  for (let i = 0; i + 4 <= labels.length; i += 1) {
    const octets = ipv4Octets(labels.slice(i, i + 4).join('.'));
    if (octets && octets.every((o) => o <= 255)) kinds.push(ipv4Kind(octets));
  }
  for (const label of labels) {
    const dashed = /(?:^|-)(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})$/.exec(label);
    if (dashed) {
      const octets = dashed.slice(1, 5).map(Number);
      if (octets.every((o) => o <= 255)) kinds.push(ipv4Kind(octets));
    }
    if (/^[0-9a-f]{8}$/.test(label)) {
      const n = parseInt(label, 16);
      kinds.push(ipv4Kind([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]));
    }
    if (label.includes('--') && /^[0-9a-f-]+$/.test(label)) kinds.push(ipv6Kind(label.replace(/-/g, ':')));
  }
  return kinds.find((k) => k !== undefined);
}

function ipv4Octets(host: string): number[] | undefined {
  const parts = host.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined;
  return parts.map(Number);
}

function ipv4Kind([a, b]: number[]): LocalKind | undefined {
  if (a === 127 || a === 0) return 'loopback';
  if (a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168) || (a === 100 && b! >= 64 && b! <= 127)) return 'private';
  if (a === 169 && b === 254) return 'link-local';
  return undefined;
}

/** Eight 16-bit groups of a canonical IPv6 address (as URL writes it: `::` shorthand, maybe a dotted tail). */
function ipv6Groups(ip: string): number[] | undefined {
  let s = ip;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const o = ipv4Octets(dotted[1]!);
    if (!o) return undefined;
    s = `${s.slice(0, dotted.index)}${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array<string>(8 - h.length - t.length).fill('0');
  const groups = [...h, ...fill, ...t].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

function ipv6Kind(ip: string): LocalKind | undefined {
  const g = ipv6Groups(ip);
  if (!g) return undefined;
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(7) && (g[7] === 1 || g[7] === 0)) return 'loopback';
  if (zeroTo(5) && g[5] === 0xffff) return ipv4Kind([g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff]); // IPv4-mapped
  if ((g[0]! & 0xfe00) === 0xfc00) return 'private'; // unique local fc00::/7
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local';
  return undefined;
}
