// Reads `docker build` output as it streams and remembers which step failed, for both builders:
// - legacy:   `Step 2/5 : RUN pip install …` then, on failure, `The command '/bin/sh -c …' returned a non-zero code: 1`
// - BuildKit: `#7 [2/5] RUN pip install …` (`#7 [builder 2/5] …` in a multi-stage build), then `#7 ERROR: …`,
//             and at the end ` > [2/5] RUN pip install …:` / `ERROR [2/5] RUN …` (tty progress)
// The step line can be far above the last lines of a long RUN's output, so it is tracked line by line.

const LEGACY_STEP = /^Step (\d+\/\d+) : (.+)$/;
const BUILDKIT_STEP = /^#(\d+) \[([^\]]+)\] (.+)$/;
const BUILDKIT_ERROR = /^#(\d+) ERROR\b/;
const BUILDKIT_SUMMARY = /^(?:ERROR \[([^\]]+)\] (.+)| > \[([^\]]+)\] (.+):)$/;

export class BuildStepTracker {
  private legacyStep: string | undefined;
  /** BuildKit vertex id → its step, for the steps seen (one entry per Dockerfile step). */
  private readonly vertices = new Map<string, string>();
  private failed: string | undefined;

  push(raw: string): void {
    const line = raw.trimEnd();
    const legacy = LEGACY_STEP.exec(line);
    if (legacy) {
      this.legacyStep = `Step ${legacy[1]} : ${legacy[2]}`;
      return;
    }
    const step = BUILDKIT_STEP.exec(line);
    if (step && !this.vertices.has(step[1]!) && !step[2]!.startsWith('internal')) this.vertices.set(step[1]!, `[${step[2]}] ${step[3]}`);
    const error = BUILDKIT_ERROR.exec(line);
    if (error && this.vertices.has(error[1]!)) this.failed ??= this.vertices.get(error[1]!);
    const summary = BUILDKIT_SUMMARY.exec(line);
    if (summary) this.failed ??= `[${summary[1] ?? summary[3]}] ${summary[2] ?? summary[4]}`;
  }

  /** The failing step of a build that failed: BuildKit's error names it; the legacy builder stops at its last step. */
  failedStep(): string | undefined {
    return this.failed ?? this.legacyStep;
  }
}
