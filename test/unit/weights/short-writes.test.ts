import assert from 'node:assert/strict';
import { test } from 'node:test';
import { unwritten } from '../../../src/core/weights/shortWrites';

test('a short vectored write leaves the views after the bytes that went out', () => {
  const views = [Buffer.from('abc'), Buffer.from('defg'), Buffer.from('hi')];
  const text = (vs: Uint8Array[]) => vs.map((v) => Buffer.from(v).toString()).join('|');
  assert.equal(text(unwritten(views, 0)), 'abc|defg|hi');
  assert.equal(text(unwritten(views, 3)), 'defg|hi');
  assert.equal(text(unwritten(views, 5)), 'fg|hi');
  assert.equal(text(unwritten(views, 9)), '');
  assert.equal(text(views), 'abc|defg|hi'); // the caller's list is not changed
});
