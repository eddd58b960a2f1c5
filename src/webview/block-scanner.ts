// Where a streamed answer can be cut into blocks that render the same alone as in the whole text: after a blank
// line followed by an unindented line, or after a fenced code block closes, never inside a fence. The scanner is
// incremental: it remembers where it stopped and in which fence it is, so each frame only reads the lines that
// arrived since the last one (a block of any length costs linear time in all).

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

const SPACE = /\s/;

export class BlockScanner {
  private pos: number;
  private fence: (Fence & OpenFence) | undefined;
  /** Offset just after the last blank line, while the line after it is still unknown; -1 when none. */
  private pendingBlank = -1;
  /** The last stable boundary found. */
  boundary: number;
  /** Complete lines read so far (each is read once: the cost of a frame is the text that arrived). */
  linesRead = 0;

  /** `from` must itself be a boundary (outside any fence). */
  constructor(from = 0) {
    this.pos = from;
    this.boundary = from;
  }

  /** Reads the lines of `text` (which only ever grows) added since the last call; returns the last boundary. */
  scan(text: string): number {
    let pos = this.pos;
    for (;;) {
      const nl = text.indexOf('\n', pos);
      const end = nl >= 0 ? nl : text.length;
      if (this.pendingBlank >= 0) {
        let i = pos;
        while (i < end && SPACE.test(text[i]!)) i += 1;
        if (i < end) {
          if (text[pos] !== ' ' && text[pos] !== '\t') this.boundary = this.pendingBlank;
          this.pendingBlank = -1;
        }
      }
      if (nl < 0) break;
      const line = text.slice(pos, nl);
      const next = nl + 1;
      this.linesRead += 1;
      if (this.fence) {
        if (closes(line, this.fence)) { this.fence = undefined; this.boundary = next; }
      } else {
        const opener = openerOf(line);
        if (opener) this.fence = { ...opener, start: pos, codeStart: next };
        else if (line.trim() === '') this.pendingBlank = next;
      }
      pos = next;
    }
    this.pos = pos;
    return this.boundary;
  }

  /** The fence the scanned text ends inside (its opener line complete), if any. */
  get openFence(): OpenFence | undefined {
    return this.fence && { start: this.fence.start, codeStart: this.fence.codeStart, info: this.fence.info };
  }
}

/** The last stable boundary at or after `from` (which must itself be a boundary, i.e. outside any fence). */
export function findStableBoundary(text: string, from: number): number {
  return new BlockScanner(from).scan(text);
}

/** Where an unclosed fence begins in `tail` (its opener line complete), if the tail ends inside one. */
export function openFenceOf(tail: string): OpenFence | undefined {
  const scanner = new BlockScanner(0);
  scanner.scan(tail);
  return scanner.openFence;
}
