// Load progress in the user's words: the phase of a start or a load ("starting the server", "loading weights 3/7",
// "warming up"), derived from what the session and the server report: the session's steps, the model's own log
// lines (`chatglm3: loading weights i/n (file)` per checkpoint shard, `chatglm3: engine …` when its initialize
// returned: Triton then runs the configured warmup). Triton's raw lines stay in the log.
import type { SessionStep } from './ports';

export type ProgressPhase =
  /** A step of the session (each front end words it). */
  | { kind: 'step'; step: SessionStep }
  /** The weights load; `shard` once the model says which checkpoint file it reads. */
  | { kind: 'loading-weights'; shard?: { index: number; total: number } }
  /** The model's initialize is done; Triton runs the warmup requests before it reports the model ready. */
  | { kind: 'warming-up' };

const SHARD_LINE = /^chatglm3: loading weights (\d+)\/(\d+)\b/;
const INITIALIZED_LINE = /^chatglm3: engine \S+ on \S+/;

/** Follows one operation's reports; each method returns the phase to show when it changed, else undefined. */
export class LoadPhases {
  private current: ProgressPhase | undefined;

  step(step: SessionStep): ProgressPhase | undefined {
    return this.set(step === 'loading-weights' ? { kind: 'loading-weights' } : { kind: 'step', step });
  }

  /** A container log line, glog prefix removed (readableLogLine). Only the model's own progress lines count. */
  logLine(text: string): ProgressPhase | undefined {
    if (!this.loading()) return undefined;
    const shard = SHARD_LINE.exec(text);
    if (shard) {
      const index = Number(shard[1]);
      const total = Number(shard[2]);
      if (!(index >= 1 && index <= total)) return undefined;
      return this.set({ kind: 'loading-weights', shard: { index, total } });
    }
    if (INITIALIZED_LINE.test(text)) return this.set({ kind: 'warming-up' });
    return undefined;
  }

  private loading(): boolean {
    const c = this.current;
    return c !== undefined && (c.kind === 'loading-weights' || c.kind === 'warming-up');
  }

  private set(next: ProgressPhase): ProgressPhase | undefined {
    if (this.current && JSON.stringify(this.current) === JSON.stringify(next)) return undefined;
    // A shard count never goes back while the same load runs (several instances read the same files).
    const c = this.current;
    if (c?.kind === 'loading-weights' && c.shard && next.kind === 'loading-weights' && next.shard && next.shard.index < c.shard.index) return undefined;
    if (c?.kind === 'warming-up' && next.kind === 'loading-weights' && next.shard) return undefined;
    this.current = next;
    return next;
  }
}
