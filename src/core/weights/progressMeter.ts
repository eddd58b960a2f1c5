// Bytes done, the rate and the time left of a download, as the progress bar and the notification show them. The
// rate is over the last few seconds (a resumed download's bytes on disk are not "speed"); samples are offered at
// most a few times a second so a fast disk does not flood the UI.

const WINDOW_MS = 5000;
const SAMPLE_EVERY_MS = 200;

export interface ProgressSample {
  doneBytes: number;
  totalBytes: number;
  bytesPerSecond: number | undefined;
  secondsLeft: number | undefined;
}

export class ProgressMeter {
  private done: number;
  private readonly points: { t: number; bytes: number }[] = [];
  private lastSample = -Infinity;
  /** Bytes received in this run (the rate's numerator). */
  private received = 0;

  constructor(readonly total: number, present: number, private readonly now: () => number) {
    this.done = present;
    this.points.push({ t: now(), bytes: 0 });
  }

  add(n: number): void {
    this.done = Math.max(0, Math.min(this.total, this.done + n));
    if (n > 0) this.received += n;
  }

  /** A sample when one is due (or `force`), else undefined. */
  sample(force = false): ProgressSample | undefined {
    const t = this.now();
    if (!force && t - this.lastSample < SAMPLE_EVERY_MS) return undefined;
    this.lastSample = t;
    this.points.push({ t, bytes: this.received });
    while (this.points.length > 2 && t - this.points[1]!.t > WINDOW_MS) this.points.shift();
    const first = this.points[0]!;
    const seconds = (t - first.t) / 1000;
    const rate = seconds > 0.5 ? (this.received - first.bytes) / seconds : undefined;
    const left = this.total - this.done;
    return {
      doneBytes: this.done,
      totalBytes: this.total,
      bytesPerSecond: rate,
      secondsLeft: rate && rate > 0 ? Math.ceil(left / rate) : undefined,
    };
  }
}
