// The Triton calls only tests make, on top of the product's TritonClient: readiness, server and model metadata,
// the model configuration, /infer, and "load unless READY". They go through the same request plumbing (admin
// key, typed errors, timeouts), so what they prove about it holds for the product's calls too.
import { modelPath, TritonClient } from '../../src/core/triton/client';
import { TritonError } from '../../src/core/triton/errors';
import type { CallOptions, LoadOptions } from '../../src/core/triton/types';
import { decodeInferResponse, encodeInferRequest, INFERENCE_HEADER_LENGTH, type InferRequest, type InferResponse } from './inferCodec';

export interface ServerMetadata {
  name: string;
  version: string;
  extensions: string[];
}

export interface TensorMetadata {
  name: string;
  datatype: string;
  shape: number[];
}

export interface ModelMetadata {
  name: string;
  versions?: string[];
  platform: string;
  inputs: TensorMetadata[];
  outputs: TensorMetadata[];
}

type VersionOptions = CallOptions & { version?: string };

export class TestTritonClient extends TritonClient {
  /** True when the server is ready (with --strict-readiness: and every model it was asked to load is READY). */
  async isReady(options: CallOptions = {}): Promise<boolean> {
    return this.healthCheck('/v2/health/ready', options);
  }

  async serverMetadata(options: CallOptions = {}): Promise<ServerMetadata> {
    return this.json<ServerMetadata>({ op: 'metadata', method: 'GET', path: '/v2', ...options });
  }

  async modelMetadata(model: string, options: VersionOptions = {}): Promise<ModelMetadata> {
    const { version, ...call } = options;
    return this.json({ op: 'model-metadata', method: 'GET', path: modelPath(model, version), model, ...call });
  }

  /** POST /infer (JSON or binary-data extension). Not available for decoupled (streaming) models. */
  async infer(model: string, req: InferRequest, options: VersionOptions = {}): Promise<InferResponse> {
    const { version, ...call } = options;
    const { body, headers } = encodeInferRequest(req);
    const res = await this.call({ op: 'infer', method: 'POST', path: `${modelPath(model, version)}/infer`, model, body, headers, timeoutMs: 0, ...call, expectOk: true });
    const hdr = res.headers[INFERENCE_HEADER_LENGTH];
    const headerLength = typeof hdr === 'string' ? Number(hdr) : undefined;
    try {
      return decodeInferResponse(res.body, headerLength);
    } catch (e) {
      throw new TritonError('unexpected', `Triton sent an unreadable inference response: ${(e as Error).message}`, { operation: 'infer', model, url: this.baseUrl, status: res.status });
    }
  }

  /**
   * Loads the model unless it is already READY. Triton (2.51) reloads a READY model on every explicit load, even
   * with unchanged files, building a second copy before the swap.
   */
  async ensureModelLoaded(model: string, options: LoadOptions = {}): Promise<'already-ready' | 'loaded'> {
    const row = await this.modelState(model, options.signal ? { signal: options.signal } : {});
    if (row?.state === 'READY') return 'already-ready';
    if (row?.state === 'LOADING') {
      await this.waitForState(model, 'READY', { timeoutMs: options.timeoutMs || 24 * 3600_000, ...(options.signal ? { signal: options.signal } : {}) });
      return 'loaded';
    }
    await this.loadModel(model, options);
    return 'loaded';
  }
}
