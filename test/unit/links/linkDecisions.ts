// The link policy's decisions as one table (URL × label → decision): the unit test checks every row, and
// docs/RELIABILITY.md shows the same table (the test checks that too, so the document cannot drift).

export interface LinkDecisionRow {
  url: string;
  label: string;
  /** `open`, `ask: <concerns>` or `refuse: <reason>`. */
  decision: string;
}

const row = (url: string, label: string, decision: string): LinkDecisionRow => ({ url, label, decision });

export const LINK_DECISIONS: LinkDecisionRow[] = [
  // labels that name the target: its whole host or its registrable domain
  row('https://example.com/docs', 'https://example.com/docs', 'open'),
  row('https://docs.python.org/3/', 'docs.python.org', 'open'),
  row('https://docs.python.org/3/', 'the python.org docs', 'open'),
  row('https://www.example.com/', 'example.com', 'open'),
  row('https://attacker.github.io/', 'attacker.github.io', 'open'),
  row('https://news.bbc.co.uk/', 'bbc.co.uk', 'open'),
  // labels that are only a public suffix name nothing; a label naming a sibling or a child names another host
  row('https://attacker.com/', 'com', 'ask: text-silent'),
  row('https://attacker.github.io/', 'github.io', 'ask: text-silent'),
  row('https://evil.co.uk/', 'co.uk', 'ask: text-silent'),
  row('https://example.com/', 'docs.example.com', 'ask: text-differs'),
  row('https://paypal.com.attacker.example/login', 'https://paypal.com/login', 'ask: text-differs'),
  row('https://example.com/docs', 'the docs', 'ask: text-silent'),
  row('https://github.com/a/b/blob/main/README.md', 'README.md', 'ask: text-silent'),
  // invisible characters are removed from the label before comparing
  row('https://example.com/zws', 'evil\u200B.example.com', 'ask: text-differs'),
  row('https://example.com/zws', 'example\u200B.com', 'open'),
  row('https://example.com/', 'ex\u{E0061}ample.com', 'open'),
  // where the link really goes
  row('https://example.com@attacker.example/', 'https://example.com@attacker.example/', 'ask: user-info, text-differs'),
  row('https://xn--exmple-cua.com/', 'exämple.com', 'ask: idn'),
  // a port other than the default is a different service: the label must write it
  row('https://example.com:8443/', 'example.com', 'ask: port'),
  row('https://example.com:8443/', 'example.com:8443', 'open'),
  row('https://example.com:443/', 'example.com', 'open'),
  // this computer and the local network: always ask, naming port and path
  row('http://localhost:8002/metrics', 'localhost:8002', 'ask: local'),
  row('http://127.0.0.1:8000/v2', 'http://127.0.0.1:8000/v2', 'ask: local'),
  row('http://[::1]:8000/v2/models', '[::1]:8000', 'ask: local'),
  row('http://[::ffff:127.0.0.1]/', 'http://[::ffff:127.0.0.1]/', 'ask: local'),
  row('http://192.168.1.1/admin', '192.168.1.1', 'ask: local'),
  row('http://10.0.0.5:9090/', 'http://10.0.0.5:9090/', 'ask: local'),
  row('http://169.254.169.254/latest/meta-data/', '169.254.169.254', 'ask: local'),
  row('http://printer.local/', 'printer.local', 'ask: local'),
  row('http://router/', 'router', 'ask: local'),
  row('http://[fe80::1]/', '[fe80::1]', 'ask: local'),
  // public names that spell a local address (wildcard DNS) or always resolve to loopback
  row('http://127.0.0.1.nip.io:8000/v2', '127.0.0.1.nip.io:8000', 'ask: local'),
  row('http://app.10.0.0.5.sslip.io/', 'app.10.0.0.5.sslip.io', 'ask: local'),
  row('http://www-192-168-1-1.sslip.io/', 'www-192-168-1-1.sslip.io', 'ask: local'),
  row('http://7f000001.nip.io/', '7f000001.nip.io', 'ask: local'),
  row('http://0--1.sslip.io/', '0--1.sslip.io', 'ask: local'),
  row('http://api.lvh.me:3000/', 'api.lvh.me:3000', 'ask: local'),
  row('https://8.8.8.8.nip.io/', '8.8.8.8.nip.io', 'open'),
  // mail: one plain address the label names, at most a subject, opens; anything more asks
  row('mailto:team@example.com', 'team@example.com', 'open'),
  row('mailto:team@example.com?subject=Hello', 'team@example.com', 'open'),
  row('mailto:team@example.com', 'mail us', 'ask: text-silent'),
  row('mailto:attacker@attacker.example', 'support@example.com', 'ask: text-differs'),
  row('mailto:team@example.com?bcc=attacker@evil.example&body=paste%20your%20token%20here', 'team@example.com', 'ask: mail-recipients, mail-content'),
  row('mailto:team@example.com?attach=/home/user/.ssh/id_rsa', 'team@example.com', 'ask: mail-removed'),
  row('mailto:team@example.com?to=attacker@evil.example&cc=b@example.com', 'team@example.com', 'ask: mail-recipients'),
  row('mailto:support@example.com,attacker@evil.example', 'support@example.com', 'ask: mail-recipients'),
  row('mailto:team@example.com?subject=Hi%0D%0ABcc:%20attacker@evil.example', 'team@example.com', 'ask: mail-content'),
  row('mailto:team@example.com?subject=invoice%E2%80%AEfdp.exe', 'team@example.com', 'ask: mail-invisible'),
  row('mailto:team@example.com?X-Mailer=evil&From=ceo@example.com', 'team@example.com', 'ask: mail-removed'),
  // refused outright
  row('javascript:alert(1)', 'x', 'refuse: scheme'),
  row('mailto:a@127.0.0.1', 'a@127.0.0.1', 'refuse: address'),
  row('mailto:team@example.com?bcc=not-an-address', 'team@example.com', 'refuse: address'),
  row('mailto:team@example.com?subject=%E0%A4%A', 'team@example.com', 'refuse: malformed'),
  row('https://0x7f.1/', 'x', 'refuse: host'),
];

/** A label as the table shows it: invisible characters as <U+XXXX>. */
export function shownLabel(label: string): string {
  return label.replace(/[\u200B\u{E0000}-\u{E007F}]/gu, (ch) => `<U+${ch.codePointAt(0)!.toString(16).toUpperCase()}>`);
}

/** The table as docs/RELIABILITY.md holds it. */
export function decisionTableMarkdown(): string {
  const cell = (s: string) => `\`${s.replace(/\|/g, '\\|')}\``;
  return ['| URL | Label | Decision |', '|---|---|---|', ...LINK_DECISIONS.map((r) => `| ${cell(r.url)} | ${cell(shownLabel(r.label))} | ${r.decision} |`)].join('\n');
}
