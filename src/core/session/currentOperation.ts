// The start or load in progress. One at a time: a newer one cancels the older, and so do a stop, an unload and a
// crash (abort). Its progress is shown by the front end (SessionUi.progress), which also lets the person cancel.
import { isCancellation } from './observe';
import type { ProgressReport, SessionOperation, SessionUi } from './ports';

export interface OperationOutcome {
  /** It was cancelled (by abort, a newer operation or the person): undo what it did. */
  cancelled(): Promise<void>;
  /** It failed: record why (the error is thrown on). */
  failed(error: unknown): void;
}

export class CurrentOperation {
  private controller: AbortController | undefined;

  constructor(private readonly ui: SessionUi, private readonly onEnd: () => void) {}

  /** Cancels the operation in progress, if any. */
  abort(): void {
    this.controller?.abort();
  }

  /** Runs `task` as the current operation. Resolves undefined when it was cancelled; a failure is recorded, then thrown. */
  async run<T>(
    operation: SessionOperation,
    task: (report: ProgressReport, signal: AbortSignal) => Promise<T>,
    outcome: OperationOutcome,
  ): Promise<T | undefined> {
    this.controller?.abort();
    const op = new AbortController();
    this.controller = op;
    try {
      return await this.ui.progress(operation, task, op.signal);
    } catch (e) {
      if (op.signal.aborted || isCancellation(e)) {
        await outcome.cancelled();
        return undefined;
      }
      outcome.failed(e);
      throw e;
    } finally {
      if (this.controller === op) this.controller = undefined;
      this.onEnd();
    }
  }
}
