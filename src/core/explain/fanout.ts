// Runs one request per item with at most `concurrency` in flight. Sending the
// selections concurrently is what lets Triton's dynamic batcher merge them; the bound keeps a 200-cursor
// selection from filling the server's queue. One item's failure never affects the others.

export type FanoutOutcome<R> =
  | { status: 'fulfilled'; value: R }
  | { status: 'rejected'; error: unknown }
  /** Never started because the whole run was cancelled first. */
  | { status: 'skipped' };

export interface FanoutOptions {
  concurrency: number;
  signal?: AbortSignal;
  /** Called when an item settles (in completion order), e.g. to advance a progress bar. */
  onSettled?: (index: number, outcome: FanoutOutcome<unknown>) => void;
}

/**
 * Starts items in input order, never more than `concurrency` at once, and resolves with one outcome per item in
 * input order. Never rejects: errors stay with their item. After `signal` aborts, no further item starts (the
 * running ones get the same signal and are expected to stop).
 */
export async function fanout<T, R>(
  items: readonly T[],
  worker: (item: T, index: number, signal: AbortSignal | undefined) => Promise<R>,
  options: FanoutOptions,
): Promise<FanoutOutcome<R>[]> {
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${options.concurrency}`);
  }
  const outcomes: FanoutOutcome<R>[] = items.map(() => ({ status: 'skipped' }));
  let next = 0;
  const runLane = async (): Promise<void> => {
    while (next < items.length && !options.signal?.aborted) {
      const index = next++;
      let outcome: FanoutOutcome<R>;
      try {
        outcome = { status: 'fulfilled', value: await worker(items[index] as T, index, options.signal) };
      } catch (error) {
        outcome = { status: 'rejected', error };
      }
      outcomes[index] = outcome;
      try {
        options.onSettled?.(index, outcome);
      } catch {
        // A progress callback must not turn one item's result into a failure of the whole run.
      }
    }
  };
  const lanes = Math.min(options.concurrency, items.length);
  await Promise.all(Array.from({ length: lanes }, runLane));
  return outcomes;
}
