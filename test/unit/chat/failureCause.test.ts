// Issue #27: why an answer failed, as the chat panel, Explain, Edit Selection and the CLI report it — a request
// that found no server is our container's exit when the session knows that it exited.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { failureCause, foundNoServer } from '../../../src/core/chat/failureCause';
import { containerExitedError } from '../../../src/core/server';
import { TritonError } from '../../../src/core/triton';

const refused = new TritonError('server-not-running', 'Cannot reach Triton Inference Server (ECONNREFUSED). Is the server running?', { operation: 'generate-stream' });
const cut = new TritonError('connection-lost', 'The connection was lost while the answer streamed.', { operation: 'generate-stream' });
const exited = containerExitedError(137, ['killed']);

test('a request that found no server (refused, or its stream cut) is the container\'s exit when it exited', async () => {
  for (const error of [refused, cut]) {
    const asked: unknown[] = [];
    assert.equal(await failureCause(error, async (e) => { asked.push(e); return exited; }), exited);
    assert.deepEqual(asked, [error]);
  }
});

test('nothing more known (the container runs, external mode) or asking fails: the error itself', async () => {
  assert.equal(await failureCause(refused, async () => undefined), refused);
  assert.equal(await failureCause(cut, async () => { throw new Error('docker gone'); }), cut);
  assert.equal(await failureCause(refused, undefined), refused, 'nobody to ask');
});

test('other failures are never put down to the container: nobody is asked', async () => {
  const other = [new TritonError('model-not-loaded', 'not loaded', { operation: 'generate-stream' }), new TritonError('timeout', 'slow', { operation: 'generate-stream' }), new Error('bug')];
  for (const error of other) {
    let asked = 0;
    assert.equal(await failureCause(error, async () => { asked++; return exited; }), error);
    assert.equal(asked, 0);
    assert.equal(foundNoServer(error), false);
  }
});
