import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodeBytesTensor, decodeTensor, encodeBytesTensor, encodeFp32Tensor, encodeInt32Tensor, encodeInt64Tensor, encodeTensor,
} from '../../../src/core/triton/binaryTensor';

test('BYTES: "233" → 03 00 00 00 32 33 33 (reference vector)', () => {
  assert.equal(encodeBytesTensor(['233']).toString('hex'), '03000000323333');
});

test('BYTES: several elements, empty string and UTF-8 lengths in bytes', () => {
  const buf = encodeBytesTensor(['', '你好', 'a']);
  assert.equal(buf.toString('hex'), '00000000' + '06000000' + Buffer.from('你好').toString('hex') + '01000000' + '61');
  assert.deepEqual(decodeBytesTensor(buf), ['', '你好', 'a']);
});

test('BYTES: long element uses a little-endian 32-bit length', () => {
  const s = 'x'.repeat(300);
  const buf = encodeBytesTensor([s]);
  assert.equal(buf.subarray(0, 4).toString('hex'), '2c010000');
  assert.equal(decodeBytesTensor(buf)[0], s);
});

test('BYTES: truncated data is an error, not a silent short read', () => {
  assert.throws(() => decodeBytesTensor(Buffer.from('0500000061', 'hex')), /truncated/);
  assert.throws(() => decodeBytesTensor(Buffer.from('0500', 'hex')), /truncated/);
});

test('INT32 / FP32 vectors', () => {
  assert.equal(encodeInt32Tensor([8]).toString('hex'), '08000000');
  assert.equal(encodeInt32Tensor([-1, 256]).toString('hex'), 'ffffffff00010000');
  assert.equal(encodeFp32Tensor([1]).toString('hex'), '0000803f');
  assert.throws(() => encodeInt32Tensor([1.5]), /INT32/);
  assert.throws(() => encodeInt32Tensor([2 ** 31]), /INT32/);
});

test('INT64 vectors (the integer inputs of the model): little-endian, a value past 32 bits kept, no inexact number', () => {
  assert.equal(encodeInt64Tensor([8]).toString('hex'), '0800000000000000');
  assert.equal(encodeInt64Tensor([2 ** 32 + 7, -1]).toString('hex'), '0700000001000000' + 'ffffffffffffffff');
  assert.throws(() => encodeInt64Tensor([2 ** 53]), /INT64/);
  assert.throws(() => encodeInt64Tensor([0.5]), /INT64/);
});

test('encodeTensor/decodeTensor round trip for fixed-size types', () => {
  assert.deepEqual(decodeTensor('INT32', encodeTensor('INT32', [1, -2, 3])), [1, -2, 3]);
  assert.deepEqual(decodeTensor('BOOL', encodeTensor('BOOL', [true, false])), [true, false]);
  assert.deepEqual(decodeTensor('INT64', encodeTensor('INT64', [5n, -6n])), [5n, -6n]);
  assert.deepEqual(decodeTensor('FP64', encodeTensor('FP64', [0.1])), [0.1]);
  assert.equal((decodeTensor('FP32', encodeTensor('FP32', [0.5]))[0]), 0.5);
  assert.throws(() => decodeTensor('INT32', Buffer.alloc(3)), /multiple of 4/);
  assert.throws(() => encodeTensor('FP16', [1]), /not supported/);
});
