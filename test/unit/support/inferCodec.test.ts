import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeBytesTensor, encodeInt32Tensor } from '../../../src/core/triton/binaryTensor';
import { decodeInferResponse, encodeInferRequest } from '../../support/inferCodec';

test('JSON request: inputs with data, requested outputs, parameters', () => {
  const { body, headers } = encodeInferRequest({
    id: 'r1', inputs: [{ name: 'prompt', datatype: 'BYTES', shape: [1, 1], data: ['你好'] }],
    outputs: [{ name: 'response' }], parameters: { priority: 1 },
  });
  assert.equal(headers['content-type'], 'application/json');
  assert.equal(headers['inference-header-content-length'], undefined);
  assert.deepEqual(JSON.parse(body.toString()), {
    id: 'r1', parameters: { priority: 1 },
    inputs: [{ name: 'prompt', shape: [1, 1], datatype: 'BYTES', data: ['你好'] }],
    outputs: [{ name: 'response', parameters: { binary_data: false } }],
  });
});

test('binary request: JSON header, then blobs in input order, with the header length', () => {
  const { body, headers } = encodeInferRequest({
    binary: true,
    inputs: [
      { name: 'prompt', datatype: 'BYTES', shape: [1, 1], data: ['233'] },
      { name: 'max_new_tokens', datatype: 'INT32', shape: [1, 1], data: [8] },
    ],
  });
  const n = Number(headers['inference-header-content-length']);
  const json = JSON.parse(body.subarray(0, n).toString());
  assert.deepEqual(json.inputs.map((i: { parameters: unknown }) => i.parameters), [{ binary_data_size: 7 }, { binary_data_size: 4 }]);
  assert.equal(json.inputs[0].data, undefined);
  assert.deepEqual(json.parameters, { binary_data_output: true });
  assert.equal(body.subarray(n).toString('hex'), '03000000323333' + '08000000');
  assert.equal(headers['content-type'], 'application/octet-stream');
});

test('shape/data mismatch is rejected before sending', () => {
  assert.throws(() => encodeInferRequest({ inputs: [{ name: 'p', datatype: 'BYTES', shape: [2, 1], data: ['a'] }] }), /2 elements/);
});

test('decodes JSON and binary responses', () => {
  const plain = decodeInferResponse(Buffer.from(JSON.stringify({
    model_name: 'm', model_version: '1', outputs: [{ name: 'response', datatype: 'BYTES', shape: [1, 1], data: [['hi']] }],
  })));
  assert.deepEqual(plain.outputs[0]!.data, ['hi']);

  const header = Buffer.from(JSON.stringify({
    model_name: 'm', model_version: '1', outputs: [
      { name: 'response', datatype: 'BYTES', shape: [1, 1], parameters: { binary_data_size: 10 } },
      { name: 'completion_tokens', datatype: 'INT32', shape: [1, 1], parameters: { binary_data_size: 4 } },
    ],
  }));
  const body = Buffer.concat([header, encodeBytesTensor(['你好']), encodeInt32Tensor([3])]);
  const res = decodeInferResponse(body, header.length);
  assert.deepEqual(res.outputs.map((o) => o.data), [['你好'], [3]]);
  assert.throws(() => decodeInferResponse(body.subarray(0, body.length - 2), header.length), /truncated/);
});
