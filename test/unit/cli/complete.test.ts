// `triton-chatglm complete FILE:LINE:COL` (src/cli/complete.ts, options.ts, core/completion/cursorSpec.ts): the
// argument, the cursor's offset (1-based, characters, CRLF), refusals before anything is sent, and the completion
// printed from a stub Triton that honours the `infill` contract.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCommand } from '../../../src/cli/commands';
import { parseCli, UsageError } from '../../../src/cli/options';
import { cursorOffset, languageIdForPath, parseCursorSpec } from '../../../src/core/completion/cursorSpec';
import { startStubTriton, type StubTriton } from '../vscode/support/stubTriton';

describe('FILE:LINE:COL', () => {
  it('parses, with colons in the file name; LINE and COL from 1', () => {
    assert.deepEqual(parseCursorSpec('src/a.py:3:5'), { file: 'src/a.py', line: 3, column: 5 });
    assert.deepEqual(parseCursorSpec('C:\\w\\a.py:1:1'), { file: 'C:\\w\\a.py', line: 1, column: 1 });
    for (const bad of ['a.py', 'a.py:3', 'a.py:0:1', 'a.py:1:0', 'a.py:x:1', ':1:1']) assert.equal(parseCursorSpec(bad), undefined, bad);
  });

  it('the offset counts characters (a Chinese character or an emoji is one column); CRLF lines; past the end is an error', () => {
    assert.equal(cursorOffset('ab\ncd', 2, 2), 4);
    assert.equal(cursorOffset('ab\r\ncd\r\n', 1, 3), 2, 'end of a CRLF line, before its \\r');
    assert.equal(cursorOffset('ab\r\ncd\r\n', 2, 1), 4);
    assert.equal(cursorOffset('x = "你好😀"\n', 1, 9), 'x = "你好😀'.length);
    assert.throws(() => cursorOffset('ab\n', 3, 1), /line 3 is past the end of the file \(2 lines\)/);
    assert.throws(() => cursorOffset('ab\n', 1, 4), /column 4 is past the end of line 1 \(2 characters\)/);
    assert.equal(languageIdForPath('/w/m.PY'), 'python');
    assert.equal(languageIdForPath('/w/Makefile'), 'plaintext');
  });

  it('the command line: one FILE:LINE:COL, resolved against the working directory', () => {
    const cfg = parseCli(['complete', 'src/a.py:2:5', '--url', 'http://127.0.0.1:1'], {}, '/w');
    assert.equal(cfg.command, 'complete');
    assert.deepEqual(cfg.cursor, { file: '/w/src/a.py', line: 2, column: 5 });
    assert.throws(() => parseCli(['complete'], {}), (e: unknown) => e instanceof UsageError && /one FILE:LINE:COL/.test(e.message));
    assert.throws(() => parseCli(['complete', 'a.py:1'], {}), /FILE:LINE:COL with LINE and COL from 1/);
    assert.throws(() => parseCli(['complete', 'a.py:1:1', 'b.py:1:1'], {}), /one FILE:LINE:COL/);
  });
});

describe('triton-chatglm complete', () => {
  let stub: StubTriton;
  let dir: string;
  before(async () => {
    stub = await startStubTriton();
    dir = mkdtempSync(join(tmpdir(), 'tcg-cli-complete-'));
  });
  after(async () => {
    await stub.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = async (...argv: string[]) => {
    let out = '';
    let err = '';
    const code = await runCommand(parseCli([...argv, '--url', stub.url], {}, dir), {
      out: (s) => { out += s; }, err: (s) => { err += s; }, signal: new AbortController().signal, packageRoot: join(__dirname, '../../..'), tty: false,
    });
    return { code, out, err };
  };
  const infills = () => stub.requests.filter((r) => typeof r.body.infill === 'string');

  it('prints the completion at the cursor (LINE mode: its first line) and sends the infill request', async () => {
    writeFileSync(join(dir, 'calc.py'), 'def total(xs):\r\n    return \r\n');
    const r = await run('complete', 'calc.py:2:12');
    assert.deepEqual(r, { code: 0, out: 'compute_total()\n', err: '' });
    const infill = JSON.parse(String(infills().at(-1)!.body.infill)) as Record<string, unknown>;
    assert.deepEqual(infill, { prefix: 'def total(xs):\n    return ', suffix: '\n', path: 'calc.py', language: 'Python', mode: 'line', references: [] });
    const json = await run('complete', 'calc.py:2:12', '--json');
    assert.deepEqual(JSON.parse(json.out), { completion: 'compute_total()', mode: 'line' });
  });

  it('refuses before sending anything: a secret file, a missing file, a binary file, a cursor past the end', async () => {
    const sent = infills().length;
    writeFileSync(join(dir, '.env'), 'TOKEN=\n');
    writeFileSync(join(dir, 'blob.bin'), Buffer.from([1, 0, 2]));
    writeFileSync(join(dir, 'short.py'), 'x\n');
    await assert.rejects(run('complete', '.env:1:7'), /never sent/);
    await assert.rejects(run('complete', 'nope.py:1:1'), /Cannot read .*nope\.py: ENOENT/);
    await assert.rejects(run('complete', 'blob.bin:1:1'), /not a text file/);
    await assert.rejects(run('complete', 'short.py:1:9'), /short\.py:1:9: column 9 is past the end of line 1/);
    assert.equal(infills().length, sent);
  });
});
