// Typed Triton failures. Core code never shows text to people directly: each error carries a stable `code`
// (the VS Code layer localizes by code), an English message, and the server's own text verbatim in `details`.

export type TritonErrorCode =
  | 'server-not-running'
  /** A stream was cut while the server kept running (a proxy, a network drop): asking again can work. */
  | 'connection-lost'
  | 'model-not-loaded'
  | 'model-load-failed'
  | 'server-busy'
  /** A device fault stopped the model (model.py: "the model failed: ... reload it"): only a fresh load helps. */
  | 'model-failed'
  | 'invalid-request'
  | 'timeout'
  | 'cancelled'
  | 'unauthorized'
  /** A team proxy (docs/TEAM.md) refused the API key: none was sent, or it is unknown or revoked. */
  | 'key-rejected'
  /** A team proxy does not pass this API on (model control and the other admin APIs). */
  | 'forbidden'
  /** A team proxy found no replica to answer (502/503/504): another try may reach a healthy one. */
  | 'replica-failed'
  | 'unexpected';

/** Which client call failed; classification depends on it (a 400 from a load is a load failure, not bad input). */
export type TritonOperation =
  | 'health'
  | 'metadata'
  | 'repository-index'
  | 'load'
  | 'unload'
  | 'model-ready'
  | 'model-config'
  | 'model-metadata'
  | 'infer'
  | 'generate'
  | 'generate-stream'
  | 'statistics'
  | 'metrics';

export interface TritonErrorDetails {
  operation: TritonOperation;
  model?: string;
  /** HTTP status, when the server answered. */
  status?: number;
  /** The server's `{"error": ...}` text (or raw body), verbatim. */
  serverMessage?: string;
  /** Network-level error code (ECONNREFUSED, UND_ERR_SOCKET, ...), when the server did not answer. */
  networkCode?: string;
  /** Base URL of the server (never includes headers or keys). */
  url?: string;
  /** True when the error arrived as an SSE `error` event inside a 200 stream. */
  inStream?: boolean;
  /** For timeouts: the limit that was exceeded, in milliseconds. */
  timeoutMs?: number;
  /** For a connection cut: whether the server answered its health check afterwards (how the cut was classified). */
  serverLive?: boolean;
}

export class TritonError extends Error {
  override readonly name = 'TritonError';
  constructor(
    readonly code: TritonErrorCode,
    message: string,
    readonly details: TritonErrorDetails,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Plain data (for logs, the CLI's --json output and the webview protocol). */
  toJSON(): { code: TritonErrorCode; message: string; details: TritonErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export function isTritonError(e: unknown, code?: TritonErrorCode): e is TritonError {
  return e instanceof TritonError && (code === undefined || e.code === code);
}

/** What went wrong, as observed by the client; the input of the pure classifier below. */
export interface TritonFailure {
  operation: TritonOperation;
  model?: string;
  url?: string;
  status?: number;
  serverMessage?: string;
  inStream?: boolean;
  /** A thrown network/abort error (undici or Node). */
  cause?: unknown;
}

// Connection-level failures that mean "nothing is answering at that address" (or it went away mid-request).
const NOT_RUNNING_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_DESTROYED',
]);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
/**
 * Of those, the ones where a connection existed and was cut (reset, closed by the other side): the server may be
 * dead or something between us may have dropped it; only asking the server tells which (see connectionCut).
 */
const CUT_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** Error code of a thrown network error, looking through `cause` chains and AggregateErrors (happy eyeballs). */
export function networkErrorCode(e: unknown): string | undefined {
  const seen = new Set<unknown>();
  let cur: unknown = e;
  while (cur && typeof cur === 'object' && !seen.has(cur)) {
    seen.add(cur);
    const rec = cur as { code?: unknown; name?: unknown; errors?: unknown; cause?: unknown };
    if (rec.name === 'AbortError' || rec.code === 'ABORT_ERR' || rec.code === 'UND_ERR_ABORTED') return 'ABORT_ERR';
    if (typeof rec.code === 'string' && (NOT_RUNNING_CODES.has(rec.code) || TIMEOUT_CODES.has(rec.code))) return rec.code;
    if (Array.isArray(rec.errors) && rec.errors.length > 0) {
      const inner = networkErrorCode(rec.errors[0]);
      if (inner) return inner;
    }
    cur = rec.cause;
  }
  const top = e as { code?: unknown } | undefined;
  return typeof top?.code === 'string' ? top.code : undefined;
}

// Triton's own texts (core + http_server.cc + python backend), matched loosely so versions may differ in wording.
const QUEUE_FULL = /exceeds maximum queue size|queue is full|maximum queue size/i;
// model.py after a device fault (chatglm/serving/faults.py): every request is refused with this until a reload.
const MODEL_FAILED = /^the model failed:/i;
const RESTRICTED = /this api is restricted|expecting header/i;
const MODEL_NOT_LOADED = /unknown model|has no available versions|is not at ready state|model version not ready|is not ready|is not available|not found/i;
// Failures the model reports as INTERNAL (model.py's wording, CUDA): inside a stream the status code is lost.
const MODEL_INTERNAL = /^(generation failed|could not prepare|generation ended without)|out of memory|CUDA error|Internal:/i;
// Triton's JSON-to-tensor conversion (HTTP 500 although the request is at fault), e.g. temperature: null.
const BAD_JSON_INPUT = /unable to parse '[^']*'|attempt to access JSON|unexpected inference input|data-type is '|unexpected shape for input|expected \d+ inputs|expected number of inputs|unexpected number of string elements|byte size mismatch/i;
// Streaming on/off does not match how the client calls the model.
const WRONG_ENDPOINT = /generate expects model to produce exactly 1 response|doesn't support models with decoupled transaction policy/i;
const CANCELLED = /\bcancell?ed\b/i;
/** How the team proxy's own answers begin (src/core/team/nginxConf.ts PROXY_ERROR_PREFIX). */
export const TEAM_PROXY_PREFIX = 'team proxy:';

/**
 * Maps an observed failure to a typed error. Pure: the same input always gives the same code and message.
 * Order matters: network errors first (no status), then status-specific and message-specific rules.
 */
export function classifyTritonFailure(f: TritonFailure): TritonError {
  const details: TritonErrorDetails = { operation: f.operation };
  if (f.model !== undefined) details.model = f.model;
  if (f.url !== undefined) details.url = f.url;
  if (f.status !== undefined) details.status = f.status;
  if (f.serverMessage !== undefined) details.serverMessage = f.serverMessage;
  if (f.inStream) details.inStream = true;
  const where = f.url ? ` at ${f.url}` : '';
  const model = f.model ? `'${f.model}'` : 'the model';
  const server = f.serverMessage?.trim() ?? '';
  const make = (code: TritonErrorCode, message: string) => new TritonError(code, message, details, { cause: f.cause });

  if (f.status === undefined && f.cause !== undefined) {
    const code = networkErrorCode(f.cause);
    if (code) details.networkCode = code;
    if (code === 'ABORT_ERR') return make('cancelled', 'The request was cancelled.');
    if (code && TIMEOUT_CODES.has(code)) return make('timeout', `Triton did not answer in time${where}.`);
    if (code && NOT_RUNNING_CODES.has(code)) {
      return make('server-not-running', `Cannot reach Triton Inference Server${where} (${code}). Is the server running?`);
    }
    const msg = f.cause instanceof Error ? f.cause.message : String(f.cause);
    return make('unexpected', `Request to Triton failed${where}: ${msg}`);
  }

  if (f.status !== undefined && server.startsWith(TEAM_PROXY_PREFIX)) {
    const said = server.slice(TEAM_PROXY_PREFIX.length).trim();
    if (f.status === 401) return make('key-rejected', `The team server refused the API key: ${said}`);
    if (f.status === 403) return make('forbidden', `The team server does not allow this ${f.operation} request: ${said}`);
    if (f.status >= 500) return make('replica-failed', `The team server could not answer (HTTP ${f.status}): ${said}`);
  }
  if (f.status === 403 || f.status === 401 || RESTRICTED.test(server)) {
    return make('unauthorized', `Triton refused the ${f.operation} request: this API needs the admin key. ${server}`.trim());
  }
  if (MODEL_FAILED.test(server)) {
    return make('model-failed', `${f.model ? `Model '${f.model}'` : 'The model'} failed and stopped accepting requests; reload it. (${server})`);
  }
  if (QUEUE_FULL.test(server)) {
    // The model's own bound ("server busy: the waiting queue is full") or, for a larger burst, Triton's queue.
    return make('server-busy', `The request queue for ${model} is full; try again when current requests finish. (${server})`);
  }
  if (f.operation === 'load') {
    return make('model-load-failed', `Loading ${model} failed: ${server || `HTTP ${f.status ?? '?'}`}`);
  }
  if (CANCELLED.test(server) && !f.inStream) {
    return make('cancelled', `The request was cancelled: ${server}`);
  }
  if (!f.inStream && f.operation !== 'repository-index' && f.operation !== 'unload' && MODEL_NOT_LOADED.test(server)) {
    return make('model-not-loaded', `${f.model ? `Model '${f.model}'` : 'The model'} is not loaded. (${server})`);
  }
  if (f.status === 503) {
    return make('server-busy', `Triton is unavailable or overloaded (HTTP 503). ${server}`.trim());
  }
  const inference = f.operation === 'infer' || f.operation === 'generate' || f.operation === 'generate-stream';
  if (inference && WRONG_ENDPOINT.test(server)) {
    return make('unexpected', `${f.model ? `Model '${f.model}'` : 'The model'} cannot answer this way; its streaming setting does not match the request: ${server}`);
  }
  if (inference && BAD_JSON_INPUT.test(server)) {
    return make('invalid-request', `${f.model ? `Model '${f.model}'` : 'The model'} rejected the request: ${server}`);
  }
  if (inference && (f.status === 400 || f.status === 422 || (f.inStream && f.status === 200 && !MODEL_INTERNAL.test(server)))) {
    // 400 from an inference call is INVALID_ARG (the model or Triton's input checks); a mid-stream error event
    // is the model rejecting this one request after the stream started.
    return make('invalid-request', `${f.model ? `Model '${f.model}'` : 'The model'} rejected the request: ${server}`);
  }
  return make('unexpected', `Triton ${f.operation} failed${f.status ? ` (HTTP ${f.status})` : ''}: ${server || 'no error message'}`);
}

/**
 * A request whose connection was cut is classified `server-not-running` by the rules above, since nothing else is
 * known at that moment. After asking the server's health: a live server means the connection was lost on the way
 * (`connection-lost`, worth retrying); a dead one stays `server-not-running`. Other errors are returned unchanged.
 */
export async function classifyCut(error: TritonError, serverIsLive: () => Promise<boolean>): Promise<TritonError> {
  if (error.code !== 'server-not-running' || !CUT_CODES.has(error.details.networkCode ?? '')) return error;
  const live = await serverIsLive().catch(() => false);
  const details: TritonErrorDetails = { ...error.details, serverLive: live };
  if (!live) return new TritonError(error.code, error.message, details, { cause: error.cause });
  const where = details.url ? ` to Triton at ${details.url}` : ' to Triton';
  return new TritonError('connection-lost', `The connection${where} was lost (${details.networkCode}); the server is still running.`, details, { cause: error.cause });
}

/**
 * Triton's error bodies are `{"error": "..."}`; /generate_stream frames a first-response error as an SSE event
 * (`data: {"error": ...}`) even with a 400 status. Anything else is returned as raw text.
 */
export function serverErrorText(body: string): string {
  let trimmed = body.trim();
  if (!trimmed) return '';
  if (trimmed.startsWith('data:')) trimmed = trimmed.slice(5).split(/\r?\n\r?\n/)[0]!.trim();
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (parsed && typeof parsed === 'object' && typeof (parsed as { error?: unknown }).error === 'string') {
      return (parsed as { error: string }).error;
    }
  } catch { /* not JSON: keep the raw text */ }
  return trimmed.length > 2000 ? `${trimmed.slice(0, 2000)}…` : trimmed;
}
