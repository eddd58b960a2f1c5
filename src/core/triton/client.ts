// HTTP client for Triton Inference Server (KServe v2 + Triton extensions) over one keep-alive undici Agent.
// Every failure becomes a TritonError (see errors.ts). The admin key travels only on the APIs Triton restricts
// with it (model-repository, model-config) and is kept in a private field so it never shows up in logs.
import { Agent, request, type Dispatcher } from 'undici';
import { classifyTritonFailure, serverErrorText, TritonError, type TritonOperation } from './errors';
import { decodeInferResponse, encodeInferRequest, INFERENCE_HEADER_LENGTH, type InferRequest, type InferResponse } from './inferCodec';
import { parsePrometheusText, type ParsedMetrics } from './prometheus';
import { SseParser } from './sse';
import type { ModelStatistics } from './statistics';

export const DEFAULT_ADMIN_HEADER = 'x-triton-admin';

export interface TritonClientOptions {
  /** http://127.0.0.1:8000 or an https URL of a remote Triton (a path prefix of a reverse proxy is kept). */
  baseUrl: string;
  /** Full URL of the Prometheus endpoint, e.g. http://127.0.0.1:8002/metrics. */
  metricsUrl?: string;
  /** Extra headers sent with every request (e.g. a proxy's auth). The admin header is removed from these. */
  headers?: Record<string, string>;
  /** Value of the admin header, sent only on model-repository and model-config calls. */
  adminKey?: string;
  /** Name of the admin header (Triton's --http-restricted-api `<header>=<value>`). Default x-triton-admin. */
  adminHeader?: string;
  /** Concurrent connections of the keep-alive pool. Default 32. */
  connections?: number;
  /** Limit for short calls (health, metadata, index, unload, stats...), ms. Default 30 000; 0 = none. */
  requestTimeoutMs?: number;
  /** Use this dispatcher instead of creating an Agent (it is then not closed by close()). */
  dispatcher?: Dispatcher;
}

export type ModelState = 'UNKNOWN' | 'READY' | 'UNAVAILABLE' | 'LOADING' | 'UNLOADING';

/** One row of POST /v2/repository/index. A model never loaded since server start has only `name`. */
export interface RepositoryIndexEntry {
  name: string;
  version?: string;
  state?: ModelState;
  reason?: string;
}

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

export interface LoadProgress {
  /** State from the repository index (absent while the index does not list a version yet). */
  state?: ModelState;
  reason?: string;
  elapsedMs: number;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Overall limit for this call, ms; 0 = none. */
  timeoutMs?: number;
}

export interface LoadOptions {
  signal?: AbortSignal;
  /** No limit by default: loading a 6B model takes minutes. Aborting stops waiting; the server keeps loading. */
  timeoutMs?: number;
  /** Called about every `progressIntervalMs` with the model's state from the repository index. */
  onProgress?: (progress: LoadProgress) => void;
  progressIntervalMs?: number;
}

export interface WaitForStateOptions {
  signal?: AbortSignal;
  /** Default 120 000 ms. */
  timeoutMs?: number;
  /** Default 1000 ms. */
  intervalMs?: number;
}

export interface StreamOptions {
  signal?: AbortSignal;
  /** Fail with a `timeout` error when no bytes arrive for this long (including before the first event). 0 = none. */
  idleTimeoutMs?: number;
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

interface CallSpec {
  op: TritonOperation;
  method: 'GET' | 'POST';
  path: string;
  model?: string;
  body?: Buffer | string;
  headers?: Record<string, string>;
  admin?: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Base URL override (metrics live on another port). */
  url?: string;
  /** A non-2xx answer throws the classified error. */
  expectOk?: boolean;
}

const encodeName = (name: string): string => encodeURIComponent(name);

export class TritonClient {
  readonly baseUrl: string;
  readonly metricsUrl: string | undefined;
  readonly #adminKey: string | undefined;
  readonly #adminHeader: string;
  readonly #headers: Record<string, string>;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #requestTimeoutMs: number;

  constructor(options: TritonClientOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`Triton URL must be http or https: ${options.baseUrl}`);
    this.baseUrl = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    this.metricsUrl = options.metricsUrl;
    this.#adminKey = options.adminKey || undefined;
    this.#adminHeader = (options.adminHeader ?? DEFAULT_ADMIN_HEADER).toLowerCase();
    this.#headers = {};
    for (const [k, v] of Object.entries(options.headers ?? {})) {
      if (k.toLowerCase() !== this.#adminHeader) this.#headers[k.toLowerCase()] = v;
    }
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    if (options.dispatcher) {
      this.#dispatcher = options.dispatcher;
      this.#ownsDispatcher = false;
    } else {
      this.#dispatcher = new Agent({ connections: options.connections ?? 32, keepAliveTimeout: 30_000, pipelining: 1 });
      this.#ownsDispatcher = true;
    }
  }

  /** Closes idle pooled connections (and waits for running requests to end). */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  /** Destroys the pool at once, aborting running requests. */
  async destroy(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.destroy();
  }

  // ---- health and metadata ------------------------------------------------------------------------------

  /** True when /v2/health/live answers 200; false when it answers otherwise or nothing is listening. */
  async isLive(options: CallOptions = {}): Promise<boolean> {
    return this.#healthCheck('/v2/health/live', options);
  }

  /** True when the server is ready (with --strict-readiness: and every model it was asked to load is READY). */
  async isReady(options: CallOptions = {}): Promise<boolean> {
    return this.#healthCheck('/v2/health/ready', options);
  }

  async #healthCheck(path: string, options: CallOptions): Promise<boolean> {
    try {
      const res = await this.#call({ op: 'health', method: 'GET', path, ...options });
      return res.status === 200;
    } catch (e) {
      if (e instanceof TritonError && (e.code === 'server-not-running' || e.code === 'timeout')) return false;
      throw e;
    }
  }

  async serverMetadata(options: CallOptions = {}): Promise<ServerMetadata> {
    return this.#json<ServerMetadata>({ op: 'metadata', method: 'GET', path: '/v2', ...options });
  }

  // ---- model repository ---------------------------------------------------------------------------------

  async repositoryIndex(options: CallOptions & { readyOnly?: boolean } = {}): Promise<RepositoryIndexEntry[]> {
    const { readyOnly, ...call } = options;
    return this.#json<RepositoryIndexEntry[]>({
      op: 'repository-index', method: 'POST', path: '/v2/repository/index', admin: true,
      body: JSON.stringify(readyOnly ? { ready: true } : {}), headers: { 'content-type': 'application/json' }, ...call,
    });
  }

  /** The index row of one model, or undefined when the repository has no such directory. */
  async modelState(model: string, options: CallOptions = {}): Promise<RepositoryIndexEntry | undefined> {
    const rows = await this.repositoryIndex(options);
    // Several versions may be listed; prefer a READY/LOADING one over stale UNAVAILABLE rows.
    const mine = rows.filter((r) => r.name === model);
    return mine.find((r) => r.state === 'READY') ?? mine.find((r) => r.state === 'LOADING' || r.state === 'UNLOADING') ?? mine[0];
  }

  /**
   * Loads (or reloads) a model from the server's repository and resolves when it is READY. Blocking on the
   * server side, so there is no client timeout unless `timeoutMs` is given. Never sends `config` or `file:`
   * overrides: those let anyone who can call load run arbitrary code in the server.
   */
  async loadModel(model: string, options: LoadOptions = {}): Promise<void> {
    const started = Date.now();
    let poller: ReturnType<typeof setInterval> | undefined;
    const { onProgress } = options;
    if (onProgress) {
      let inFlight = false;
      const poll = async () => {
        if (inFlight) return;
        inFlight = true;
        try {
          const row = await this.modelState(model, { timeoutMs: 5_000 });
          const p: LoadProgress = { elapsedMs: Date.now() - started };
          if (row?.state) p.state = row.state;
          if (row?.reason) p.reason = row.reason;
          if (poller !== undefined) onProgress(p);
        } catch { /* progress is best effort; the load call reports the real outcome */ } finally {
          inFlight = false;
        }
      };
      poller = setInterval(() => void poll(), options.progressIntervalMs ?? 1_000);
    }
    try {
      await this.#call({
        op: 'load', method: 'POST', path: `/v2/repository/models/${encodeName(model)}/load`, model, admin: true,
        signal: options.signal, timeoutMs: options.timeoutMs ?? 0, expectOk: true,
      });
    } finally {
      if (poller !== undefined) clearInterval(poller);
      poller = undefined;
    }
  }

  /**
   * Loads the model unless it is already READY. Triton (2.51) reloads a READY model on every explicit load, even
   * with unchanged files, building a second copy before the swap; use this when the files did not change.
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

  /** Starts unloading; returns at once (Triton unloads in the background). Use waitForState for UNAVAILABLE. */
  async unloadModel(model: string, options: CallOptions & { unloadDependents?: boolean } = {}): Promise<void> {
    const { unloadDependents, ...call } = options;
    await this.#call({
      op: 'unload', method: 'POST', path: `/v2/repository/models/${encodeName(model)}/unload`, model, admin: true,
      body: JSON.stringify(unloadDependents ? { parameters: { unload_dependents: true } } : {}),
      headers: { 'content-type': 'application/json' }, ...call, expectOk: true,
    });
  }

  /**
   * Polls the repository index until the model is in one of `states`. While waiting for READY, an
   * UNAVAILABLE row with a load error fails at once with `model-load-failed` carrying Triton's reason.
   */
  async waitForState(model: string, states: ModelState | ModelState[], options: WaitForStateOptions = {}): Promise<RepositoryIndexEntry> {
    const wanted = new Set(Array.isArray(states) ? states : [states]);
    const timeoutMs = options.timeoutMs ?? 120_000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (options.signal?.aborted) throw classifyTritonFailure({ operation: 'repository-index', model, url: this.baseUrl, cause: abortError() });
      const row = await this.modelState(model, { signal: options.signal });
      if (row?.state && wanted.has(row.state)) return row;
      if (wanted.has('READY') && !wanted.has('UNAVAILABLE') && row?.state === 'UNAVAILABLE' && row.reason && row.reason !== 'unloaded') {
        throw classifyTritonFailure({ operation: 'load', model, url: this.baseUrl, status: 400, serverMessage: row.reason });
      }
      if (Date.now() >= deadline) {
        throw new TritonError('timeout', `Model '${model}' did not reach ${[...wanted].join('/')} within ${timeoutMs} ms (state: ${row?.state ?? 'never loaded'}).`,
          { operation: 'repository-index', model, url: this.baseUrl, timeoutMs });
      }
      try {
        await sleep(Math.min(options.intervalMs ?? 1_000, Math.max(0, deadline - Date.now())), options.signal);
      } catch (e) {
        throw classifyTritonFailure({ operation: 'repository-index', model, url: this.baseUrl, cause: e });
      }
    }
  }

  // ---- model ----------------------------------------------------------------------------------------------

  /** True when the model (version) is READY; any non-200 answer means not ready. */
  async isModelReady(model: string, options: CallOptions & { version?: string } = {}): Promise<boolean> {
    const { version, ...call } = options;
    const res = await this.#call({ op: 'model-ready', method: 'GET', path: `${modelPath(model, version)}/ready`, model, ...call });
    return res.status === 200;
  }

  /** The final model configuration as JSON (protobuf field names). Needs the admin key when model-config is restricted. */
  async modelConfig(model: string, options: CallOptions & { version?: string } = {}): Promise<Record<string, unknown>> {
    const { version, ...call } = options;
    return this.#json({ op: 'model-config', method: 'GET', path: `${modelPath(model, version)}/config`, model, admin: true, ...call });
  }

  async modelMetadata(model: string, options: CallOptions & { version?: string } = {}): Promise<ModelMetadata> {
    const { version, ...call } = options;
    return this.#json({ op: 'model-metadata', method: 'GET', path: modelPath(model, version), model, ...call });
  }

  /** Statistics of one model (all versions), or of every model when `model` is omitted. */
  async modelStatistics(model?: string, options: CallOptions & { version?: string } = {}): Promise<ModelStatistics[]> {
    const { version, ...call } = options;
    const path = model ? `${modelPath(model, version)}/stats` : '/v2/models/stats';
    const body = await this.#json<{ model_stats?: ModelStatistics[] }>({ op: 'statistics', method: 'GET', path, ...(model ? { model } : {}), ...call });
    return body.model_stats ?? [];
  }

  // ---- inference ------------------------------------------------------------------------------------------

  /** POST /infer (JSON or binary-data extension). Not available for decoupled (streaming) models. */
  async infer(model: string, req: InferRequest, options: CallOptions & { version?: string } = {}): Promise<InferResponse> {
    const { version, ...call } = options;
    const { body, headers } = encodeInferRequest(req);
    const res = await this.#call({ op: 'infer', method: 'POST', path: `${modelPath(model, version)}/infer`, model, body, headers, timeoutMs: 0, ...call, expectOk: true });
    const hdr = res.headers[INFERENCE_HEADER_LENGTH];
    const headerLength = typeof hdr === 'string' ? Number(hdr) : undefined;
    try {
      return decodeInferResponse(res.body, headerLength);
    } catch (e) {
      throw new TritonError('unexpected', `Triton sent an unreadable inference response: ${(e as Error).message}`, { operation: 'infer', model, url: this.baseUrl, status: res.status });
    }
  }

  /**
   * POST /generate: one JSON object (top-level keys named like inputs become tensors). No timeout by default.
   * Triton may answer 200 with `{"error": ...}` (e.g. a decoupled model); that is thrown as a TritonError.
   */
  async generate(model: string, body: Record<string, unknown>, options: CallOptions = {}): Promise<Record<string, unknown>> {
    const out = await this.#json<Record<string, unknown>>({
      op: 'generate', method: 'POST', path: `${modelPath(model)}/generate`, model, body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' }, timeoutMs: 0, ...options,
    });
    if (out && typeof out === 'object' && out.error !== undefined) {
      throw classifyTritonFailure({ operation: 'generate', model, url: this.baseUrl, status: 200, inStream: true, serverMessage: String(out.error) });
    }
    return out;
  }

  /**
   * POST /generate_stream: yields each SSE event's JSON object. An `{"error": ...}` event throws a TritonError
   * (`inStream`). Aborting the signal, breaking out of the loop or an idle timeout closes the connection, which
   * makes Triton cancel the request.
   */
  async *generateStream(model: string, body: Record<string, unknown>, options: StreamOptions = {}): AsyncGenerator<Record<string, unknown>, void, undefined> {
    const url = `${this.baseUrl}${modelPath(model)}/generate_stream`;
    const op: TritonOperation = 'generate-stream';
    const ctrl = new AbortController();
    const userSignal = options.signal;
    if (userSignal?.aborted) throw classifyTritonFailure({ operation: op, model, url: this.baseUrl, cause: abortError() });
    const onAbort = () => ctrl.abort(userSignal?.reason);
    userSignal?.addEventListener('abort', onAbort, { once: true });
    const idleMs = options.idleTimeoutMs ?? 0;
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    const arm = () => {
      if (idleMs <= 0) return;
      if (idleTimer !== undefined) clearTimeout(idleTimer);
      idleTimer = setTimeout(() => { timedOut = true; ctrl.abort(); }, idleMs);
    };
    let res: Dispatcher.ResponseData | undefined;
    let finished = false;
    const fail = (cause: unknown): TritonError => {
      if (cause instanceof TritonError) return cause;
      if (timedOut) {
        return new TritonError('timeout', `Triton sent nothing for ${idleMs} ms; the request was cancelled.`, { operation: op, model, url: this.baseUrl, timeoutMs: idleMs }, { cause });
      }
      if (userSignal?.aborted) return classifyTritonFailure({ operation: op, model, url: this.baseUrl, cause: abortError() });
      return classifyTritonFailure({ operation: op, model, url: this.baseUrl, cause });
    };
    arm();
    try {
      try {
        res = await request(url, {
          dispatcher: this.#dispatcher, method: 'POST', signal: ctrl.signal,
          headers: { ...this.#headers, 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify(body), headersTimeout: 0, bodyTimeout: 0,
        });
      } catch (e) {
        throw fail(e);
      }
      if (res.statusCode !== 200) {
        const text = await res.body.text().catch(() => '');
        throw classifyTritonFailure({ operation: op, model, url: this.baseUrl, status: res.statusCode, serverMessage: serverErrorText(text) });
      }
      const parser = new SseParser();
      const toObject = (data: string): Record<string, unknown> => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(data);
        } catch {
          throw new TritonError('unexpected', `Triton sent a malformed stream event: ${data.slice(0, 200)}`, { operation: op, model, url: this.baseUrl, status: 200 });
        }
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
          throw new TritonError('unexpected', `Triton sent a stream event that is not an object: ${data.slice(0, 200)}`, { operation: op, model, url: this.baseUrl, status: 200 });
        }
        const obj = parsed as Record<string, unknown>;
        if (obj.error !== undefined) {
          throw classifyTritonFailure({ operation: op, model, url: this.baseUrl, status: 200, inStream: true, serverMessage: String(obj.error) });
        }
        return obj;
      };
      try {
        for await (const chunk of res.body) {
          arm();
          for (const ev of parser.push(chunk as Buffer)) {
            // One chunk can hold several events: after an abort, deliver none of the rest.
            if (ctrl.signal.aborted) throw fail(abortError());
            yield toObject(ev.data);
          }
        }
      } catch (e) {
        throw fail(e);
      }
      for (const ev of parser.end()) {
        if (ctrl.signal.aborted) throw fail(abortError());
        yield toObject(ev.data);
      }
      finished = true;
    } finally {
      if (idleTimer !== undefined) clearTimeout(idleTimer);
      userSignal?.removeEventListener('abort', onAbort);
      // Leaving early (error, break, abort): close the connection so the server cancels the request.
      if (!finished && res && !res.body.destroyed) res.body.destroy();
    }
  }

  // ---- metrics --------------------------------------------------------------------------------------------

  async metricsText(options: CallOptions = {}): Promise<string> {
    if (!this.metricsUrl) throw new TritonError('unexpected', 'No metrics URL configured for this Triton client.', { operation: 'metrics' });
    const res = await this.#call({ op: 'metrics', method: 'GET', path: '', url: this.metricsUrl, ...options, expectOk: true });
    return res.body.toString('utf8');
  }

  async metrics(options: CallOptions = {}): Promise<ParsedMetrics> {
    return parsePrometheusText(await this.metricsText(options));
  }

  // ---- plumbing -------------------------------------------------------------------------------------------

  async #json<T>(spec: CallSpec): Promise<T> {
    const res = await this.#call({ ...spec, expectOk: true });
    try {
      return JSON.parse(res.body.toString('utf8')) as T;
    } catch {
      throw new TritonError('unexpected', `Triton sent a response that is not JSON for ${spec.op}.`, {
        operation: spec.op, url: this.baseUrl, status: res.status, serverMessage: res.body.toString('utf8').slice(0, 500),
        ...(spec.model !== undefined ? { model: spec.model } : {}),
      });
    }
  }

  /**
   * One request; with `expectOk` a non-2xx answer throws the classified error. The limit is undici's own
   * headers/body timeouts and the caller's signal goes straight to undici: no per-request AbortController or timer,
   * which measurably cost ~10 µs on a ~35 µs loopback call (bench/README.md, client_overhead_ratio).
   */
  async #call(spec: CallSpec): Promise<RawResponse> {
    // 0 = no limit (a model load takes minutes; undici's 300 s defaults would cut it off).
    const timeoutMs = spec.timeoutMs ?? this.#requestTimeoutMs;
    const headers: Record<string, string> = { ...this.#headers, ...(spec.headers ?? {}) };
    if (spec.admin && this.#adminKey) headers[this.#adminHeader] = this.#adminKey;
    const base = { operation: spec.op, url: this.baseUrl, ...(spec.model !== undefined ? { model: spec.model } : {}) };
    let status: number;
    let resHeaders: Record<string, string | string[] | undefined>;
    let body: Buffer;
    try {
      const res = await request(spec.url ?? `${this.baseUrl}${spec.path}`, {
        dispatcher: this.#dispatcher, method: spec.method, headers, body: spec.body, signal: spec.signal,
        headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
      });
      status = res.statusCode;
      resHeaders = res.headers;
      body = Buffer.from(await res.body.arrayBuffer());
    } catch (e) {
      if (isUndiciTimeout(e)) {
        throw new TritonError('timeout', `Triton did not answer the ${spec.op} request within ${timeoutMs} ms.`, { ...base, timeoutMs }, { cause: e });
      }
      throw classifyTritonFailure({ ...base, cause: spec.signal?.aborted ? abortError() : e });
    }
    if (spec.expectOk && (status < 200 || status >= 300)) {
      throw classifyTritonFailure({ ...base, status, serverMessage: serverErrorText(body.toString('utf8')) });
    }
    return { status, headers: resHeaders, body };
  }

  /** Keeps the admin key out of console.log / util.inspect output. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `TritonClient(${this.baseUrl}${this.#adminKey ? ', admin key set' : ''})`;
  }
}

function isUndiciTimeout(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}

function modelPath(model: string, version?: string): string {
  return `/v2/models/${encodeName(model)}${version ? `/versions/${encodeName(version)}` : ''}`;
}

function abortError(): Error {
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) { reject(abortError()); return; }
    const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(t); reject(abortError()); };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
