// The weights info metric (`chatglm3_weights_info{quantization, dtype} 1`, triton/README.md "Metrics") as Server
// Status and `triton-chatglm stats` read it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePrometheusText } from '../../../src/core/triton/prometheus';
import { metricsFigures } from '../../../src/core/status/statusModel';
import { describeWeights, weightsInfo } from '../../../src/core/status/weightsInfo';

const line = (model: string, quantization: string, dtype: string) =>
  `chatglm3_weights_info{model="${model}",version="1",instance="chatglm3-6b_0",quantization="${quantization}",dtype="${dtype}"} 1`;

test('the quantization in use comes from the weights info metric of the model', () => {
  const text = ['# TYPE chatglm3_weights_info gauge', line('other', 'none', 'float32'), line('chatglm3-6b', 'int8', 'float16')].join('\n');
  const info = weightsInfo(parsePrometheusText(text), 'chatglm3-6b');
  assert.deepEqual(info, { quantization: 'int8', dtype: 'float16' });
  assert.equal(describeWeights(info), 'int8 weights (8-bit quantized), float16 activations');
  assert.equal(describeWeights({ quantization: 'none', dtype: 'bfloat16' }), 'bfloat16 weights (not quantized)');
  assert.deepEqual(metricsFigures(parsePrometheusText(text), 'chatglm3-6b').weights, info);
});

test('a server without the metric (the hf engine, an older model.py) reports nothing', () => {
  const text = 'nv_inference_pending_request_count{model="chatglm3-6b",version="1"} 0';
  assert.equal(weightsInfo(parsePrometheusText(text), 'chatglm3-6b'), undefined);
  assert.equal(metricsFigures(parsePrometheusText(text), 'chatglm3-6b').weights, undefined);
});
