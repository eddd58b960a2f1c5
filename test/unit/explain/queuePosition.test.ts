import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queuePositions } from '../../../src/core/explain/queuePosition';
import { selectedLines } from '../../../src/core/explain/selectionLocation';

test('explanations held back by the run\'s concurrency: behind the running ones and those before them in line', () => {
  // Two lanes busy (one still waiting for its first token, one streaming), three explanations waiting for a lane.
  assert.deepEqual(queuePositions(['done', 'answering', 'sent', 'queued', 'queued', 'queued']).map((p) => p.where === 'client' ? p.ahead : p.where), [
    'none', 'none', 'none', 2, 3, 4,
  ]);
  // The first in line with nothing running is about to be sent: not "behind 0 requests".
  assert.deepEqual(queuePositions(['queued', 'queued']), [{ where: 'none' }, { where: 'client', ahead: 1 }]);
});

test('sent explanations wait at the server while it has a queue: ours sent later are behind them', () => {
  // Four waiting at the server, three of them ours (sent in this order), two rows generating.
  const server = { waiting: 4, active: 2 };
  assert.deepEqual(queuePositions(['sent', 'sent', 'sent'], server), [
    { where: 'server', ahead: 1, active: 2 },
    { where: 'server', ahead: 2, active: 2 },
    { where: 'server', ahead: 3, active: 2 },
  ]);
  // A server without a queue (every request admitted): the sent one is being started, not queued.
  assert.deepEqual(queuePositions(['sent', 'answering'], { waiting: 0, active: 2 }), [{ where: 'none' }, { where: 'none' }]);
  // Without the server's figures nothing is claimed about it.
  assert.deepEqual(queuePositions(['sent']), [{ where: 'none' }]);
  // More of ours waiting than the server reports (some are being prefilled): never a negative position.
  assert.deepEqual(queuePositions(['sent', 'sent', 'sent'], { waiting: 1 }).map((p) => p.where === 'server' && p.ahead), [0, 0, 0]);
});

test('a selection anchors on the lines it covers; whole-line selections end on their last line', () => {
  assert.deepEqual(selectedLines({ startLine: 3, endLine: 4, endCharacter: 0 }), { first: 3, last: 3 }, 'Expand Line Selection of line 4');
  assert.deepEqual(selectedLines({ startLine: 3, endLine: 6, endCharacter: 2 }), { first: 3, last: 6 });
  assert.deepEqual(selectedLines({ startLine: 5, endLine: 5, endCharacter: 0 }), { first: 5, last: 5 }, 'an empty selection');
});
