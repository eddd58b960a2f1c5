// Where a streamed answer can be cut into blocks that render the same alone as in the whole text: after a blank
// line followed by an unindented line that does not continue the list before it, or after a top-level fenced code
// block closes, never inside a fence. Fences are recognised as markdown-it does: a backtick fence's info string has
// no backtick (a tilde fence's may), a fence inside a list item is indented relative to the item's content and ends
// with the item (a line indented less than the content), and a closer is indented at most 3 columns past it. The
// scanner is fed only what arrived since the last frame and remembers the line it is in, the fence and the list
// items it is inside, so a block of any length costs linear time in all. (It never reads the whole text again:
// appending to a JavaScript string and then searching it copies the whole string once more.)
// Tested against markdown-it's own block parse (test/webview/stable-boundary.test.ts).

interface Fence {
  char: string;
  len: number;
  /** Column of the content of the list item the fence is in (0: top level). */
  container: number;
  start: number;
  codeStart: number;
  info: string;
}

export interface OpenFence {
  /** Offset of the opener line. */
  start: number;
  /** Offset of the first code character (after the opener line). */
  codeStart: number;
  info: string;
}

const FENCE_AT = /^(`{3,}|~{3,})(.*)$/;
const CLOSER_AT = /^(`{3,}|~{3,})[ \t]*$/;
const BULLET = /^([-+*])(?=[ \t]|$)/;
const ORDERED = /^(\d{1,9})([.)])(?=[ \t]|$)/;
const THEMATIC_BREAK = /^([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const STARTS_BLOCK = /^(?:#{1,6}(?:[ \t]|$)|>)/;

/** A fence opener at the start of `rest` (a backtick fence's info string has no backtick). */
function fenceOpener(rest: string): RegExpExecArray | null {
  const m = FENCE_AT.exec(rest);
  return m && !(m[1]![0] === '`' && m[2]!.includes('`')) ? m : null;
}

/** Column of the first non-blank character of `line` from `from` (tabs to multiples of 4), and its index. */
function indentOf(line: string, from = 0, col = 0): { col: number; index: number } {
  let i = from;
  for (; i < line.length; i += 1) {
    const ch = line[i];
    if (ch === ' ') col += 1;
    else if (ch === '\t') col += 4 - (col % 4);
    else break;
  }
  return { col, index: i };
}

/** A list marker at the start of `rest`: its kind ('-' or '.' or ')') and length, unless the line is a thematic break. */
function markerOf(rest: string): { kind: string; len: number } | undefined {
  if (THEMATIC_BREAK.test(rest)) return undefined;
  const b = BULLET.exec(rest);
  if (b) return { kind: b[1]!, len: 1 };
  const o = ORDERED.exec(rest);
  return o ? { kind: o[2]!, len: o[0].length } : undefined;
}

export class BlockScanner {
  /** The line being received (no line feed yet) and its offset. */
  private partial = '';
  private partialStart: number;
  /** The partial line held only white space so far. */
  private partialBlank = true;
  private fence: Fence | undefined;
  /** Content columns of the list items the current line may be in (innermost last). */
  private lists: number[] = [];
  /** Marker kind of the outermost open list ('-', '+', '*', '.' or ')'). */
  private outerList = '';
  /** The last non-blank line outside a fence was paragraph text (a lazy continuation line may follow). */
  private afterParagraph = false;
  /** Offset just after the last blank line, while the line after it is still undecided; -1 when none. */
  private pendingBlank = -1;
  /** The last stable boundary found. */
  boundary: number;
  /** Complete lines read so far (each is read once: the cost of a frame is the text that arrived). */
  linesRead = 0;

  /** `from`: the offset of the first text fed, which must itself be a boundary (outside any fence). */
  constructor(from = 0) {
    this.partialStart = from;
    this.boundary = from;
  }

  /** Reads the text appended since the last call; returns the last boundary. */
  feed(delta: string): number {
    let pos = 0;
    for (;;) {
      const nl = delta.indexOf('\n', pos);
      const piece = delta.slice(pos, nl < 0 ? delta.length : nl);
      if (this.partialBlank && /\S/.test(piece)) this.partialBlank = false;
      // The line after a blank line decides, from its first characters, whether the blank line is a boundary.
      if (this.pendingBlank >= 0 && !this.partialBlank) this.decidePending(this.partial + piece, nl >= 0);
      if (nl < 0) { this.partial += piece; break; }
      this.endLine(this.partial + piece);
      pos = nl + 1;
    }
    return this.boundary;
  }

  /**
   * After a blank line: an unindented line ends every open block (and is a boundary) unless it is the next item of
   * the open list (same bullet or delimiter), which continues it. Undecided while the marker is still arriving.
   */
  private decidePending(line: string, complete: boolean): void {
    const first = line[0]!;
    let cut = first !== ' ' && first !== '\t';
    if (cut && this.lists.length > 0 && /^[-+*\d]/.test(line)) {
      if (!complete && (/^[-+*]$|^\d{1,9}[.)]?$/.test(line) || /^([-*])(?:[ \t]*\1)*[ \t]*$/.test(line))) return; // not yet known
      const marker = markerOf(line);
      if (marker && marker.kind === this.outerList) cut = false;
    }
    if (cut) this.boundary = this.pendingBlank;
    this.pendingBlank = -1;
  }

  private endLine(line: string): void {
    const start = this.partialStart;
    const next = start + line.length + 1;
    this.linesRead += 1;
    if (this.pendingBlank >= 0 && !this.partialBlank) this.decidePending(line, true);
    this.readLine(line, start, next);
    this.partial = '';
    this.partialStart = next;
    this.partialBlank = true;
  }

  private readLine(line: string, start: number, next: number): void {
    const blank = line.trim() === '';
    const { col, index } = indentOf(line);
    if (this.fence) {
      const fence = this.fence;
      if (blank) {
        if (fence.container > 0) this.pendingBlank = next; // a list item (and its fence) may end at the next line
        return;
      }
      if (col >= fence.container) {
        if (col - fence.container <= 3 && CLOSER_AT.test(line.slice(index))) {
          const m = CLOSER_AT.exec(line.slice(index))!;
          if (m[1]![0] === fence.char && m[1]!.length >= fence.len) {
            this.fence = undefined;
            this.afterParagraph = false;
            if (fence.container === 0) this.boundary = next;
          }
        }
        return;
      }
      this.fence = undefined; // a line indented less than the item's content ends the item, and the fence in it
      this.afterParagraph = false;
    }
    if (blank) {
      this.pendingBlank = next;
      this.afterParagraph = false;
      return;
    }
    const rest = line.slice(index);
    // A lazy continuation line stays in the list item whatever its indent; anything else leaves the items it is
    // indented less than.
    const lazy = this.afterParagraph && !STARTS_BLOCK.test(rest) && !fenceOpener(rest) && !markerOf(rest) && !THEMATIC_BREAK.test(rest);
    const depth = this.lists.length;
    if (!lazy) while (this.lists.length > 0 && this.lists[this.lists.length - 1]! > col) this.lists.pop();
    // Interrupting a paragraph of the same container, a list must start with a non-empty item, and with 1 if ordered.
    let interrupting = this.afterParagraph && this.lists.length === depth;
    // List markers opening items on this line ("- ", "1. ", nested "- - "), each within 3 columns of its container.
    let c = col;
    let i = index;
    for (;;) {
      const container = this.lists[this.lists.length - 1] ?? 0;
      if (c - container > 3) break;
      const marker = markerOf(line.slice(i));
      if (!marker) break;
      const after = indentOf(line, i + marker.len, c + marker.len);
      const empty = after.index >= line.length;
      if (interrupting && (empty || (marker.kind === '.' || marker.kind === ')') && Number.parseInt(line.slice(i), 10) !== 1)) break;
      interrupting = false;
      const content = empty || after.col - (c + marker.len) > 4 ? c + marker.len + 1 : after.col;
      if (this.lists.length === 0) this.outerList = marker.kind;
      this.lists.push(content);
      if (empty || after.col - (c + marker.len) > 4) { c = after.col; i = after.index; break; }
      c = after.col;
      i = after.index;
    }
    const container = this.lists[this.lists.length - 1] ?? 0;
    const text = line.slice(i);
    const opener = c - container <= 3 ? fenceOpener(text) : null;
    if (opener) {
      this.fence = { char: opener[1]![0]!, len: opener[1]!.length, container, start, codeStart: next, info: opener[2]!.trim() };
      this.afterParagraph = false;
      return;
    }
    this.afterParagraph = text !== '' && !/^#{1,6}(?:[ \t]|$)/.test(text) && !THEMATIC_BREAK.test(text) && (c - container <= 3 || this.afterParagraph);
  }

  /** The top-level fence the text fed so far ends inside (its opener line complete), if any. A fence inside a list
   * item is not reported: the item is rendered as markdown, code included, until it ends. */
  get openFence(): OpenFence | undefined {
    return this.fence && this.fence.container === 0 ? { start: this.fence.start, codeStart: this.fence.codeStart, info: this.fence.info } : undefined;
  }
}

/** The last stable boundary at or after `from` (which must itself be a boundary, i.e. outside any fence). */
export function findStableBoundary(text: string, from: number): number {
  return new BlockScanner(from).feed(text.slice(from));
}

/** Where an unclosed fence begins in `tail` (its opener line complete), if the tail ends inside one. */
export function openFenceOf(tail: string): OpenFence | undefined {
  const scanner = new BlockScanner(0);
  scanner.feed(tail);
  return scanner.openFence;
}
