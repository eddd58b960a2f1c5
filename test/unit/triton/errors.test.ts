import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyTritonFailure, networkErrorCode, serverErrorText, type TritonFailure } from '../../../src/core/triton/errors';

const M = 'chatglm3-6b';
const url = 'http://127.0.0.1:8000';
const code = (f: TritonFailure) => classifyTritonFailure(f).code;
const netErr = (c: string) => Object.assign(new Error(`connect ${c} 127.0.0.1:8000`), { code: c });

// Messages below were captured from tritonserver 2.51 (test server) or quoted from Triton's source (reference §1-§4).
test('connection failures mean the server is not running', () => {
  for (const c of ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND']) {
    const e = classifyTritonFailure({ operation: 'health', url, cause: netErr(c) });
    assert.equal(e.code, 'server-not-running', c);
    assert.equal(e.details.networkCode, c);
    assert.match(e.message, /Cannot reach Triton/);
  }
  // Node's fetch wraps the code in `cause`; happy-eyeballs wraps it in an AggregateError.
  const wrapped = new TypeError('fetch failed', { cause: netErr('ECONNREFUSED') });
  assert.equal(code({ operation: 'infer', cause: wrapped }), 'server-not-running');
  const agg = Object.assign(new AggregateError([netErr('ECONNREFUSED')], 'x'), {});
  assert.equal(networkErrorCode(agg), 'ECONNREFUSED');
});

test('abort and timeout errors', () => {
  const abort = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
  assert.equal(code({ operation: 'generate-stream', cause: abort }), 'cancelled');
  assert.equal(code({ operation: 'load', cause: Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' }) }), 'timeout');
  assert.equal(code({ operation: 'infer', cause: new Error('weird') }), 'unexpected');
});

test('403 restricted API is unauthorized', () => {
  const e = classifyTritonFailure({ operation: 'load', model: M, status: 403, serverMessage: "This API is restricted, expecting header 'x-triton-admin'" });
  assert.equal(e.code, 'unauthorized');
  assert.match(e.message, /admin key/);
  assert.equal(e.details.serverMessage, "This API is restricted, expecting header 'x-triton-admin'");
});

test('a failed load keeps Triton\'s reason verbatim', () => {
  const msg = "load failed for model 'chatglm3-6b': version 1 is at UNAVAILABLE state: Internal: RuntimeError: weights not found at /weights/chatglm3-6b;\n";
  const e = classifyTritonFailure({ operation: 'load', model: M, status: 400, serverMessage: msg });
  assert.equal(e.code, 'model-load-failed');
  assert.ok(e.message.includes(msg.trim()));
  assert.equal(e.details.serverMessage, msg);
  assert.equal(code({ operation: 'load', model: 'nope', status: 500, serverMessage: "failed to load 'nope', failed to poll from model repository" }), 'model-load-failed');
  assert.equal(code({ operation: 'load', model: M, status: 400, serverMessage: 'instance group chatglm3-6b_0 of model chatglm3-6b has kind KIND_GPU but no GPUs are available' }), 'model-load-failed');
});

test('requests to a model that is not loaded', () => {
  assert.equal(code({ operation: 'generate-stream', model: M, status: 404, serverMessage: "Request for unknown model: 'chatglm3-6b' has no available versions" }), 'model-not-loaded');
  assert.equal(code({ operation: 'infer', model: M, status: 400, serverMessage: "Request for unknown model: 'chatglm3-6b' is not found" }), 'model-not-loaded');
  assert.equal(code({ operation: 'statistics', model: M, status: 400, serverMessage: "requested model 'chatglm3-6b' is not available" }), 'model-not-loaded');
  assert.equal(code({ operation: 'generate', model: M, status: 503, serverMessage: "Request for model 'chatglm3-6b' version 1 is not at ready state" }), 'model-not-loaded');
});

test('a full queue is server-busy (HTTP status or in-stream)', () => {
  assert.equal(code({ operation: 'generate-stream', model: M, status: 503, serverMessage: '[request id: <id_unknown>] Exceeds maximum queue size' }), 'server-busy');
  assert.equal(code({ operation: 'generate-stream', model: M, status: 200, inStream: true, serverMessage: 'Exceeds maximum queue size' }), 'server-busy');
  assert.equal(code({ operation: 'generate', model: M, status: 503, serverMessage: 'Server not ready' }), 'server-busy');
});

test('the model\'s own "server busy" (its waiting queue, UNAVAILABLE) is server-busy too: one outcome for a burst', () => {
  const busy = 'server busy: the waiting queue is full (32 requests wait for one of 8 rows); try again shortly';
  assert.equal(code({ operation: 'generate-stream', model: M, status: 503, serverMessage: busy }), 'server-busy');
  assert.equal(code({ operation: 'generate-stream', model: M, status: 200, inStream: true, serverMessage: busy }), 'server-busy');
});

test('"the model failed" (a device fault stopped it) is model-failed, whatever the status, in a stream or not', () => {
  const failed = 'the model failed: CUDA error: an illegal memory access was encountered; reload it (the GPU state is lost until the model is loaded again)';
  for (const f of [{ status: 503 }, { status: 200, inStream: true }, { status: 400 }]) {
    const e = classifyTritonFailure({ operation: 'generate-stream', model: M, serverMessage: failed, ...f });
    assert.equal(e.code, 'model-failed', JSON.stringify(f));
    assert.match(e.message, /reload it/);
  }
  assert.notEqual(code({ operation: 'generate-stream', model: M, status: 200, inStream: true, serverMessage: 'generation failed: boom' }), 'model-failed');
});

test('bad input from an inference call is invalid-request with the model\'s message', () => {
  const msg = "input 'temperature' must be between 0 and 2 (0 = greedy), got 1e+09";
  const e = classifyTritonFailure({ operation: 'generate-stream', model: M, status: 400, serverMessage: msg });
  assert.equal(e.code, 'invalid-request');
  assert.ok(e.message.endsWith(msg));
  assert.equal(code({ operation: 'generate-stream', model: M, status: 200, inStream: true, serverMessage: msg }), 'invalid-request');
  assert.equal(code({ operation: 'infer', model: M, status: 400, serverMessage: "expected 1 inputs but got 0 inputs for model 'chatglm3-6b'" }), 'invalid-request');
  assert.equal(code({ operation: 'generate', model: M, status: 400, serverMessage: 'attempt to access JSON non-number as number' }), 'invalid-request');
});

test('model-internal failures are not blamed on the request', () => {
  assert.equal(code({ operation: 'generate-stream', model: M, status: 200, inStream: true, serverMessage: 'generation failed: CUDA out of memory' }), 'unexpected');
  assert.equal(code({ operation: 'generate', model: M, status: 500, serverMessage: 'generation failed: boom' }), 'unexpected');
  assert.equal(code({ operation: 'infer', model: M, status: 501, serverMessage: "HTTP end point doesn't support models with decoupled transaction policy" }), 'unexpected');
});

test('a 400 from a non-inference call is not called invalid-request', () => {
  assert.equal(code({ operation: 'metadata', status: 400, serverMessage: 'something odd' }), 'unexpected');
});

test('serverErrorText extracts {"error"} or keeps raw text', () => {
  assert.equal(serverErrorText('{"error":"boom"}'), 'boom');
  assert.equal(serverErrorText('plain text'), 'plain text');
  assert.equal(serverErrorText(''), '');
  assert.equal(serverErrorText('{"other":1}'), '{"other":1}');
});

test('errors serialise to plain data', () => {
  const e = classifyTritonFailure({ operation: 'health', url, cause: netErr('ECONNREFUSED') });
  const json = JSON.parse(JSON.stringify(e));
  assert.equal(json.code, 'server-not-running');
  assert.equal(json.details.url, url);
});

test('real tritonserver 2.51 answers for bad requests (captured from the test server)', () => {
  // /generate_stream with temperature 1e9: HTTP 400 whose body is an SSE event.
  const sse = serverErrorText(`data: {"error":"input 'temperature' must be between 0 and 2 (0 = greedy), got 1e+09"}\n\n`);
  assert.equal(sse, "input 'temperature' must be between 0 and 2 (0 = greedy), got 1e+09");
  assert.equal(code({ operation: 'generate-stream', model: M, status: 400, serverMessage: sse }), 'invalid-request');
  // temperature: null → HTTP 500 from Triton's JSON conversion, still the request's fault.
  assert.equal(code({ operation: 'generate-stream', model: M, status: 500, serverMessage: "Unable to parse 'data': attempt to access JSON non-number as double" }), 'invalid-request');
  // /generate on a decoupled model: HTTP 200 with an error body.
  const e = classifyTritonFailure({ operation: 'generate', model: M, status: 200, inStream: true, serverMessage: 'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses' });
  assert.equal(e.code, 'unexpected');
  assert.match(e.message, /streaming setting/);
  // A model error mentioning "not found" inside a stream is not "model not loaded".
  assert.equal(code({ operation: 'generate-stream', model: M, status: 200, inStream: true, serverMessage: 'history[0] file not found' }), 'invalid-request');
});

test('a team proxy\'s own answers: 401 key-rejected, 403 forbidden, 502/503/504 replica-failed; Triton\'s own 403 and 503 keep their meaning', () => {
  const proxy = (status: number) => classifyTritonFailure({ operation: 'generate-stream', status, serverMessage: `team proxy: text ${status}` });
  assert.equal(proxy(401).code, 'key-rejected');
  assert.match(proxy(401).message, /refused the API key: text 401/);
  assert.equal(proxy(403).code, 'forbidden');
  for (const s of [502, 503, 504]) assert.equal(proxy(s).code, 'replica-failed');
  assert.equal(classifyTritonFailure({ operation: 'load', status: 403, serverMessage: 'This API is restricted' }).code, 'unauthorized');
  assert.equal(classifyTritonFailure({ operation: 'infer', status: 503, serverMessage: 'Server not ready' }).code, 'server-busy');
});
