// OpenAI's `stop`: the answer ends before the first stop sequence to complete, which is never sent. The
// model knows no stop strings, so the adapter watches the streamed text: it holds back the tail that could still
// become a stop sequence, and says when one appeared (the caller then cancels the request on the server).

export interface StopStep {
  /** Text that can be sent now. */
  text: string;
  /** A stop sequence appeared: the answer is complete with the text sent so far plus `text`. */
  stopped: boolean;
}

export class StopMatcher {
  #pending = '';
  #stopped = false;

  constructor(private readonly stops: readonly string[]) {}

  get active(): boolean {
    return this.stops.length > 0;
  }

  push(delta: string): StopStep {
    if (this.#stopped) return { text: '', stopped: true };
    if (!this.active) return { text: delta, stopped: false };
    this.#pending += delta;
    // The stop that completed first ends the answer (as if the text came a character at a time), so the result
    // does not depend on how the text was split: with stops "abc" and "b", "ab" stops at "b" before "abc" can.
    let cut = -1;
    let cutEnd = Infinity;
    for (const s of this.stops) {
      const at = this.#pending.indexOf(s);
      if (at < 0) continue;
      const end = at + s.length;
      if (end < cutEnd || (end === cutEnd && at < cut)) {
        cut = at;
        cutEnd = end;
      }
    }
    if (cut >= 0) {
      this.#stopped = true;
      const text = this.#pending.slice(0, cut);
      this.#pending = '';
      return { text, stopped: true };
    }
    const keep = this.heldBack();
    const text = this.#pending.slice(0, this.#pending.length - keep);
    this.#pending = this.#pending.slice(this.#pending.length - keep);
    return { text, stopped: false };
  }

  /** The answer ended: what was held back is answer text after all. */
  end(): string {
    const text = this.#stopped ? '' : this.#pending;
    this.#pending = '';
    return text;
  }

  /** Length of the longest tail of the pending text that is a proper prefix of a stop sequence. */
  private heldBack(): number {
    let keep = 0;
    for (const s of this.stops) {
      for (let n = Math.min(s.length - 1, this.#pending.length); n > keep; n -= 1) {
        if (this.#pending.endsWith(s.slice(0, n))) {
          keep = n;
          break;
        }
      }
    }
    return keep;
  }
}
