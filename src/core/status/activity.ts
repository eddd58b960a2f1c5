// What this window is asking the server right now: the answers being generated (chat and Explain, as the answer
// runner reports them) and the explanations still waiting for a lane of their run. The status bar's
// "generating (n)", its tooltip and the Server Status view's "from this window" row read it.

/** One answer being generated: the conversation it is written into and that conversation's title. */
export interface RunningAnswer {
  conversationId: string;
  title: string;
}

export interface ActivitySnapshot {
  answers: readonly RunningAnswer[];
  /** Explanations not sent yet (their run's concurrency limit holds them back). */
  queuedExplanations: number;
}

export class ActivityBoard {
  private answers: readonly RunningAnswer[] = [];
  private queued = 0;
  private readonly listeners = new Set<(snapshot: ActivitySnapshot) => void>();

  get snapshot(): ActivitySnapshot {
    return { answers: this.answers, queuedExplanations: this.queued };
  }

  /** The answers running now (replaces the previous list). */
  setAnswers(answers: readonly RunningAnswer[]): void {
    if (sameAnswers(this.answers, answers)) return;
    this.answers = [...answers];
    this.changed();
  }

  /** Counts one explanation as queued until the returned function is called (once; later calls do nothing). */
  queueExplanation(): () => void {
    this.queued++;
    this.changed();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.queued--;
      this.changed();
    };
  }

  /** Calls `listener` after every change; returns the function that stops it. */
  onDidChange(listener: (snapshot: ActivitySnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  private changed(): void {
    const snapshot = this.snapshot;
    for (const listener of [...this.listeners]) listener(snapshot);
  }
}

function sameAnswers(a: readonly RunningAnswer[], b: readonly RunningAnswer[]): boolean {
  return a.length === b.length && a.every((x, i) => x.conversationId === b[i]!.conversationId && x.title === b[i]!.title);
}
