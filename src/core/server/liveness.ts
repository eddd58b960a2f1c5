// Waits for tritonserver's HTTP endpoint: GET /v2/health/live with exponential backoff up to a deadline.
// Kept local and minimal (global fetch = undici) so the container layer does not depend on the full client.
import { sleep } from '../util/abort';
import { ServerError } from './errors';

export interface LivenessOptions {
  deadlineMs: number;
  signal?: AbortSignal;
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Called between attempts; throw to give up early (e.g. the container exited). */
  between?: () => Promise<void>;
}

export async function isLive(baseUrl: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const res = await fetch(`${baseUrl}/v2/health/live`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

export async function waitForLive(baseUrl: string, opts: LivenessOptions): Promise<void> {
  const deadline = Date.now() + opts.deadlineMs;
  let delay = opts.initialDelayMs ?? 200;
  const maxDelay = opts.maxDelayMs ?? 2000;
  for (;;) {
    throwIfAborted(opts.signal);
    if (await isLive(baseUrl)) return;
    await opts.between?.();
    if (Date.now() + delay > deadline) {
      throw new ServerError({
        code: 'liveness-timeout',
        message: `Triton did not answer on ${baseUrl} within ${Math.round(opts.deadlineMs / 1000)} s.`,
        fix: 'Read the container log; a slow disk or a first start can take longer: raise the start timeout and retry.',
      });
    }
    await sleep(delay, opts.signal).catch(() => throwIfAborted(opts.signal));
    delay = Math.min(maxDelay, delay * 2);
  }
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new ServerError({ code: 'cancelled', message: 'Cancelled.', fix: 'Start the server again when ready.' });
}
