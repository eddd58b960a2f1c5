// Where, in a Markdown source, a renderer that allows raw HTML would find live HTML or an image: the offset of each
// `<` that opens a tag (in html_inline and html_block tokens) and of each image's `!`. Offsets come from markdown-it's
// own parse: block tokens carry line maps; the inline rules that make HTML and images are wrapped to record where
// they matched in their inline source; and each inline token's source is mapped back to the document line by line
// (paragraphs end at their line ends, headings start after their `#`s, table cells are split as markdown-it splits
// them). Nothing is found by searching the text for a token's content. Every mapped character is checked against
// the source; when any does not match, or markdown-it gave up on too-deep nesting, the answer is `undefined`.
import MarkdownIt from 'markdown-it';

type Token = MarkdownIt.Token;
type StateBlock = MarkdownIt.StateBlock;
type StateInline = MarkdownIt.StateInline;
type RuleBlock = (state: StateBlock, startLine: number, endLine: number, silent: boolean) => boolean;
type RuleInline = (state: StateInline, silent: boolean) => boolean;

export interface LiveSpot {
  /** Offset in the source: a `<` for `html`, a `!` for `image`. */
  at: number;
  kind: 'html' | 'image';
}

interface SourceEnv {
  /** Offset of the current inline source within its inline token's content (non-zero inside an image's alt). */
  base: number;
  /** Table rows and ATX headings: the offset where the line's content starts (after container markers). */
  lineStarts: Map<number, number>;
}

interface SourceMeta { sourceAt?: number }

/** `<` that opens a tag, comment, declaration or processing instruction. */
const TAG_START = /<(?=[A-Za-z/!?])/g;
const md = new MarkdownIt({ html: true, linkify: false });
/** Past this depth markdown-it stops parsing; another renderer may not. */
const MAX_NESTING = (md.options as { maxNesting?: number }).maxNesting ?? 100;
recordInline(md, 'html_inline', false);
recordInline(md, 'image', true);
recordLineStarts(md, 'table');
recordLineStarts(md, 'heading');

/** Source offsets of everything live, in source order; `undefined` when the parse cannot be mapped back exactly. */
export function liveSpots(src: string): LiveSpot[] | undefined {
  const env: SourceEnv = { base: 0, lineStarts: new Map() };
  const tokens = md.parse(src, env);
  const lines = lineStarts(src);
  const spots: LiveSpot[] = [];
  let rowLine = -1;
  let cell = 0;
  for (let i = 0; i < tokens.length; i += 1) {
    const t = tokens[i]!;
    if (t.level >= MAX_NESTING - 2) return undefined;
    if (t.type === 'html_block' && t.map) {
      const from = lineStart(lines, src, t.map[0]);
      for (const m of src.slice(from, lineStart(lines, src, t.map[1])).matchAll(TAG_START)) spots.push({ at: from + m.index, kind: 'html' });
    } else if (t.type === 'tr_open') {
      rowLine = t.map?.[0] ?? -1;
      cell = 0;
    } else if (t.type === 'inline') {
      const opener = tokens[i - 1];
      const inCell = opener?.type === 'th_open' || opener?.type === 'td_open';
      const live = flatten(t.children ?? []);
      if (live.some((c) => c.level >= MAX_NESTING - 2)) return undefined;
      const found = live.filter((c) => c.type === 'html_inline' || c.type === 'image');
      if (found.length > 0) {
        const offsets = inCell ? cellOffsets(src, lines, env, rowLine, cell, t.content)
          : opener?.type === 'heading_open' && opener.markup.startsWith('#') ? headingOffsets(src, env, t)
            : paragraphOffsets(src, lines, t);
        if (!offsets || !spotsOf(found, offsets, src, spots)) return undefined;
      }
      if (inCell) cell += 1;
    }
  }
  return spots.sort((a, b) => a.at - b.at);
}

function spotsOf(found: Token[], offsets: number[], src: string, spots: LiveSpot[]): boolean {
  for (const c of found) {
    const at = (c.meta as SourceMeta | null)?.sourceAt;
    if (at === undefined) return false;
    if (c.type === 'image') {
      const o = offsets[at];
      if (o === undefined || src[o] !== '!') return false;
      spots.push({ at: o, kind: 'image' });
      continue;
    }
    for (const m of c.content.matchAll(TAG_START)) {
      const o = offsets[at + m.index];
      if (o === undefined || src[o] !== '<') return false;
      spots.push({ at: o, kind: 'html' });
    }
  }
  return true;
}

/** An image's alt text is parsed into children of its own. */
function flatten(children: Token[]): Token[] {
  return children.flatMap((c) => (c.children?.length ? [c, ...flatten(c.children)] : [c]));
}

function lineStarts(src: string): number[] {
  const starts = [0];
  for (let i = src.indexOf('\n'); i >= 0; i = src.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

const lineStart = (lines: number[], src: string, line: number) => lines[line] ?? src.length;
const lineEnd = (lines: number[], src: string, line: number) => (lines[line + 1] ?? src.length + 1) - 1;

/**
 * Paragraphs and setext headings: each content line but the last runs to its source line's end; the last one ends
 * where the source line does once trailing blanks are trimmed. A partly consumed tab may add leading spaces that
 * have no source character (offset -1).
 */
function paragraphOffsets(src: string, lines: number[], t: Token): number[] | undefined {
  if (!t.map) return undefined;
  const contentLines = t.content.split('\n');
  const offsets: number[] = [];
  for (let i = 0; i < contentLines.length; i += 1) {
    const text = contentLines[i]!;
    const line = t.map[0] + i;
    const from = lineStart(lines, src, line);
    let end = lineEnd(lines, src, line);
    if (i === contentLines.length - 1) {
      while (end > from && !src.slice(from, end).endsWith(text) && /\s/.test(src[end - 1]!)) end -= 1;
    }
    const aligned = alignToEnd(src, text, end, from);
    if (!aligned) return undefined;
    offsets.push(...aligned);
    if (i < contentLines.length - 1) offsets.push(end);
  }
  return offsets;
}

function alignToEnd(src: string, text: string, end: number, from: number): number[] | undefined {
  const out = new Array<number>(text.length);
  for (let k = text.length - 1; k >= 0; k -= 1) {
    const at = end - (text.length - k);
    if (at >= from && src[at] === text[k]) out[k] = at;
    else if (/^ +$/.test(text.slice(0, k + 1))) out[k] = -1;
    else return undefined;
  }
  return out;
}

/** ATX headings: the content starts after the `#`s and the blanks that follow them. */
function headingOffsets(src: string, env: SourceEnv, t: Token): number[] | undefined {
  const start = t.map ? env.lineStarts.get(t.map[0]) : undefined;
  if (start === undefined) return undefined;
  let at = start;
  while (src[at] === '#') at += 1;
  while (at < src.length && !src.startsWith(t.content, at) && /[^\S\n]/.test(src[at]!)) at += 1;
  if (!src.startsWith(t.content, at)) return undefined;
  return Array.from(t.content, (_, k) => at + k);
}

/** Table cells: the row split at unescaped pipes as markdown-it splits it (`\|` becomes `|`), each cell trimmed. */
function cellOffsets(src: string, lines: number[], env: SourceEnv, row: number, cell: number, content: string): number[] | undefined {
  let from = env.lineStarts.get(row);
  if (from === undefined) return undefined;
  let end = lineEnd(lines, src, row);
  while (from < end && /\s/.test(src[from]!)) from += 1;
  while (end > from && /\s/.test(src[end - 1]!)) end -= 1;
  const columns: number[][] = [[]];
  for (let at = from; at < end; at += 1) {
    if (src[at] === '|' && src[at - 1] === '\\' && at > from) columns[columns.length - 1]!.splice(-1, 1, at);
    else if (src[at] === '|') columns.push([]);
    else columns[columns.length - 1]!.push(at);
  }
  if (columns.length && columns[0]!.length === 0) columns.shift();
  if (columns.length && columns[columns.length - 1]!.length === 0) columns.pop();
  const column = columns[cell];
  if (!column) return undefined;
  let a = 0;
  let b = column.length;
  while (a < b && /\s/.test(src[column[a]!]!)) a += 1;
  while (b > a && /\s/.test(src[column[b - 1]!]!)) b -= 1;
  const offsets = column.slice(a, b);
  return offsets.map((o) => src[o]).join('') === content ? offsets : undefined;
}

/** Wraps an inline rule so that the tokens of `type` it makes remember where in their inline content it matched. */
function recordInline(parser: MarkdownIt, name: string, parsesAlt: boolean): void {
  const original = ruleOf<RuleInline>((probe) => probe.inline.ruler, name);
  parser.inline.ruler.at(name, (state, silent) => {
    const env = state.env as SourceEnv;
    const base = env.base;
    const at = state.pos;
    const before = state.tokens.length;
    // An image's alt text is parsed on its own, from just after `![`.
    if (parsesAlt) env.base = base + at + 2;
    let ok: boolean;
    try { ok = original(state, silent); } finally { env.base = base; }
    if (ok && !silent) {
      for (const t of state.tokens.slice(before)) {
        if (t.type === name) t.meta = { ...(t.meta as object | null), sourceAt: base + at } satisfies SourceMeta;
      }
    }
    return ok;
  });
}

/** Wraps a block rule so that the lines it takes remember where their content starts. */
function recordLineStarts(parser: MarkdownIt, name: string): void {
  const original = ruleOf<RuleBlock>((probe) => probe.block.ruler, name);
  const alt = ['paragraph', 'reference', 'blockquote', 'list'].filter((chain) => parser.block.ruler.getRules(chain).includes(original));
  parser.block.ruler.at(name, (state, startLine, endLine, silent) => {
    const ok = original(state, startLine, endLine, silent);
    if (ok && !silent) {
      const starts = (state.env as SourceEnv).lineStarts;
      for (let line = startLine; line < state.line; line += 1) starts.set(line, state.bMarks[line]! + state.tShift[line]!);
    }
    return ok;
  }, { alt });
}

interface RuleList<T> { enableOnly(names: string[]): unknown; getRules(chain: string): T[] }

/** markdown-it's own rule function of that name (a parser with only that rule enabled lists just it). */
function ruleOf<T>(ruler: (probe: MarkdownIt) => RuleList<T>, name: string): T {
  const probe = new MarkdownIt();
  const list = ruler(probe);
  list.enableOnly([name]);
  const [rule] = list.getRules('');
  if (!rule) throw new Error(`markdown-it has no rule ${name}`);
  return rule;
}
