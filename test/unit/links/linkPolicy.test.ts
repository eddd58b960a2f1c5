// The host's link policy: what a link from model output may open, and when the user must first see the real host.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decisionTableMarkdown, LINK_DECISIONS } from './linkDecisions';
import { evaluateLink, isWellFormedHost, MAX_LINK_LENGTH, mentionedHosts } from '../../../src/core/links/linkPolicy';

const reason = (url: string) => {
  const v = evaluateLink(url, url);
  return v.action === 'reject' ? v.reason : v.action;
};

describe('link policy: what is refused', () => {
  it('refuses every scheme but http, https and mailto', () => {
    for (const url of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'vbscript:msgbox(1)', 'data:text/html,<script>x</script>', 'file:///etc/passwd',
      'command:workbench.action.terminal.new', 'vscode://ms-python.python/x', 'vscode-webview://abc/index.html', 'ftp://example.com/',
      '//attacker.example/protocol-relative', '/relative/path', '#fragment', 'about:blank', 'blob:https://example.com/uuid']) {
      assert.equal(evaluateLink(url, 'x').action, 'reject', url);
    }
  });

  it('refuses scheme tricks that URL parsers repair: tabs, newlines, controls, look-alikes, entities left as text', () => {
    const tricks = ['java\tscript:alert(1)', 'java\nscript:alert(1)', 'https\t://example.com', 'ht\ntps://example.com/', '\u0001https://example.com/',
      ' https://example.com/', 'https://example.com/ ', 'ｈttps://example.com/', 'һttps://example.com/', 'https\u200b://example.com/',
      'https://exаmple.com/', 'jav&#x61;script:alert(1)', '&#106;avascript:alert(1)', 'javascript&colon;alert(1)', 'https:\\\\attacker.example',
      'https://example.com\\@attacker.example/'];
    for (const url of tricks) assert.equal(evaluateLink(url, url).action, 'reject', JSON.stringify(url));
  });

  it('refuses http(s) without a spelled-out, well-formed host', () => {
    assert.equal(reason('https:javascript:alert(1)'), 'malformed');
    assert.equal(reason('https:%5Cattacker.example'), 'malformed');
    assert.equal(reason('https:/attacker.example/'), 'malformed');
    assert.equal(reason('https:attacker.example'), 'malformed');
    assert.equal(reason('https://'), 'malformed');
    assert.equal(reason('https://%61ttacker.example/'), 'host', 'percent-encoded host');
    assert.equal(reason('https://example.com%2F@attacker.example/'), 'host');
    assert.equal(reason('https://0x7f.1/'), 'host', 'numeric shorthand of 127.0.0.1');
    assert.equal(reason('https://2130706433/'), 'host');
    assert.equal(reason('https://exa$mple.com/'), 'host', 'WHATWG accepts $ in hosts; DNS does not');
    assert.equal(reason('https://example.com./'), 'host');
    assert.equal(reason('https://-example.com/'), 'host');
    assert.equal(reason(`https://example.com/${'a'.repeat(MAX_LINK_LENGTH)}`), 'too-long');
  });

  it('refuses mailto without a well-formed address', () => {
    for (const url of ['mailto:javascript:alert(1)', 'mailto:', 'mailto:?subject=x', 'mailto:no-at-sign', 'mailto:a@', 'mailto:@example.com',
      'mailto:a@b@example.com', 'mailto:a%0A@example.com', 'mailto:a@127.0.0.1', 'mailto:a@exa_mple.com', 'mailto:a@example.com,javascript:x']) {
      assert.equal(evaluateLink(url, url).action, 'reject', url);
    }
  });
});

describe('link policy: what opens, and when the real host is shown first', () => {
  it('opens a link whose text is its own URL or names its host (or a parent domain of it)', () => {
    assert.deepEqual(evaluateLink('https://example.com/docs', 'https://example.com/docs'), { action: 'open', url: 'https://example.com/docs', target: 'example.com' });
    assert.equal(evaluateLink('https://docs.python.org/3/', 'docs.python.org').action, 'open');
    assert.equal(evaluateLink('https://docs.python.org/3/', 'the python.org docs').action, 'open');
    assert.equal(evaluateLink('https://www.example.com/', 'example.com').action, 'open');
    assert.equal(evaluateLink('HTTPS://EXAMPLE.COM/A', 'example.com').action, 'open');
    assert.equal(evaluateLink('https://attacker.github.io/', 'attacker.github.io').action, 'open');
    assert.deepEqual(evaluateLink('mailto:a@example.com', 'a@example.com'), { action: 'open', url: 'mailto:a@example.com', target: 'a@example.com' });
  });

  it('asks first, naming the real host, for user info before @', () => {
    const v = evaluateLink('https://example.com@attacker.example/', 'https://example.com@attacker.example/');
    assert.equal(v.action, 'confirm');
    assert.ok(v.action === 'confirm' && v.target === 'attacker.example' && v.userInfo === 'example.com' && v.concerns.includes('user-info'));
    const p = evaluateLink('https://user:pass@example.com/', 'example.com');
    assert.ok(p.action === 'confirm' && p.concerns.includes('user-info') && p.userInfo === 'user:pass' && p.target === 'example.com');
  });

  it('asks first when the text names another host, or none', () => {
    const differs = evaluateLink('https://paypal.com.attacker.example/login', 'https://paypal.com/login');
    assert.ok(differs.action === 'confirm' && differs.concerns.includes('text-differs') && differs.target === 'paypal.com.attacker.example');
    const lookalike = evaluateLink('https://example.com/', 'exаmple.com'); // Cyrillic а in the text
    assert.ok(lookalike.action === 'confirm' && lookalike.concerns.includes('text-differs'));
    const silent = evaluateLink('https://example.com/docs', 'the docs');
    assert.ok(silent.action === 'confirm' && silent.concerns.includes('text-silent'));
    assert.ok((() => { const v = evaluateLink('https://github.com/a/b/blob/main/README.md', 'README.md'); return v.action === 'confirm' && v.concerns.includes('text-silent'); })(),
      'a file name is not a host');
    const mail = evaluateLink('mailto:attacker@attacker.example', 'support@example.com');
    assert.ok(mail.action === 'confirm' && mail.concerns.includes('text-differs'));
  });

  it('asks first for internationalized (punycode) hosts, showing the punycode', () => {
    const v = evaluateLink('https://xn--exmple-cua.com/', 'exämple.com');
    assert.ok(v.action === 'confirm' && v.concerns.includes('idn') && v.target === 'xn--exmple-cua.com');
  });

  it('answers for any input without throwing, and only ever opens http(s)/mailto URLs it could parse', () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.webUrl(), fc.constantFrom('https://', 'mailto:', 'http://[::1]/', 'https://a.b@c.d/')), fc.string(), (url, text) => {
      const v = evaluateLink(url, text);
      if (v.action === 'reject') return;
      assert.match(v.url, /^(https?:\/\/|mailto:)/);
      assert.doesNotThrow(() => new URL(v.url));
    }), { numRuns: 3000 });
  });
});

describe('isWellFormedHost and mentionedHosts', () => {
  it('accepts DNS names, IPv4 and bracketed IPv6; nothing else', () => {
    for (const h of ['example.com', 'a-b.example', 'xn--exmple-cua.com', 'localhost', '10.0.0.1', '[::1]']) assert.ok(isWellFormedHost(h), h);
    for (const h of ['', 'exa$mple.com', '-a.com', 'a..b', 'a.123', `${'a'.repeat(64)}.com`, 'ex ample.com']) assert.ok(!isWellFormedHost(h), h);
  });

  it('reads hosts from link text: URLs, www names, common TLDs; not file names', () => {
    assert.deepEqual(mentionedHosts('see https://Example.com/a and www.python.org'), ['example.com', 'python.org']);
    assert.deepEqual(mentionedHosts('README.md and main.py'), []);
    assert.deepEqual(mentionedHosts('localhost:3000'), ['localhost']);
  });
});

describe('link policy: the decision table (docs/RELIABILITY.md)', () => {
  const decisionOf = (url: string, label: string) => {
    const v = evaluateLink(url, label);
    return v.action === 'open' ? 'open' : v.action === 'reject' ? `refuse: ${v.reason}` : `ask: ${v.concerns.join(', ')}`;
  };

  it('decides every row of the table', () => {
    const wrong = LINK_DECISIONS.filter((r) => decisionOf(r.url, r.label) !== r.decision).map((r) => `${r.url} × ${JSON.stringify(r.label)}: ${decisionOf(r.url, r.label)}, not ${r.decision}`);
    assert.deepEqual(wrong, []);
  });

  it('is the table docs/RELIABILITY.md shows', () => {
    const doc = readFileSync(join(__dirname, '../../../docs/RELIABILITY.md'), 'utf8');
    assert.ok(doc.includes(decisionTableMarkdown()), 'regenerate with: node --import tsx -e "import(\'./test/unit/links/linkDecisions.ts\').then((m) => console.log(m.decisionTableMarkdown()))"');
  });

  it('names every recipient and header of a mail link, opens only what it kept, and says what it removed', () => {
    const v = evaluateLink('mailto:team@example.com,b@example.com?cc=c@example.com&bcc=attacker@evil.example&body=paste%20your%20token&attach=/home/user/.ssh/id_rsa&Attachment=x&subject=Hi', 'team@example.com');
    assert.ok(v.action === 'confirm' && v.mail);
    assert.deepEqual([v.mail.to, v.mail.cc, v.mail.bcc], [['team@example.com', 'b@example.com'], ['c@example.com'], ['attacker@evil.example']]);
    assert.deepEqual(v.mail.headers, [{ name: 'body', value: 'paste your token' }, { name: 'subject', value: 'Hi' }]);
    assert.deepEqual(v.mail.removed, ['attach', 'Attachment']);
    assert.equal(v.url, 'mailto:team@example.com,b@example.com?cc=c@example.com&bcc=attacker@evil.example&body=paste%20your%20token&subject=Hi');
    assert.equal(v.target, 'team@example.com, b@example.com, c@example.com, attacker@evil.example');
    assert.ok(!/attach/i.test(v.url));
    const open = evaluateLink('mailto:Team@Example.com?subject=Bug%20report', 'team@example.com');
    assert.deepEqual(open, { action: 'open', url: 'mailto:Team@Example.com?subject=Bug%20report', target: 'Team@Example.com' });
  });

  it('names the port and path of a local target', () => {
    const v = evaluateLink('http://localhost:8002/metrics?x=1', 'localhost:8002');
    assert.ok(v.action === 'confirm');
    assert.deepEqual(v.local, { kind: 'loopback', host: 'localhost', port: '8002', path: '/metrics?x=1' });
    const d = evaluateLink('https://[::1]/v2', '[::1]');
    assert.ok(d.action === 'confirm' && d.local?.port === '443' && d.local.host === '[::1]');
    assert.equal(evaluateLink('https://example.com/', 'example.com').action, 'open', 'a public host is not local');
  });
});
