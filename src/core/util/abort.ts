// Waiting and aborting, spelled once for the whole core: an aborted wait rejects with an AbortError (the name
// and code fetch, undici and Node use), so every caller tells "cancelled" apart from "failed" the same way.
import { setTimeout as delay } from 'node:timers/promises';

/** Waits `ms`; when `signal` aborts (or already has), rejects at once with an AbortError and clears the timer. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, signal ? { signal } : undefined);
}

/** The error a cancelled operation fails with. */
export function abortError(): Error {
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}
