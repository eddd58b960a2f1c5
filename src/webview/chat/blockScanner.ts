// Where a streamed answer can be cut into blocks that render the same alone as in the whole text: after a blank
// line followed by an unindented line, or after a fenced code block closes, never inside a fence. The scanner is
// fed only what arrived since the last frame and remembers the line it is in and the fence it is inside, so a
// block of any length costs linear time in all. (It never reads the whole text again: appending to a JavaScript
// string and then searching it copies the whole string once more.)

const FENCE = /^ {0,3}(`{3,}|~{3,})([^`]*)$/;

interface Fence { char: string; len: number }

export interface OpenFence {
  /** Offset of the opener line. */
  start: number;
  /** Offset of the first code character (after the opener line). */
  codeStart: number;
  info: string;
}

function openerOf(line: string): (Fence & { info: string }) | undefined {
  const m = FENCE.exec(line);
  if (!m) return undefined;
  if (m[1]![0] === '~' || !m[2]!.includes('`')) return { char: m[1]![0]!, len: m[1]!.length, info: m[2]!.trim() };
  return undefined;
}

function closes(line: string, fence: Fence): boolean {
  const m = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
  return !!m && m[1]![0] === fence.char && m[1]!.length >= fence.len;
}

const NON_SPACE = /\S/;

export class BlockScanner {
  /** The line being received (no line feed yet) and its offset. */
  private partial = '';
  private partialStart: number;
  /** The partial line held only white space so far. */
  private partialBlank = true;
  private fence: (Fence & OpenFence) | undefined;
  /** Offset just after the last blank line, while the line after it is still unknown; -1 when none. */
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
      // The first non-blank character of the line after a blank line decides whether the blank line is a boundary.
      if (this.partialBlank && NON_SPACE.test(piece)) {
        this.partialBlank = false;
        if (this.pendingBlank >= 0) {
          const first = (this.partial || piece)[0];
          if (first !== ' ' && first !== '\t') this.boundary = this.pendingBlank;
          this.pendingBlank = -1;
        }
      }
      if (nl < 0) { this.partial += piece; break; }
      this.endLine(this.partial + piece);
      pos = nl + 1;
    }
    return this.boundary;
  }

  private endLine(line: string): void {
    const start = this.partialStart;
    const next = start + line.length + 1;
    this.linesRead += 1;
    if (this.fence) {
      if (closes(line, this.fence)) { this.fence = undefined; this.boundary = next; }
    } else {
      const opener = openerOf(line);
      if (opener) this.fence = { ...opener, start, codeStart: next };
      else if (line.trim() === '') this.pendingBlank = next;
    }
    this.partial = '';
    this.partialStart = next;
    this.partialBlank = true;
  }

  /** The fence the text fed so far ends inside (its opener line complete), if any. */
  get openFence(): OpenFence | undefined {
    return this.fence && { start: this.fence.start, codeStart: this.fence.codeStart, info: this.fence.info };
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
