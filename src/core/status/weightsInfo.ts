// How the model's weights run, from the info metric model.py publishes (`chatglm3_weights_info{quantization, dtype} 1`,
// triton/README.md "Metrics"): int8 when the memory plan (or tritonChatglm.quantization) chose ChatGLM3's 8-bit
// weights, else the float dtype. For Server Status and `triton-chatglm stats`.
import { findSamples, type ParsedMetrics } from '../triton/prometheus';

export const WEIGHTS_INFO_METRIC = 'chatglm3_weights_info';

export interface WeightsInfo {
  /** 'none' | 'int8' as the model reports it (another value is shown as it is). */
  quantization: string;
  /** The compute dtype: float16, bfloat16, float32. */
  dtype: string;
}

/**
 * The weights of the model's first instance that reports them (or of the named instance: per-instance rows);
 * undefined for a server without the metric.
 */
export function weightsInfo(metrics: ParsedMetrics, model: string, instance?: string): WeightsInfo | undefined {
  const sample = findSamples(metrics, WEIGHTS_INFO_METRIC, instance === undefined ? { model } : { model, instance }).find((s) => s.value === 1);
  if (!sample) return undefined;
  return { quantization: sample.labels.quantization ?? 'none', dtype: sample.labels.dtype ?? '' };
}

/** One line, English (the CLI's): "int8 weights, float16 activations" or "float16 weights". */
export function describeWeights(w: WeightsInfo): string {
  return w.quantization === 'int8' ? `int8 weights (8-bit quantized), ${w.dtype} activations` : `${w.dtype} weights (not quantized)`;
}
