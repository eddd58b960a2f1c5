// POST /generate_stream as an async iterator of Triton's SSE events. The one place that ties a request to the
// caller's AbortSignal and to the idle timer: when either fires, or the caller leaves the loop, the connection is
// closed, which is how Triton learns to cancel the request. A connection cut on the way is told apart from a dead
// server by asking the server's health right after the cut (errors.ts, classifyCut).
import { request, type Dispatcher } from 'undici';
import { abortError } from '../util/abort';
import { classifyCut, classifyTritonFailure, serverErrorText, TritonError, type TritonOperation } from './errors';
import { SseParser } from './sse';
import type { StreamOptions } from './types';

export interface StreamTarget {
  dispatcher: Dispatcher;
  /** Full URL of the model's generate_stream endpoint. */
  url: string;
  /** The server's base URL and the model, for the errors. */
  baseUrl: string;
  model: string;
  headers: Record<string, string>;
  /** Whether the server answers its health check now: decides if a cut connection was lost or the server died. */
  isLive?: () => Promise<boolean>;
}

const OP: TritonOperation = 'generate-stream';

/** Yields each event's JSON object; an `{"error": ...}` event throws a TritonError (`inStream`). */
export async function* generateStream(target: StreamTarget, body: Record<string, unknown>, options: StreamOptions = {}): AsyncGenerator<Record<string, unknown>, void, undefined> {
  const where = { operation: OP, model: target.model, url: target.baseUrl };
  const ctrl = new AbortController();
  const userSignal = options.signal;
  if (userSignal?.aborted) throw classifyTritonFailure({ ...where, cause: abortError() });
  const onAbort = () => ctrl.abort(userSignal?.reason);
  userSignal?.addEventListener('abort', onAbort, { once: true });
  const idle = idleTimer(options.idleTimeoutMs ?? 0, () => ctrl.abort());
  let res: Dispatcher.ResponseData | undefined;
  let finished = false;
  const fail = (cause: unknown): TritonError => {
    if (cause instanceof TritonError) return cause;
    if (idle.fired) {
      return new TritonError('timeout', `Triton sent nothing for ${idle.ms} ms; the request was cancelled.`, { ...where, timeoutMs: idle.ms }, { cause });
    }
    return classifyTritonFailure({ ...where, cause: userSignal?.aborted ? abortError() : cause });
  };
  const failAfterCut = async (cause: unknown): Promise<TritonError> => {
    const error = fail(cause);
    return target.isLive ? classifyCut(error, target.isLive) : error;
  };
  idle.arm();
  try {
    try {
      res = await request(target.url, {
        dispatcher: target.dispatcher, method: 'POST', signal: ctrl.signal,
        headers: { ...target.headers, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(body), headersTimeout: 0, bodyTimeout: 0,
      });
    } catch (e) {
      throw await failAfterCut(e);
    }
    if (res.statusCode !== 200) {
      const text = await res.body.text().catch(() => '');
      throw classifyTritonFailure({ ...where, status: res.statusCode, serverMessage: serverErrorText(text) });
    }
    const parser = new SseParser();
    try {
      for await (const chunk of res.body) {
        idle.arm();
        for (const ev of parser.push(chunk as Buffer)) {
          // One chunk can hold several events: after an abort, deliver none of the rest.
          if (ctrl.signal.aborted) throw fail(abortError());
          yield eventObject(ev.data, where);
        }
      }
    } catch (e) {
      throw await failAfterCut(e);
    }
    for (const ev of parser.end()) {
      if (ctrl.signal.aborted) throw fail(abortError());
      yield eventObject(ev.data, where);
    }
    finished = true;
  } finally {
    idle.clear();
    userSignal?.removeEventListener('abort', onAbort);
    // Leaving early (error, break, abort): close the connection so the server cancels the request.
    if (!finished && res && !res.body.destroyed) res.body.destroy();
  }
}

/** Fires `onIdle` once no `arm()` came for `ms` (0 = never). */
function idleTimer(ms: number, onIdle: () => void) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const state = {
    ms,
    fired: false,
    arm() {
      if (ms <= 0) return;
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(() => { state.fired = true; onIdle(); }, ms);
    },
    clear() {
      if (timer !== undefined) clearTimeout(timer);
    },
  };
  return state;
}

function eventObject(data: string, where: { operation: TritonOperation; model: string; url: string }): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new TritonError('unexpected', `Triton sent a malformed stream event: ${data.slice(0, 200)}`, { ...where, status: 200 });
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new TritonError('unexpected', `Triton sent a stream event that is not an object: ${data.slice(0, 200)}`, { ...where, status: 200 });
  }
  const event = parsed as Record<string, unknown>;
  if (event.error !== undefined) {
    throw classifyTritonFailure({ ...where, status: 200, inStream: true, serverMessage: String(event.error) });
  }
  return event;
}
