// HTTP client for Triton Inference Server over one keep-alive undici Agent: health, the model repository
// (index, load, unload, wait for a state), readiness, statistics, metrics and generation. Every failure becomes a
// TritonError (see errors.ts). The admin key travels only on the APIs Triton restricts with it (model-repository,
// model-config) and is kept in a private field so it never shows up in logs.
import { Agent, request, type Dispatcher } from 'undici';
import { abortError, sleep } from '../util/abort';
import { classifyTritonFailure, serverErrorText, TritonError, type TritonOperation } from './errors';
import { generateStream } from './generateStream';
import { parsePrometheusText, type ParsedMetrics } from './prometheus';
import type { ModelStatistics } from './statistics';
import type {
  CallOptions, LoadOptions, LoadProgress, ModelState, RepositoryIndexEntry, StreamOptions, TritonClientOptions, WaitForStateOptions,
} from './types';


export const DEFAULT_ADMIN_HEADER = 'x-triton-admin';
/** How long the health check after a cut stream may take: a server that does not answer by then counts as gone. */
const CUT_HEALTH_TIMEOUT_MS = 2_000;

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request as `call` sends it. */
export interface CallSpec {
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
      this.#dispatcher = new Agent({
        connections: options.connections ?? 32, keepAliveTimeout: 30_000, pipelining: 1,
        // Certificates are always verified; a pinned CA replaces the default roots, it never turns checking off.
        ...(options.ca ? { connect: { ca: options.ca, rejectUnauthorized: true } } : {}),
      });
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

  // ---- health -------------------------------------------------------------------------------------------

  /** True when /v2/health/live answers 200; false when it answers otherwise or nothing is listening. */
  async isLive(options: CallOptions = {}): Promise<boolean> {
    return this.healthCheck('/v2/health/live', options);
  }

  protected async healthCheck(path: string, options: CallOptions): Promise<boolean> {
    try {
      const res = await this.call({ op: 'health', method: 'GET', path, ...options });
      return res.status === 200;
    } catch (e) {
      if (e instanceof TritonError && (e.code === 'server-not-running' || e.code === 'timeout')) return false;
      throw e;
    }
  }

  // ---- model repository ---------------------------------------------------------------------------------

  async repositoryIndex(options: CallOptions = {}): Promise<RepositoryIndexEntry[]> {
    return this.json<RepositoryIndexEntry[]>({
      op: 'repository-index', method: 'POST', path: '/v2/repository/index', admin: true,
      body: '{}', headers: { 'content-type': 'application/json' }, ...options,
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
    const stopProgress = options.onProgress ? this.reportLoadProgress(model, options.onProgress, options.progressIntervalMs ?? 1_000) : undefined;
    try {
      await this.call({
        op: 'load', method: 'POST', path: `/v2/repository/models/${encodeName(model)}/load`, model, admin: true,
        signal: options.signal, timeoutMs: options.timeoutMs ?? 0, expectOk: true,
      });
    } finally {
      stopProgress?.();
    }
  }

  /** Polls the index for `model` while a load runs; returns the function that stops it. */
  private reportLoadProgress(model: string, onProgress: (progress: LoadProgress) => void, intervalMs: number): () => void {
    const started = Date.now();
    let stopped = false;
    let polling = false;
    const poll = async () => {
      if (polling) return;
      polling = true;
      try {
        const row = await this.modelState(model, { timeoutMs: 5_000 });
        const progress: LoadProgress = { elapsedMs: Date.now() - started };
        if (row?.state) progress.state = row.state;
        if (row?.reason) progress.reason = row.reason;
        if (!stopped) onProgress(progress);
      } catch { /* progress is best effort; the load call reports the real outcome */ } finally {
        polling = false;
      }
    };
    const timer = setInterval(() => void poll(), intervalMs);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }

  /** Starts unloading; returns at once (Triton unloads in the background). Use waitForState for UNAVAILABLE. */
  async unloadModel(model: string, options: CallOptions = {}): Promise<void> {
    await this.call({
      op: 'unload', method: 'POST', path: `/v2/repository/models/${encodeName(model)}/unload`, model, admin: true,
      body: '{}', headers: { 'content-type': 'application/json' }, ...options, expectOk: true,
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
    const res = await this.call({ op: 'model-ready', method: 'GET', path: `${modelPath(model, version)}/ready`, model, ...call });
    return res.status === 200;
  }

  /** Statistics of one model (all versions), or of every model when `model` is omitted. */
  async modelStatistics(model?: string, options: CallOptions & { version?: string } = {}): Promise<ModelStatistics[]> {
    const { version, ...call } = options;
    const path = model ? `${modelPath(model, version)}/stats` : '/v2/models/stats';
    const body = await this.json<{ model_stats?: ModelStatistics[] }>({ op: 'statistics', method: 'GET', path, ...(model ? { model } : {}), ...call });
    return body.model_stats ?? [];
  }

  /** The final model configuration as JSON (protobuf field names). Needs the admin key when model-config is restricted. */
  async modelConfig(model: string, options: CallOptions & { version?: string } = {}): Promise<Record<string, unknown>> {
    const { version, ...call } = options;
    return this.json({ op: 'model-config', method: 'GET', path: `${modelPath(model, version)}/config`, model, admin: true, ...call });
  }

  // ---- generation -----------------------------------------------------------------------------------------

  // No /generate: on a streaming (decoupled) model Triton answers it with HTTP 200 and an error while the model
  // generates the whole answer anyway; /generate_stream serves both transaction policies (chatglm.ts, chatOnce).

  /**
   * POST /generate_stream: yields each SSE event's JSON object (see generateStream.ts). Aborting the signal,
   * breaking out of the loop or an idle timeout closes the connection, which makes Triton cancel the request.
   */
  generateStream(model: string, body: Record<string, unknown>, options: StreamOptions = {}): AsyncGenerator<Record<string, unknown>, void, undefined> {
    return generateStream({
      dispatcher: this.#dispatcher, url: `${this.baseUrl}${modelPath(model)}/generate_stream`, baseUrl: this.baseUrl, model, headers: this.#headers,
      isLive: () => this.isLive({ timeoutMs: CUT_HEALTH_TIMEOUT_MS }),
    }, body, options);
  }

  // ---- metrics --------------------------------------------------------------------------------------------

  async metricsText(options: CallOptions = {}): Promise<string> {
    if (!this.metricsUrl) throw new TritonError('unexpected', 'No metrics URL configured for this Triton client.', { operation: 'metrics' });
    const res = await this.call({ op: 'metrics', method: 'GET', path: '', url: this.metricsUrl, ...options, expectOk: true });
    return res.body.toString('utf8');
  }

  async metrics(options: CallOptions = {}): Promise<ParsedMetrics> {
    return parsePrometheusText(await this.metricsText(options));
  }

  /**
   * A GET of another path of this server with the client's headers, CA and timeout, for the team proxy's replica
   * list and readiness (src/core/team/replicaHealth.ts). An HTTP error status is returned, not thrown.
   */
  async getText(path: string, options: CallOptions = {}): Promise<{ status: number; text: string }> {
    if (!path.startsWith('/')) throw new Error(`not a path on the server: ${path}`);
    const res = await this.call({ op: 'health', method: 'GET', path, ...options });
    return { status: res.status, text: res.body.toString('utf8') };
  }

  // ---- plumbing -------------------------------------------------------------------------------------------

  /** One request whose answer is JSON. */
  protected async json<T>(spec: CallSpec): Promise<T> {
    const res = await this.call({ ...spec, expectOk: true });
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
  protected async call(spec: CallSpec): Promise<RawResponse> {
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

const encodeName = (name: string): string => encodeURIComponent(name);

export function modelPath(model: string, version?: string): string {
  return `/v2/models/${encodeName(model)}${version ? `/versions/${encodeName(version)}` : ''}`;
}
