// Explain's answers fail in comment threads, which have no buttons: when they fail because our container exited,
// one notification says so and offers Start Server and the logs — one at a time, not one per selection.
import { errorText, presentError, showWithActions } from '../errors/presentError';

export class ExitNotice {
  private shown: Promise<void> | undefined;

  /** Shows `cause` with its actions when it is a container exit and no such notice is open; anything else: nothing. */
  offer(cause: unknown): void {
    const p = presentError(cause);
    if (p.code !== 'container-exited' || this.shown) return;
    this.shown = showWithActions(errorText(p), p).finally(() => { this.shown = undefined; });
  }
}
