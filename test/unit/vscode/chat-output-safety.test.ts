// The host side of links and code from the chat panel: openChatLink (policy verdict → warning, modal naming the
// real host, openExternal) and the invisible-character warning before Copy / Insert.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { installVscodeModule } from './support/fakeVscode';

interface Shown { text: string; options: unknown; items: string[] }
const shown: Shown[] = [];
const opened: string[] = [];
let answer: string | undefined;

const fake = {
  l10n: { t: (m: string, ...args: unknown[]) => m.replace(/\{(\d+)\}/g, (s, i: string) => (Number(i) < args.length ? String(args[Number(i)]) : s)) },
  window: {
    async showWarningMessage(text: string, ...rest: unknown[]) {
      const options = typeof rest[0] === 'object' && rest[0] !== null ? rest.shift() : undefined;
      const items = rest as string[];
      shown.push({ text, options, items });
      return items.find((i) => i === answer);
    },
  },
  env: { async openExternal(uri: { toString(): string }) { opened.push(uri.toString()); return true; } },
  Uri: { parse: (value: string, strict?: boolean) => { if (strict && !/^[a-z][a-z0-9+.-]*:/i.test(value)) throw new Error('no scheme'); return { toString: () => value }; } },
};

let uninstall: () => void;
let openChatLink: (url: string, text: string) => Promise<void>;
let confirmInvisibleCharacters: (code: string, transfer: 'copy' | 'insert') => Promise<boolean>;
before(() => {
  uninstall = installVscodeModule(fake);
  // Loaded after the stand-in is installed (they import `vscode`).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  ({ openChatLink } = require('../../../src/vscode/chat/linkOpener') as typeof import('../../../src/vscode/chat/linkOpener'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  ({ confirmInvisibleCharacters } = require('../../../src/vscode/chat/invisibleCodeWarning') as typeof import('../../../src/vscode/chat/invisibleCodeWarning'));
});
after(() => uninstall());
beforeEach(() => { shown.length = 0; opened.length = 0; answer = undefined; });

describe('openChatLink', () => {
  it('opens a link that says where it goes, without asking', async () => {
    await openChatLink('https://example.com/docs', 'https://example.com/docs');
    assert.deepEqual(opened, ['https://example.com/docs']);
    assert.deepEqual(shown, []);
  });

  it('refuses what the policy rejects, saying why, and opens nothing', async () => {
    for (const url of ['javascript:alert(1)', 'https:javascript:alert(1)', 'https:%5Cattacker.example', 'mailto:javascript:alert(1)', 'java\tscript:x']) {
      await openChatLink(url, 'x');
    }
    assert.deepEqual(opened, []);
    assert.equal(shown.length, 5);
    for (const s of shown) {
      assert.match(s.text, /^The link was not opened\. /);
      assert.equal(s.options, undefined, 'not modal');
    }
  });

  it('asks in a modal naming the real host when user info hides it; opens only on "Open Link"', async () => {
    await openChatLink('https://example.com@attacker.example/', 'https://example.com@attacker.example/');
    assert.deepEqual(opened, [], 'cancelled (no answer)');
    const [s] = shown;
    assert.equal(s!.text, 'Open a link to attacker.example?');
    assert.deepEqual(s!.items, ['Open Link']);
    const o = s!.options as { modal: boolean; detail: string };
    assert.equal(o.modal, true);
    assert.match(o.detail, /starts with "example\.com@", which is not where it goes: it opens attacker\.example/);
    assert.match(o.detail, /Full address: https:\/\/example\.com@attacker\.example\//);
    answer = 'Open Link';
    await openChatLink('https://example.com@attacker.example/', 'https://example.com@attacker.example/');
    assert.deepEqual(opened, ['https://example.com@attacker.example/']);
  });

  it('shows the real host when the link text names another one or none', async () => {
    await openChatLink('https://paypal.com.attacker.example/login', 'paypal.com');
    await openChatLink('https://docs.python.org/3/', 'the docs');
    assert.deepEqual(shown.map((s) => s.text), ['Open a link to paypal.com.attacker.example?', 'Open a link to docs.python.org?']);
    assert.match((shown[0]!.options as { detail: string }).detail, /names a different address/);
    assert.match((shown[1]!.options as { detail: string }).detail, /does not say where the link goes/);
    assert.deepEqual(opened, []);
  });
});

describe('openChatLink: mail and local links', () => {
  it('asks before a mailto with a bcc and a body, listing every recipient and field, and opens it without attach=', async () => {
    const url = 'mailto:team@example.com?bcc=attacker@evil.example&body=paste%20your%20token%20here&attach=/home/user/.ssh/id_rsa';
    await openChatLink(url, 'team@example.com');
    assert.deepEqual(opened, [], 'nothing opens before the user says so');
    const [s] = shown;
    assert.equal(s!.text, 'Write an e-mail to team@example.com, attacker@evil.example?');
    assert.deepEqual(s!.items, ['Open E-mail']);
    const o = s!.options as { modal: boolean; detail: string };
    assert.equal(o.modal, true);
    for (const line of ['To: team@example.com', 'Bcc: attacker@evil.example', 'Body: paste your token here', 'Removed before opening (not standard e-mail fields, such as attachments): attach']) {
      assert.ok(o.detail.split('\n').includes(line), `${line} in ${o.detail}`);
    }
    answer = 'Open E-mail';
    await openChatLink(url, 'team@example.com');
    assert.deepEqual(opened, ['mailto:team@example.com?bcc=attacker@evil.example&body=paste%20your%20token%20here']);
  });

  it('opens a plain address with a subject without asking', async () => {
    await openChatLink('mailto:team@example.com?subject=Bug%20report', 'team@example.com');
    assert.deepEqual([shown.length, opened], [0, ['mailto:team@example.com?subject=Bug%20report']]);
  });

  it('asks before a subject with a bidi override, showing it marked; before another port; before a name that spells 127.0.0.1', async () => {
    await openChatLink('mailto:team@example.com?subject=invoice%E2%80%AEfdp.exe', 'team@example.com');
    await openChatLink('https://example.com:8443/', 'example.com');
    await openChatLink('http://127.0.0.1.nip.io:8000/v2', '127.0.0.1.nip.io:8000');
    assert.deepEqual(opened, []);
    const details = shown.map((s) => (s.options as { detail: string }).detail.split('\n'));
    assert.ok(details[0]!.includes('Subject: invoice<U+202E>fdp.exe'), details[0]!.join('\n'));
    assert.ok(details[0]!.includes('The e-mail\'s fields contain invisible or bidirectional control characters (shown below as <U+…>).'));
    assert.ok(details[1]!.includes('The link opens port 8443 of example.com, which its text does not name.'), details[1]!.join('\n'));
    assert.match(details[2]![0]!, /^127\.0\.0\.1\.nip\.io is on this computer or your local network .*: port 8000, path \/v2\.$/);
  });

  it('asks before a local address even when the label names it, naming port and path', async () => {
    await openChatLink('http://localhost:8002/metrics', 'localhost:8002');
    assert.equal(shown[0]!.text, 'Open a link to localhost?');
    assert.match((shown[0]!.options as { detail: string }).detail, /localhost is on this computer or your local network .*: port 8002, path \/metrics\./);
    assert.deepEqual(opened, []);
  });
});

describe('confirmInvisibleCharacters', () => {
  it('passes plain code on without asking', async () => {
    assert.equal(await confirmInvisibleCharacters('print("hi")\n\tx = 1\r\n', 'copy'), true);
    assert.deepEqual(shown, []);
  });

  it('names the characters in a modal; goes on only when the user chooses to', async () => {
    const code = 'if (accessLevel != "user\u202E \u2066// Check if admin\u2069 \u2066") {';
    assert.equal(await confirmInvisibleCharacters(code, 'copy'), false);
    assert.equal(shown[0]!.text, 'This code contains invisible or bidirectional control characters: U+202E RIGHT-TO-LEFT OVERRIDE, U+2066 LEFT-TO-RIGHT ISOLATE ×2, U+2069 POP DIRECTIONAL ISOLATE');
    assert.deepEqual(shown[0]!.items, ['Copy Anyway']);
    assert.equal((shown[0]!.options as { modal: boolean }).modal, true);
    answer = 'Insert Anyway';
    assert.equal(await confirmInvisibleCharacters(code, 'insert'), true);
    assert.deepEqual(shown[1]!.items, ['Insert Anyway']);
  });
});
