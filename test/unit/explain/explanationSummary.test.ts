import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstSentence } from '../../../src/core/explain/explanationSummary';

test('a collapsed explanation shows its first sentence, without Markdown marks', () => {
  assert.equal(firstSentence('Returns the **area of a circle**, π · r². `radius ** 2` is evaluated first.'), 'Returns the area of a circle, π · r².');
  assert.equal(firstSentence('## Mean\n\nThe arithmetic mean of 12.5 and 3. Risky: empty lists.'), 'Mean The arithmetic mean of 12.5 and 3.');
  assert.equal(firstSentence('返回圆的面积。半径为负时无意义。'), '返回圆的面积。');
  assert.equal(firstSentence('No stop at all'), 'No stop at all');
  assert.equal(firstSentence(`${'word '.repeat(60)}.`, 20), 'word word word word…');
  assert.equal(firstSentence('```py\nx = 1\n```\nSets x.'), 'Sets x.');
  assert.equal(firstSentence('The **arithmetic mean** of `values`. Risky: an empty list.'), 'The arithmetic mean of values.');
});
