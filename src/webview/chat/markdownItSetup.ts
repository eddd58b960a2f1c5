// The markdown-it instance of the chat panel, configured once: raw HTML and linkify off, images replaced by a text
// marker (nothing is ever fetched), highlight.js for fences, table alignment as classes (markdown-it's `style`
// attributes would break the CSP), and content nested deeper than markdown-it's limit kept as plain text. Also the
// block outline the streaming renderer cuts by. No DOM here (markdown.ts sanitises the HTML into DOM).
import MarkdownIt from 'markdown-it';
import { highlightCode } from './highlight';

type Token = MarkdownIt.Token;
type StateBlock = MarkdownIt.StateBlock;

export interface BlockOutline {
  /** markdown-it's token type without `_open`: paragraph, bullet_list, ordered_list, table, blockquote, fence, ... */
  type: string;
  startLine: number;
  endLine: number;
  /** First lines of the block's parts: list items, table body rows, blockquote children. */
  parts: number[];
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);
}

const ALIGN = /^text-align:(left|center|right)$/;

/** markdown-it writes `style="text-align:…"` on aligned cells; the stylesheet has a class for each instead. */
function alignmentAsClass(md: MarkdownIt): void {
  for (const rule of ['th_open', 'td_open'] as const) {
    md.renderer.rules[rule] = (tokens, idx, options, _env, self) => {
      const token = tokens[idx]!;
      const align = ALIGN.exec(token.attrGet('style') ?? '')?.[1];
      if (token.attrs) token.attrs = token.attrs.filter(([name]) => name !== 'style');
      if (align) token.attrJoin('class', `md-align-${align}`);
      return self.renderToken(tokens, idx, options);
    };
  }
}

/**
 * Past `maxNesting` markdown-it skips the rest of the container (and, by lazy continuation, what follows it).
 * Instead the remaining lines become one plain-text block, so nothing the model wrote disappears.
 */
function plainTextBeyondNestingLimit(md: MarkdownIt): void {
  const tokenize = md.block.tokenize.bind(md.block);
  const maxNesting = (md.options as { maxNesting?: number }).maxNesting ?? 100;
  md.block.tokenize = (state: StateBlock, startLine: number, endLine: number) => {
    if (state.level < maxNesting) { tokenize(state, startLine, endLine); return; }
    const line = state.skipEmptyLines(startLine);
    if (line >= endLine || state.sCount[line]! < state.blkIndent) { state.line = line; return; }
    // The container's own lines: up to the first non-blank line indented less than it (as tokenize would stop).
    let end = line + 1;
    for (let next = end; next < endLine && (state.isEmpty(next) || state.sCount[next]! >= state.blkIndent); next += 1) {
      if (!state.isEmpty(next)) end = next + 1;
    }
    const token = state.push('nesting_limit_text', '', 0);
    token.content = state.getLines(line, end, state.blkIndent, false);
    token.map = [line, end];
    token.block = true;
    state.line = end;
  };
  md.renderer.rules.nesting_limit_text = (tokens, idx) => `<p class="md-nesting-limit">${escapeHtml(tokens[idx]!.content)}</p>\n`;
}

function outlineOf(tokens: Token[]): BlockOutline[] {
  const out: BlockOutline[] = [];
  let current: BlockOutline | undefined;
  for (const t of tokens) {
    if (t.level === 0 && t.nesting >= 0 && t.map) {
      current = { type: t.type.replace(/_open$/, ''), startLine: t.map[0], endLine: t.map[1], parts: [] };
      out.push(current);
    } else if (current && t.map && t.nesting >= 0) {
      const part = (current.type === 'bullet_list' || current.type === 'ordered_list') ? t.type === 'list_item_open' && t.level === 1
        : current.type === 'table' ? t.type === 'tr_open' && t.level === 2 && t.map[0] > current.startLine + 1
          : current.type === 'blockquote' && t.level === 1;
      if (part) current.parts.push(t.map[0]);
    }
  }
  return out;
}

/** `imageText(altOrUrl)` gives the localized "[image not loaded: …]" text. */
/** `breaks`: single line breaks stay line breaks (questions; see markdown.ts). */
export function createMarkdownIt(imageText: (what: string) => string, options: { breaks?: boolean } = {}): MarkdownIt {
  const md = new MarkdownIt({
    html: false,
    linkify: false,
    typographer: false,
    breaks: options.breaks ?? false,
    highlight: (code, lang) => highlightCode(code, lang.split(/\s+/)[0] ?? ''),
  });
  md.renderer.rules.image = (tokens, idx) => {
    const token = tokens[idx]!;
    const what = token.content || token.attrGet('src') || '';
    return `<span class="md-image-removed">${escapeHtml(imageText(what))}</span>`;
  };
  alignmentAsClass(md);
  plainTextBeyondNestingLimit(md);
  return md;
}

/** The top-level blocks of `markdown` with their line ranges (block parse only, no inline parsing). */
export function outlineBlocks(md: MarkdownIt, markdown: string): BlockOutline[] {
  const tokens: Token[] = [];
  md.block.parse(markdown, md, {}, tokens);
  return outlineOf(tokens);
}
