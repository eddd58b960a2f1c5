// Debounce + cancel-previous: a new keystroke aborts the request before it (its stream is closed, so the server
// cancels it and frees its row), then waits the debounce; only a pause in typing reaches the server.
import { sleep } from '../util/abort';

export class RequestGate {
  private current: AbortController | undefined;
  private started = 0;
  private cancelled = 0;

  /**
   * Starts a new request: aborts the previous one, waits `debounceMs` (rejecting with an AbortError when a newer
   * request or `outer` aborts first) and returns the signal the request runs under.
   */
  async begin(debounceMs: number, outer?: AbortSignal): Promise<AbortSignal> {
    this.cancelPrevious();
    const ctrl = new AbortController();
    this.current = ctrl;
    if (outer) {
      if (outer.aborted) ctrl.abort(outer.reason);
      else outer.addEventListener('abort', () => ctrl.abort(outer.reason), { once: true, signal: ctrl.signal });
    }
    if (debounceMs > 0) await sleep(debounceMs, ctrl.signal);
    else if (ctrl.signal.aborted) throw ctrl.signal.reason instanceof Error ? ctrl.signal.reason : new DOMException('aborted', 'AbortError');
    this.started += 1;
    return ctrl.signal;
  }

  /** Aborts the request in flight (a keystroke, the toggle turned off, the window closing). */
  cancelPrevious(): void {
    if (this.current && !this.current.signal.aborted) {
      this.current.abort();
      this.cancelled += 1;
    }
    this.current = undefined;
  }

  /** The request under `signal` is over: it no longer counts as in flight. */
  finish(signal: AbortSignal): void {
    if (this.current?.signal === signal) this.current = undefined;
  }

  /** Requests that got past the debounce, and requests aborted by a newer one (or by cancelPrevious). */
  get counts(): { started: number; cancelled: number } {
    return { started: this.started, cancelled: this.cancelled };
  }
}
