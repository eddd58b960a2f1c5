// What a completion request carries: the text before and after the cursor, cut to a character budget (an
// estimate: the server trims to its exact token budget, triton/README.md), the prefix kept nearer the cursor and the
// suffix shorter. Cuts fall on line boundaries so the model never sees half a line at the edge.
import { chooseMode, type CompletionMode } from './mode';

export interface CompletionDocument {
  /** The whole document's text as the editor holds it (CRLF or LF). */
  text: string;
  /** The cursor, as a UTF-16 offset into `text`. */
  offset: number;
  /** The file's path relative to its workspace folder (or its name): `###PATH:` of the prompt. */
  path: string;
  /** The editor's language id (languageTag.ts turns it into `###LANGUAGE:` of the prompt). */
  languageId: string;
}

export interface CompletionBudget {
  prefixChars: number;
  suffixChars: number;
  /** All references together. */
  referenceChars: number;
}

/** About 3 characters a token: the prefix fills most of a ~2k-token prompt, the suffix a quarter of it. */
export const DEFAULT_BUDGET: CompletionBudget = { prefixChars: 4_800, suffixChars: 1_200, referenceChars: 2_400 };

export interface CursorContext {
  /** Text before the cursor, LF line ends, budgeted. */
  prefix: string;
  /** Text after the cursor, LF line ends, budgeted. */
  suffix: string;
  /** The cursor line's text before and after the cursor. */
  linePrefix: string;
  lineSuffix: string;
  /** The nearest non-blank line above the cursor's line ('' at the top). */
  previousLine: string;
  mode: CompletionMode;
  /** The document's line end, for the inserted text. */
  eol: '\n' | '\r\n';
}

/** Reads the cursor's surroundings; LF line ends whatever the file uses (the model was trained on LF). */
export function cursorContext(doc: CompletionDocument, budget: CompletionBudget = DEFAULT_BUDGET): CursorContext {
  const offset = Math.max(0, Math.min(doc.offset, doc.text.length));
  const eol = doc.text.includes('\r\n') ? '\r\n' : '\n';
  const before = toLf(doc.text.slice(0, offset));
  const after = toLf(doc.text.slice(offset));
  const lineStart = before.lastIndexOf('\n') + 1;
  const lineEnd = after.indexOf('\n');
  const linePrefix = before.slice(lineStart);
  const lineSuffix = lineEnd < 0 ? after : after.slice(0, lineEnd);
  const previousLine = lastNonBlankLine(before.slice(0, Math.max(0, lineStart - 1)));
  return {
    prefix: keepTail(before, budget.prefixChars),
    suffix: keepHead(after, budget.suffixChars),
    linePrefix,
    lineSuffix,
    previousLine,
    mode: chooseMode(linePrefix, lineSuffix, previousLine),
    eol,
  };
}

export function toLf(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

/** The last `max` characters, starting at a line start when cut (unless that would leave nothing). */
export function keepTail(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(text.length - max);
  const nl = cut.indexOf('\n');
  if (nl >= 0 && nl < cut.length - 1) cut = cut.slice(nl + 1);
  return dropBrokenPair(cut, 'start');
}

/** The first `max` characters, ending at a line end when cut (unless that would leave nothing). */
export function keepHead(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max);
  const nl = cut.lastIndexOf('\n');
  if (nl > 0) cut = cut.slice(0, nl + 1);
  return dropBrokenPair(cut, 'end');
}

/** A cut inside a surrogate pair would send a lone half: JSON would carry it as an invalid code point. */
function dropBrokenPair(text: string, side: 'start' | 'end'): string {
  if (side === 'start' && /^[\uDC00-\uDFFF]/.test(text)) return text.slice(1);
  if (side === 'end' && /[\uD800-\uDBFF]$/.test(text)) return text.slice(0, -1);
  return text;
}

function lastNonBlankLine(text: string): string {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i]!.trim() !== '') return lines[i]!;
  return '';
}
