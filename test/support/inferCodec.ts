// Bodies of POST /v2/models/{m}/infer (tests only: the product talks to Triton through /generate_stream and
// /generate): plain JSON, or JSON header + binary blobs (binary-data extension, `Inference-Header-Content-Length`).
import { decodeTensor, encodeTensor, type TensorValue, type TritonDatatype } from '../../src/core/triton/binaryTensor';

export interface InferInput {
  name: string;
  datatype: TritonDatatype;
  /** Full shape, including the batch dimension when the model has max_batch_size > 0 (e.g. [1, 1]). */
  shape: number[];
  data: TensorValue[];
}

export interface InferRequestedOutput {
  name: string;
  /** Ask for this output as binary data (overrides the request-wide choice). */
  binary?: boolean;
}

export interface InferRequest {
  id?: string;
  inputs: InferInput[];
  /** Omit to receive every output. */
  outputs?: InferRequestedOutput[];
  /** Request parameters (parameters extension); values must be string, integer, boolean or double. */
  parameters?: Record<string, string | number | boolean>;
  /** Send inputs with the binary-data extension and ask for binary outputs. Default false (JSON). */
  binary?: boolean;
}

export interface InferOutput {
  name: string;
  datatype: TritonDatatype;
  shape: number[];
  data: TensorValue[];
}

export interface InferResponse {
  model_name: string;
  model_version: string;
  id?: string;
  parameters?: Record<string, unknown>;
  outputs: InferOutput[];
}

export const INFERENCE_HEADER_LENGTH = 'inference-header-content-length';

export function encodeInferRequest(req: InferRequest): { body: Buffer; headers: Record<string, string> } {
  const header: Record<string, unknown> = {};
  if (req.id !== undefined) header.id = req.id;
  const parameters: Record<string, unknown> = { ...(req.parameters ?? {}) };
  const blobs: Buffer[] = [];
  header.inputs = req.inputs.map((input) => {
    checkShape(input);
    if (req.binary) {
      const blob = encodeTensor(input.datatype, input.data);
      blobs.push(blob);
      return { name: input.name, shape: input.shape, datatype: input.datatype, parameters: { binary_data_size: blob.length } };
    }
    if (typeof input.data[0] === 'bigint') {
      return { name: input.name, shape: input.shape, datatype: input.datatype, data: input.data.map(String) };
    }
    return { name: input.name, shape: input.shape, datatype: input.datatype, data: input.data };
  });
  if (req.outputs) {
    header.outputs = req.outputs.map((o) => ({ name: o.name, parameters: { binary_data: o.binary ?? req.binary ?? false } }));
  } else if (req.binary) {
    parameters.binary_data_output = true;
  }
  if (Object.keys(parameters).length > 0) header.parameters = parameters;
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  if (blobs.length === 0) return { body: json, headers: { 'content-type': 'application/json' } };
  return {
    body: Buffer.concat([json, ...blobs]),
    headers: { 'content-type': 'application/octet-stream', [INFERENCE_HEADER_LENGTH]: String(json.length) },
  };
}

function checkShape(input: InferInput): void {
  const elements = input.shape.reduce((a, b) => a * b, 1);
  if (elements !== input.data.length) {
    throw new RangeError(`input '${input.name}' has shape [${input.shape.join(', ')}] (${elements} elements) but ${input.data.length} values`);
  }
}

interface RawOutput {
  name: string;
  datatype: TritonDatatype;
  shape: number[];
  data?: TensorValue[];
  parameters?: { binary_data_size?: number } & Record<string, unknown>;
}

/** Decodes a response body; `headerLength` is the Inference-Header-Content-Length value when present. */
export function decodeInferResponse(body: Buffer, headerLength?: number): InferResponse {
  const jsonEnd = headerLength ?? body.length;
  if (jsonEnd > body.length) throw new Error(`inference header length ${jsonEnd} exceeds the body (${body.length} bytes)`);
  const parsed = JSON.parse(body.subarray(0, jsonEnd).toString('utf8')) as Omit<InferResponse, 'outputs'> & { outputs?: RawOutput[] };
  let offset = jsonEnd;
  const outputs: InferOutput[] = (parsed.outputs ?? []).map((o) => {
    const size = o.parameters?.binary_data_size;
    let data: TensorValue[];
    if (typeof size === 'number') {
      if (offset + size > body.length) throw new Error(`binary output '${o.name}' of ${size} bytes is truncated`);
      data = decodeTensor(o.datatype, body.subarray(offset, offset + size));
      offset += size;
    } else {
      data = (o.data ?? []).flat(Infinity as 1) as TensorValue[];
    }
    return { name: o.name, datatype: o.datatype, shape: o.shape, data };
  });
  return { ...parsed, outputs };
}
