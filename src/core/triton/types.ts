// What the Triton client is configured with and what its calls take and return (KServe v2 + Triton extensions).

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
  /** Limit for short calls (health, index, unload, stats...), ms. Default 30 000; 0 = none. */
  requestTimeoutMs?: number;
  /** Trust these CA certificates (PEM) for an https URL instead of Node's bundled ones (a team proxy's own CA). */
  ca?: string;
  /** Use this dispatcher instead of creating an Agent (it is then not closed by close()). */
  dispatcher?: import('undici').Dispatcher;
}

export type ModelState = 'UNKNOWN' | 'READY' | 'UNAVAILABLE' | 'LOADING' | 'UNLOADING';

/** One row of POST /v2/repository/index. A model never loaded since server start has only `name`. */
export interface RepositoryIndexEntry {
  name: string;
  version?: string;
  state?: ModelState;
  reason?: string;
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
