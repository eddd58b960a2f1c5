// Where the block being streamed can be cut so that its first part is rendered once and only the rest keeps being
// re-rendered: between top-level blocks, between list items, between table rows (the header is kept as context
// for the rows after the cut), between blockquote children, between lines of indented code, and inside a
// paragraph at a word or sentence boundary where no inline construct (code span, link, emphasis) is open. These
// cuts only shape the view while streaming: the finished answer is rendered once as a whole (up to
// WHOLE_RENDER_MAX, streaming.ts; a longer one keeps its pieces, and only list-item and table-row cuts let its links
// go live).
import type { BlockOutline } from './markdown';

export type OpenBlockKind = 'paragraph' | 'list' | 'table' | 'blockquote' | 'code' | 'other';

export interface Cut {
  /** Offset in the live text: the part before it is committed. */
  offset: number;
  /** The block that goes on after the cut. */
  kind: OpenBlockKind;
  /** Markdown to put before the rest when rendering it (a table's header and delimiter rows). */
  context: string;
  /** The rest continues the block the committed part ends with (their views are joined). */
  continues: boolean;
}

export function kindOf(type: string): OpenBlockKind {
  switch (type) {
    case 'paragraph': return 'paragraph';
    case 'bullet_list': case 'ordered_list': return 'list';
    case 'table': return 'table';
    case 'blockquote': return 'blockquote';
    case 'code_block': return 'code';
    default: return 'other';
  }
}

/** Offsets of the line starts of `s`. */
export function lineStarts(s: string): number[] {
  const out = [0];
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) out.push(i + 1);
  return out;
}

/**
 * The latest useful cut of `live` (rendered after `context`), given the block outline of `context + live`; none when
 * the text offers none at or after `min` characters.
 */
export function chooseCut(live: string, context: string, outline: readonly BlockOutline[], min: number): Cut | undefined {
  const src = context + live;
  const starts = lineStarts(src);
  const offsetOf = (line: number) => (line < starts.length ? starts[line]! : src.length) - context.length;
  const last = outline[outline.length - 1];
  if (!last) return undefined;
  if (outline.length >= 2) {
    const offset = offsetOf(last.startLine);
    if (offset >= min) return { offset, kind: kindOf(last.type), context: '', continues: false };
  }
  const kind = kindOf(last.type);
  const lastPart = last.parts[last.parts.length - 1];
  switch (kind) {
    case 'list':
    case 'table': {
      if (lastPart === undefined || lastPart <= last.startLine) return undefined;
      const offset = offsetOf(lastPart);
      if (offset < min) return undefined;
      const context = kind === 'table' ? src.slice(starts[last.startLine]!, starts[last.startLine + 2] ?? src.length) : '';
      return { offset, kind, context, continues: true };
    }
    case 'blockquote': {
      // At the last line that starts with ">" (a lazy continuation line would leave the quote if cut at).
      for (let line = Math.min(last.endLine, starts.length) - 1; line > last.startLine; line -= 1) {
        const offset = offsetOf(line);
        if (offset < min) return undefined;
        if (/^ {0,3}>/.test(live.slice(offset, offset + 4))) return { offset, kind, context: '', continues: true };
      }
      return undefined;
    }
    case 'code': {
      const lineStart = live.lastIndexOf('\n', live.length - 2) + 1;
      return lineStart >= min ? { offset: lineStart, kind, context: '', continues: true } : undefined;
    }
    case 'paragraph': {
      const offset = inlineCut(live, Math.max(min, offsetOf(last.startLine)));
      return offset === undefined ? undefined : { offset, kind, context: '', continues: true };
    }
    default:
      return undefined;
  }
}

/**
 * A cut when nothing better exists: after the last line break, else the last space, else before a code span that
 * is still open, else at `at` (whole code points). Never inside a code span: a span cut in two would show its
 * halves as markdown (live links included) until the answer ends.
 */
export function forcedCut(live: string, at: number): number {
  const spans = codeSpans(live);
  const inside = (pos: number) => spans.find(([a, b]) => pos > a && pos < b);
  const lastOutside = (ch: string): number => {
    for (let i = live.lastIndexOf(ch, live.length - 2); i >= 0; i = live.lastIndexOf(ch, i - 1)) {
      const span = inside(i + 1);
      if (!span) return i;
      i = span[0]; // skip the whole span
    }
    return -1;
  };
  const nl = lastOutside('\n');
  if (nl >= at / 2) return nl + 1;
  const sp = lastOutside(' ');
  if (sp >= at / 2) return sp + 1;
  const open = spans.find(([a, b]) => b === live.length && a > 0);
  if (open && !inside(open[0])) return open[0];
  const code = live.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at + 1 : at;
}

/**
 * The code spans of `s` as [start, end) offsets: a backtick run up to the next run of the same length, or, when
 * none follows yet, to the end (it may still close). Backslash-escaped backticks open nothing.
 */
export function codeSpans(s: string): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (let i = s.indexOf('`'); i >= 0; i = s.indexOf('`', i)) {
    let j = i;
    while (s[j] === '`') j += 1;
    let backslashes = 0;
    for (let k = i - 1; k >= 0 && s[k] === '\\'; k -= 1) backslashes += 1;
    // An escaped first backtick is text; the rest of the run still counts.
    if (backslashes % 2 === 1) { if (j - i > 1) runs.push([i + 1, j]); } else runs.push([i, j]);
    i = j;
  }
  const out: Array<[number, number]> = [];
  for (let r = 0; r < runs.length; r += 1) {
    const [a, b] = runs[r]!;
    const len = b - a;
    let close = r + 1;
    while (close < runs.length && runs[close]![1] - runs[close]![0] !== len) close += 1;
    if (close >= runs.length) { out.push([a, s.length]); break; }
    out.push([a, runs[close]![1]]);
    r = close;
  }
  return out;
}

const LETTER = /\p{L}/u;
const CJK = /[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]/;
const SENTENCE_END = /[.!?。！？；]/;
const SPACE = /\s/;

/**
 * The latest offset >= `min` in a paragraph's source where it can be cut without splitting an inline construct: after
 * white space (or between CJK characters) and before a letter, with no code span, link text or destination open and
 * an even number of possible emphasis delimiter runs before it. Prefers a sentence end in the second half.
 */
export function inlineCut(s: string, min: number): number | undefined {
  let best = -1;
  let bestSentence = -1;
  let codeRun = 0;
  let brackets = 0;
  let parens = 0;
  const delimiters: Record<string, number> = { '*': 0, _: 0, '~': 0 };
  for (let i = 0; i < s.length - 1; i += 1) {
    const ch = s[i]!;
    if (ch === '\\') { i += 1; continue; }
    if (ch === '`') {
      let j = i;
      while (s[j] === '`') j += 1;
      const run = j - i;
      if (codeRun === 0) codeRun = run;
      else if (codeRun === run) codeRun = 0;
      i = j - 1;
      continue;
    }
    if (codeRun) continue;
    if (parens) {
      if (ch === '(') parens += 1;
      else if (ch === ')') parens -= 1;
      continue;
    }
    if (ch === '[') brackets += 1;
    else if (ch === ']') {
      if (brackets) brackets -= 1;
      if (s[i + 1] === '(') { parens = 1; i += 1; continue; }
    } else if (ch === '*' || ch === '_' || ch === '~') {
      let j = i;
      while (s[j] === ch) j += 1;
      const before = i > 0 ? s[i - 1]! : ' ';
      const after = j < s.length ? s[j]! : ' ';
      const bothSpace = SPACE.test(before) && SPACE.test(after);
      const intraword = ch === '_' && /[\p{L}\p{N}]/u.test(before) && /[\p{L}\p{N}]/u.test(after);
      if (!bothSpace && !intraword) delimiters[ch] = 1 - delimiters[ch]!; // a run opens or closes one emphasis
      i = j - 1;
      continue;
    }
    const at = i + 1;
    if (at < min || brackets || delimiters['*'] || delimiters._ || delimiters['~']) continue;
    const next = s[at]!;
    if (LETTER.test(next) && (SPACE.test(ch) || (CJK.test(ch) && CJK.test(next)))) {
      best = at;
      const end = SPACE.test(ch) ? s[i - 1] : ch;
      if (end !== undefined && SENTENCE_END.test(end)) bestSentence = at;
    }
  }
  if (bestSentence >= Math.max(min, s.length / 2)) return bestSentence;
  return best >= min ? best : undefined;
}
