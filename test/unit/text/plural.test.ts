import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pluralForm } from '../../../src/core/text/plural';

test('plural forms: English one/other, Chinese other only, an unknown locale reads as English', () => {
  assert.equal(pluralForm(1, 'en'), 'one');
  assert.equal(pluralForm(0, 'en'), 'other');
  assert.equal(pluralForm(3, 'en'), 'other');
  assert.equal(pluralForm(1, 'zh-cn'), 'other');
  assert.equal(pluralForm(1, 'not a locale!'), 'one');
});
