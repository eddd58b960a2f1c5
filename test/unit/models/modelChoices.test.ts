// The setup checklist's model rows (src/core/models/modelChoices.ts): every catalog model with its size, its fit on
// the measured GPU from the memory plan (and in which precision), its licence; the chosen one marked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { modelChoices } from '../../../src/core/models';

const GiB = 2 ** 30;
const settings = { maxBatchSize: 8, maxInputTokens: 6144, maxNewTokensLimit: 2048 };

test('every catalog model, the chosen one marked, with its download size and licence', () => {
  const rows = modelChoices('glm-4-9b-chat', undefined, settings);
  assert.deepEqual(rows.map((r) => [r.id, r.chosen]), [['chatglm3-6b', false], ['glm-4-9b-chat', true], ['codegeex4-all-9b', false]]);
  assert.equal(rows[1]!.downloadBytes, 18_799_941_256);
  assert.equal(rows[1]!.license.name, 'GLM-4 License');
  assert.match(rows[1]!.license.keyTerms.en, /begins with "glm-4"/);
  assert.ok(rows.every((r) => r.fit.kind === 'unknown'), 'no GPU measured: no verdict');
});

test('on an 80 GB GPU all fit unquantized in their own dtype; on 16 GB GLM-4 needs int8; on 8 GB none fits', () => {
  const big = modelChoices('chatglm3-6b', 80 * GiB, settings);
  assert.deepEqual(big.map((r) => r.fit.kind === 'runs' && [r.fit.weights, r.fit.dtype]), [['none', 'float16'], ['none', 'bfloat16'], ['none', 'bfloat16']]);
  const mid = modelChoices('chatglm3-6b', 16 * GiB, settings);
  const glm4 = mid[1]!.fit;
  assert.ok(glm4.kind === 'runs' && glm4.weights === 'int8', JSON.stringify(glm4));
  const small = modelChoices('chatglm3-6b', 4 * GiB, settings);
  assert.ok(small.every((r) => r.fit.kind === 'too-small'), JSON.stringify(small.map((r) => r.fit)));
  const need = (r: (typeof small)[number]) => (r.fit.kind === 'too-small' ? r.fit.neededBytes : 0);
  assert.ok(need(small[1]!) > need(small[0]!), 'GLM-4-9B needs more than ChatGLM3-6B');
});
