import assert from 'node:assert/strict';
import { test } from 'node:test';
import { selectionLocation } from '../../../src/core/explain/selectionLocation';

test('a selection is named by its file and 1-based lines, whole-line selections by the lines they cover', () => {
  assert.equal(selectionLocation('utils.py', { startLine: 11, endLine: 29, endCharacter: 8 }), 'utils.py:12–30');
  assert.equal(selectionLocation('utils.py', { startLine: 11, endLine: 30, endCharacter: 0 }), 'utils.py:12–30', 'ends at column 0 of the next line');
  assert.equal(selectionLocation('a.ts', { startLine: 4, endLine: 4, endCharacter: 10 }), 'a.ts:5');
  assert.equal(selectionLocation('a.ts', { startLine: 4, endLine: 5, endCharacter: 0 }), 'a.ts:5', 'one whole line');
  assert.equal(selectionLocation('a.ts', { startLine: 4, endLine: 4, endCharacter: 0 }), 'a.ts:5', 'empty selection on a line');
});
