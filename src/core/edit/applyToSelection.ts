// Apply to Selection (a code block's action in the chat panel) as policy the editor side only adapts: which text
// replaces what, the document the diff preview shows, and whether the user's Apply may still go ahead. Offsets are
// the document's (UTF-16 code units, as TextDocument.offsetAt counts).

export type LineEnding = '\n' | '\r\n';

/**
 * What the user asked to change: the primary selection when the request was made, and the document's version then.
 * An empty selection is the cursor: the code is inserted there (as Insert at Cursor does, but with the preview).
 */
export interface ApplyTarget {
  start: number;
  end: number;
  version: number;
}

export interface ApplyProposal {
  mode: 'replace' | 'insert';
  /** The text that goes in place of the target (the code in the document's line ending). */
  replacement: string;
  /** The whole document as it would read after the change (the right side of the diff). */
  proposed: string;
}

/** `text` with every line break (CRLF, LF or a lone CR) written as `eol`. */
export function withLineEnding(text: string, eol: LineEnding): string {
  const lf = text.replace(/\r\n?/g, '\n');
  return eol === '\n' ? lf : lf.replace(/\n/g, '\r\n');
}

/**
 * The change that puts `code` at `target` of `documentText`. The code takes the document's line ending (the diff
 * then shows only what the code changes), and a selection of whole lines keeps its last line break: the panel's
 * code has none, and the line after the selection must not be joined to the code's last line.
 */
export function proposeReplacement(documentText: string, target: Pick<ApplyTarget, 'start' | 'end'>, code: string, eol: LineEnding): ApplyProposal {
  const start = clamp(Math.min(target.start, target.end), documentText.length);
  const end = clamp(Math.max(target.start, target.end), documentText.length);
  let replacement = withLineEnding(code, eol);
  const selected = documentText.slice(start, end);
  if (/\r?\n$/.test(selected) && !/\n$/.test(replacement)) replacement += eol;
  return {
    mode: start === end ? 'insert' : 'replace',
    replacement,
    proposed: documentText.slice(0, start) + replacement + documentText.slice(end),
  };
}

export type ApplyCheck = { ok: true } | { ok: false; reason: 'closed' | 'changed' };

/**
 * Apply goes ahead only on the document the preview was made from: any edit in between (in the editor, in the diff
 * editor's left side, by a formatter or another extension) moves its version, and the offsets of the target would
 * then point at other text. The user is told and asks again; nothing is merged silently.
 */
export function checkApplicable(target: Pick<ApplyTarget, 'version'>, current: { closed: boolean; version: number }): ApplyCheck {
  if (current.closed) return { ok: false, reason: 'closed' };
  if (current.version !== target.version) return { ok: false, reason: 'changed' };
  return { ok: true };
}

function clamp(n: number, max: number): number {
  return Math.max(0, Math.min(Number.isFinite(n) ? Math.trunc(n) : 0, max));
}

/** One replaced range of a proposal with several (Edit Selection on several selections). */
export interface RangeReplacement {
  start: number;
  end: number;
  /** The text that goes in place of [start, end) of the document the proposal was made from. */
  text: string;
}

export interface MultiProposal {
  /** In document order, none overlapping; a target without code yet (or whose rewrite failed) is left out. */
  replacements: RangeReplacement[];
  /** The whole document as it would read after every replacement. */
  proposed: string;
}

/**
 * The change that puts `codes[i]` at `targets[i]` (each as proposeReplacement words it). Targets come from one
 * editor's selections, which never overlap; one that overlaps an earlier target is refused rather than merged.
 */
export function proposeReplacements(
  documentText: string,
  targets: readonly Pick<ApplyTarget, 'start' | 'end'>[],
  codes: readonly (string | undefined)[],
  eol: LineEnding,
): MultiProposal {
  const order = targets
    .map((t, i) => ({ start: clamp(Math.min(t.start, t.end), documentText.length), end: clamp(Math.max(t.start, t.end), documentText.length), i }))
    .sort((a, b) => a.start - b.start || a.end - b.end);
  const replacements: RangeReplacement[] = [];
  let proposed = '';
  let at = 0;
  let previousEnd = 0;
  for (const t of order) {
    if (t.start < previousEnd) throw new RangeError(`target ${t.i} overlaps the one before it`);
    previousEnd = t.end;
    const code = codes[t.i];
    if (code === undefined) continue;
    const text = proposeReplacement(documentText, t, code, eol).replacement;
    replacements.push({ start: t.start, end: t.end, text });
    proposed += documentText.slice(at, t.start) + text;
    at = t.end;
  }
  return { replacements, proposed: proposed + documentText.slice(at) };
}
