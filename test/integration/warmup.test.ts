import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { encodeBytesTensor, encodeInt32Tensor, encodeInt64Tensor, readWarmupRequest, warmupFiles, writeWarmupFiles } from '../../src/core/repository/warmup';

const root = join(__dirname, '../..');
const requestPath = join(root, 'triton/warmup_requests.json');
const committedDir = join(root, 'triton/model_repository/chatglm3-6b/warmup');
const generator = join(root, 'triton/scripts/gen_warmup.py');
const python = join(root, '.venv/bin/python');

test('encoders re-exported for the repository: known vectors', () => {
  assert.equal(encodeBytesTensor(['233']).toString('hex'), '03000000323333');
  assert.equal(encodeInt32Tensor([8]).toString('hex'), '08000000');
  assert.equal(encodeInt64Tensor([8]).toString('hex'), '0800000000000000');
});

test('warmup files: prompt and history as BYTES (history = compact JSON), max_new_tokens as INT64', async () => {
  const req = await readWarmupRequest(requestPath);
  const files = warmupFiles(req);
  assert.deepEqual([...files.keys()].sort(), ['history.bin', 'max_new_tokens.bin', 'prompt.bin']);
  assert.deepEqual(files.get('prompt.bin'), encodeBytesTensor([req.prompt as string]));
  assert.deepEqual(files.get('history.bin'), encodeBytesTensor([JSON.stringify(req.history)]));
  assert.deepEqual(files.get('max_new_tokens.bin'), encodeInt64Tensor([req.max_new_tokens as number]));
  assert.throws(() => warmupFiles({ prompt: 'x', bogus: 1 }), /unknown warmup inputs: bogus/);
  assert.throws(() => warmupFiles({ max_new_tokens: 'many' }), /integer/);
});

test('TS output is byte-identical to the committed warmup files', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'warmup-ts-'));
  try {
    const names = await writeWarmupFiles(dir, await readWarmupRequest(requestPath));
    assert.deepEqual(names, readdirSync(committedDir).filter((n) => n.endsWith('.bin')).sort());
    for (const n of names) assert.deepEqual(readFileSync(join(dir, n)), readFileSync(join(committedDir, n)), n);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('TS output is byte-identical to triton/scripts/gen_warmup.py (also with non-ASCII and escapes)', async (t) => {
  assert.ok(existsSync(generator), 'triton/scripts/gen_warmup.py is missing');
  assert.ok(existsSync(python), '.venv is missing: run scripts/setup-python.sh');
  const dir = mkdtempSync(join(tmpdir(), 'warmup-cmp-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const tricky = {
    prompt: 'Tab\tquote" backslash\\ 中文 🙂',
    history: [{ role: 'system', content: 'line1\nline2 \u0001 </script> \u2028' }, { role: 'user', content: '你好' }],
    max_new_tokens: 3, temperature: 0.7, top_p: 0.9, history_len: 0,
  };
  const cases: [string, Record<string, unknown>][] = [['default', await readWarmupRequest(requestPath)], ['tricky', tricky]];
  for (const [name, req] of cases) {
    const src = join(dir, `${name}.json`);
    writeFileSync(src, JSON.stringify(req));
    const pyOut = join(dir, `${name}-py`);
    const tsOut = join(dir, `${name}-ts`);
    const r = spawnSync(python, [generator, '--source', src, '--out', pyOut], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    await writeWarmupFiles(tsOut, req);
    const pyNames = readdirSync(pyOut).sort();
    assert.deepEqual(readdirSync(tsOut).sort(), pyNames, name);
    for (const n of pyNames) assert.deepEqual(readFileSync(join(tsOut, n)), readFileSync(join(pyOut, n)), `${name}/${n}`);
  }
});
