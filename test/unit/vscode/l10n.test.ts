import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_STRINGS } from '../../../src/protocol/strings';

const root = join(__dirname, '../../..');
const json = (p: string) => JSON.parse(readFileSync(join(root, p), 'utf8')) as Record<string, string>;
const en = json('l10n/bundle.l10n.json');
const zh = json('l10n/bundle.l10n.zh-cn.json');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : n.endsWith('.ts') ? [p] : [];
  });
}

/** First arguments of vscode.l10n.t('...') calls (single-quoted literals, as this code base writes them). */
function l10nLiterals(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/l10n\.t\(\s*'((?:[^'\\]|\\.)*)'/g)) out.push(m[1]!.replace(/\\(.)/g, '$1'));
  return out;
}

const placeholders = (s: string) => [...s.matchAll(/\{(\d+)\}/g)].map((m) => m[1]).sort().join(',');

test('every l10n.t string of the extension host is in both bundles', () => {
  const literals = tsFiles(join(root, 'src/vscode')).flatMap((f) => l10nLiterals(readFileSync(f, 'utf8')));
  assert.ok(literals.length > 100, `found ${literals.length} strings`);
  const missing = literals.filter((s) => !(s in en) || !(s in zh));
  assert.deepEqual(missing, []);
});

test('every string of the chat webview is in both bundles (the host translates them for it)', () => {
  const missing = Object.values(DEFAULT_STRINGS).filter((s) => !(s in en) || !(s in zh));
  assert.deepEqual(missing, []);
});

test('the Chinese bundle translates every English string and keeps its placeholders', () => {
  assert.deepEqual(Object.keys(zh).sort(), Object.keys(en).sort());
  for (const [key, value] of Object.entries(zh)) {
    assert.ok(value.trim().length > 0, key);
    assert.equal(placeholders(value), placeholders(key), `placeholders of "${key}"`);
  }
  const untranslated = Object.entries(zh).filter(([k, v]) => k === v && /[a-z]{3,}/.test(k) && !/^ChatGLM3?$/.test(k));
  assert.deepEqual(untranslated, []);
});

test('package.json %keys% resolve in package.nls.json and package.nls.zh-cn.json', () => {
  const pkg = readFileSync(join(root, 'package.json'), 'utf8');
  const keys = [...pkg.matchAll(/"%([A-Za-z0-9_.-]+)%"/g)].map((m) => m[1]!);
  assert.ok(keys.length > 40);
  const nlsEn = json('package.nls.json');
  const nlsZh = json('package.nls.zh-cn.json');
  assert.deepEqual(keys.filter((k) => !(k in nlsEn)), []);
  assert.deepEqual(keys.filter((k) => !(k in nlsZh)), []);
  assert.deepEqual(Object.keys(nlsZh).sort(), Object.keys(nlsEn).sort());
  for (const k of Object.keys(nlsEn).filter((x) => x.startsWith('command.') && x !== 'command.category')) {
    assert.notEqual(nlsZh[k], nlsEn[k], `${k} is translated`);
  }
});
