// What the model's middle text becomes before it is shown: one line in LINE mode; in BLOCK mode the block's body
// up to the first line that dedents out of it; nothing that the text after the cursor already says; never a
// suggestion that only repeats the line; the model's indentation kept as it is.
import type { CompletionMode } from './mode';

export interface PostProcessInput {
  /** The streamed middle text, as the model wrote it. */
  raw: string;
  mode: CompletionMode;
  /** The cursor line before / after the cursor. */
  linePrefix: string;
  lineSuffix: string;
  /** Text after the cursor (LF): the lines after the cursor line are compared with the suggestion's end. */
  suffix: string;
  /** The nearest non-blank line above the cursor's. */
  previousLine: string;
  /** Width of a tab when comparing indentation. */
  tabSize?: number;
}

/** The text to insert at the cursor ('' = show nothing). LF line ends. */
export function postProcess(input: PostProcessInput): string {
  let text = input.raw.replace(/\r\n?/g, '\n');
  text = input.mode === 'line' ? firstLine(text) : cutAtDedent(text, input.linePrefix, input.tabSize ?? 4);
  text = input.mode === 'line' ? trimLineSuffixOverlap(text, input.lineSuffix) : trimSuffixRepeat(text, input.suffix);
  text = text.replace(/\s+$/u, '');
  return onlyRepeats(text, input) ? '' : text;
}

function firstLine(text: string): string {
  const nl = text.indexOf('\n');
  return nl < 0 ? text : text.slice(0, nl);
}

/** Indentation width of a line (tabs to the next stop). */
export function indentWidth(line: string, tabSize: number): number {
  let w = 0;
  for (const ch of line) {
    if (ch === ' ') w += 1;
    else if (ch === '\t') w += tabSize - (w % tabSize);
    else break;
  }
  return w;
}

/**
 * The block is as deep as its first line (the cursor's indentation plus what the model put before the first
 * character); the first later non-blank line less deep than that ends it.
 */
function cutAtDedent(text: string, linePrefix: string, tabSize: number): string {
  const lines = text.split('\n');
  const firstContent = lines.findIndex((l) => l.trim() !== '');
  if (firstContent < 0) return '';
  const base = firstContent === 0 ? linePrefix + lines[0]! : lines[firstContent]!;
  const depth = indentWidth(base, tabSize);
  let end = lines.length;
  for (let i = firstContent + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() !== '' && indentWidth(line, tabSize) < depth) {
      end = i;
      break;
    }
  }
  return lines.slice(0, end).join('\n');
}

/** "foo)" before a ")" already there: the closers the model repeated go; a suggestion that is all of it goes too. */
function trimLineSuffixOverlap(text: string, lineSuffix: string): string {
  const rest = lineSuffix.trim();
  if (rest === '') return text;
  if (text.trimEnd().endsWith(rest)) return text.trimEnd().slice(0, text.trimEnd().length - rest.length);
  for (let k = rest.length - 1; k >= 1; k--) {
    const head = rest.slice(0, k);
    if (!/\w/u.test(head) && text.endsWith(head)) return text.slice(0, text.length - k);
  }
  return text;
}

/** A block that runs on into lines the file already has after the cursor ends before them. */
function trimSuffixRepeat(text: string, suffix: string): string {
  const after = suffix.split('\n').slice(1).find((l) => l.trim() !== '');
  if (after === undefined) return text;
  const lines = text.split('\n');
  const at = lines.findIndex((l, i) => i > 0 && l.trim() === after.trim());
  return at < 0 ? text : lines.slice(0, at).join('\n');
}

function onlyRepeats(text: string, input: PostProcessInput): boolean {
  const t = text.trim();
  if (t === '') return true;
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  // The line above again (an empty line "completed" with a copy of its neighbour).
  if (lines.length === 1 && input.linePrefix.trim() === '' && t === input.previousLine.trim()) return true;
  // The cursor line's own text again, or what already follows the cursor.
  if (input.linePrefix.trim() !== '' && t === input.linePrefix.trim()) return true;
  return input.lineSuffix.trim() !== '' && input.lineSuffix.trim().startsWith(t);
}
