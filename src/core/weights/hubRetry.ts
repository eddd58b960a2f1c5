// One retry policy for every request to the Hub — the model info, each page of the file list and each file: which
// failures are retried (the network, a timeout, 429 and 5xx), how long to wait (exponential backoff, or the
// server's Retry-After in seconds or as an HTTP date, never past a cap), how long a request may go without an
// answer, and the words for what timed out.
import { sleep } from '../util/abort';
import { DownloadError, isAbort } from './downloadErrors';

export interface RetryPolicy {
  /** Failures in a row (without a byte of progress between them, for files) before giving up. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** The longest wait a Retry-After may ask for; a longer one is cut to this. */
  retryAfterMaxMs?: number;
  /** A request that answers nothing for this long (no headers, or no body bytes) is dropped and retried. */
  timeoutMs?: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 1000, maxDelayMs: 30_000, retryAfterMaxMs: 120_000, timeoutMs: 60_000 };

export function timeoutOf(policy: RetryPolicy): number {
  return policy.timeoutMs ?? DEFAULT_RETRY.timeoutMs!;
}

/** A Retry-After header as milliseconds from `now`: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date has a weekday, a day, a month name and a time (IMF-fixdate or the obsolete forms).
  if (!/[A-Za-z]{3}.*\d{1,2}:\d{2}:\d{2}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The wait before the next try: the backoff, or longer when the server asked for it, never past the cap. */
export function retryDelayMs(policy: RetryPolicy, failures: number, retryAfterMs?: number): number {
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failures - 1));
  if (retryAfterMs === undefined) return backoff;
  return Math.min(policy.retryAfterMaxMs ?? DEFAULT_RETRY.retryAfterMaxMs!, Math.max(backoff, retryAfterMs));
}

/** An answer worth another try (429, 5xx, a cut body), with the wait the server asked for. */
export class RetryableError extends Error {
  constructor(message: string, readonly retryAfterMs?: number, readonly status?: number) {
    super(message);
  }
}

/** 429 and 5xx are worth another try; every other status is the answer. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

export function isTimeout(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return e.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

export function isNetworkError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  if (isTimeout(e)) return true;
  const code = (e as { code?: unknown }).code ?? (e.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('UND_ERR') || ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND', 'ENETUNREACH', 'EHOSTUNREACH'].includes(code))
    || e.message === 'terminated' || e.message === 'fetch failed' || e.message.includes('other side closed');
}

/** What went wrong, in words: a timeout says after how long, a network error its cause. */
export function failureReason(e: unknown, timeoutMs: number): string {
  if (isTimeout(e)) return `no answer within ${formatSeconds(timeoutMs)}`;
  const err = e as Error & { cause?: { code?: unknown; message?: unknown } };
  const cause = err.cause && typeof err.cause.message === 'string' ? err.cause.message : undefined;
  return cause && err.message === 'fetch failed' ? cause : err.message;
}

export function formatSeconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

export interface RetryInfo {
  /** What is being fetched: a file's path, or "the file list" / "the model info". */
  file: string;
  attempt: number;
  delayMs: number;
  reason: string;
}

/**
 * Runs `attempt` until it succeeds, fails with something not worth retrying, or fails `policy.attempts` times in a
 * row; each try gets a signal that ends it after the policy's timeout. The last failure becomes a `network` error
 * saying what failed, how often and why (a timeout: after how long).
 */
export async function withRetries<T>(
  what: string, policy: RetryPolicy, signal: AbortSignal | undefined, onRetry: ((info: RetryInfo) => void) | undefined,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const timeoutMs = timeoutOf(policy);
  for (let failures = 1; ; failures++) {
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await attempt(signal ? AbortSignal.any([signal, timeout]) : timeout);
    } catch (e) {
      if (signal?.aborted) throw signal.reason ?? e;
      if (isAbort(e) && !timeout.aborted) throw e;
      const timedOut = timeout.aborted || isTimeout(e);
      if (!timedOut && !(e instanceof RetryableError) && !isNetworkError(e)) throw e;
      const reason = timedOut ? `no answer within ${formatSeconds(timeoutMs)}` : failureReason(e, timeoutMs);
      if (failures >= policy.attempts) {
        const status = e instanceof RetryableError ? e.status : undefined;
        throw new DownloadError(status ? 'hub-error' : 'network', `${what}: ${reason}${failures > 1 ? ` (${failures} tries in a row)` : ''}.`,
          { ...(timedOut ? { timeoutMs } : {}), ...(status ? { status } : {}) });
      }
      const delayMs = retryDelayMs(policy, failures, e instanceof RetryableError ? e.retryAfterMs : undefined);
      onRetry?.({ file: what, attempt: failures, delayMs, reason });
      await sleep(delayMs, signal);
    }
  }
}
