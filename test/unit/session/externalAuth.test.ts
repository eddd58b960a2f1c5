// The team key and pinned CA of an external server (src/core/session/externalAuth.ts, the CLI's env and flag).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { externalHeaders, readCaFile } from '../../../src/core/session/externalAuth';
import { sessionSettingsFromCli } from '../../../src/cli/cliSession';
import { parseCli } from '../../../src/cli/options';

test('the team key goes as Authorization: Bearer over the configured headers (it replaces one set there)', () => {
  assert.deepEqual(externalHeaders({ url: 'https://x', headers: { 'X-A': '1' } }), { 'X-A': '1' });
  assert.deepEqual(externalHeaders({ url: 'https://x', headers: { 'X-A': '1', Authorization: 'old' }, apiKey: 'tcg_k' }), { 'X-A': '1', authorization: 'Bearer tcg_k' });
});

test('a CA file that is missing or not a certificate fails naming the file and the setting', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ca-'));
  writeFileSync(join(dir, 'bad.pem'), 'not a certificate');
  assert.throws(() => readCaFile(join(dir, 'missing.pem')), /missing\.pem \(tritonChatglm\.externalCaFile\)/);
  assert.throws(() => readCaFile(join(dir, 'bad.pem')), /bad\.pem.*not a readable PEM certificate/);
});

test('CLI: TRITON_CHATGLM_KEY and --ca-file reach the external server settings; the key has no flag', () => {
  const cfg = parseCli(['chat', 'hi', '--url', 'https://team:8443', '--ca-file', '/etc/team/cert.pem'], { TRITON_CHATGLM_KEY: 'tcg_abc' }, '/');
  const s = sessionSettingsFromCli(cfg, { out: () => undefined, err: () => undefined, signal: new AbortController().signal, packageRoot: '/pkg' });
  assert.equal(s.mode, 'external');
  assert.equal(s.external.apiKey, 'tcg_abc');
  assert.equal(s.external.caFile, '/etc/team/cert.pem');
  assert.equal(parseCli(['chat', 'x'], { TRITON_CHATGLM_CA_FILE: '/ca.pem' }, '/').caFile, '/ca.pem');
  assert.throws(() => parseCli(['chat', 'x', '--key', 'k'], {}, '/'));
});
