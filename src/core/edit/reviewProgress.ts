// What the review's diff says about each rewritten range while Edit Selection writes it and once it is done: the
// lines of the proposed text each target occupies now (its rewrite so far, or its own text while it has none), and
// the words shown on its first line. The VS Code side draws them as decorations in the diff's right side.
import type { RangeReplacement } from './applyToSelection';

export interface TargetLines {
  /** 0-based lines of the proposed text, both included. */
  first: number;
  last: number;
}

/** Where each target (document offsets) lies in `proposed`, given the proposal's replacements (document offsets). */
export function targetLines(
  proposed: string,
  documentLength: number,
  targets: readonly { start: number; end: number }[],
  replacements: readonly RangeReplacement[],
): TargetLines[] {
  const lineAt = (offset: number) => {
    let line = 0;
    for (let i = proposed.indexOf('\n'); i !== -1 && i < offset; i = proposed.indexOf('\n', i + 1)) line += 1;
    return line;
  };
  return targets.map((t) => {
    const start = Math.max(0, Math.min(Math.min(t.start, t.end), documentLength));
    const end = Math.max(0, Math.min(Math.max(t.start, t.end), documentLength));
    const isOwn = (r: RangeReplacement) => r.start === start && r.end === end;
    const shift = replacements.filter((r) => !isOwn(r) && r.end <= start).reduce((n, r) => n + r.text.length - (r.end - r.start), 0);
    const mine = replacements.find(isOwn);
    const from = start + shift;
    const to = from + (mine ? mine.text.length : end - start);
    // A range that ends with its line break ends on the line before.
    const lastOffset = to > from && proposed[to - 1] === '\n' ? to - 2 : to - 1;
    const first = lineAt(from);
    return { first, last: Math.max(first, lineAt(Math.max(from, lastOffset))) };
  });
}

export type TargetPhase =
  /** Nothing written for it yet: its own text is shown. */
  | { kind: 'waiting' }
  /** Its rewrite streams in. */
  | { kind: 'writing'; lines: number }
  /** Every rewrite has ended: the review may be accepted. */
  | { kind: 'complete' };

/** The phase of each target: `codes[i]` is its code so far; `finished` once every request has ended. */
export function targetPhases(codes: readonly (string | undefined)[], finished: boolean): TargetPhase[] {
  return codes.map((code) => {
    if (finished) return { kind: 'complete' };
    if (code === undefined) return { kind: 'waiting' };
    return { kind: 'writing', lines: code.split('\n').length };
  });
}
