import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ActivityBoard, type ActivitySnapshot } from '../../../src/core/status/activity';

test('the board: running answers as reported, queued explanations counted until released, a change event each time', () => {
  const board = new ActivityBoard();
  const seen: ActivitySnapshot[] = [];
  const stop = board.onDidChange((s) => seen.push(s));
  board.setAnswers([{ conversationId: 'c1', title: 'Hello' }]);
  board.setAnswers([{ conversationId: 'c1', title: 'Hello' }]);
  assert.equal(seen.length, 1, 'the same list again is no change');
  const release = [board.queueExplanation(), board.queueExplanation()];
  assert.equal(board.snapshot.queuedExplanations, 2);
  release[0]!();
  release[0]!();
  assert.equal(board.snapshot.queuedExplanations, 1, 'releasing twice counts once');
  release[1]!();
  board.setAnswers([]);
  assert.deepEqual(seen.map((s) => [s.answers.length, s.queuedExplanations]), [[1, 0], [1, 1], [1, 2], [1, 1], [1, 0], [0, 0]]);
  stop();
  board.setAnswers([{ conversationId: 'c2', title: '' }]);
  assert.equal(seen.length, 6, 'no events after the listener stopped');
});
