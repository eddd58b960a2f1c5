// Large plain code in line-aligned chunks: each chunk (64 lines, or fewer when they pass 8 KB) is a block of its
// own and eight chunks make a group the stylesheet renders with `content-visibility: auto` once complete, sized
// 512 lines while skipped. One text node holding megabytes is laid out again in full whenever it changes, and in
// full the first time even where only its first lines are on screen; chunks keep layout to what changed or shows.
// Selecting and copying across chunks gives the same text (the chunks split at line ends).
import { hasInvisibleCharacters } from '../../core/text/invisibleCharacters';
import type { Strings } from '../../protocol';
import { el } from '../shared/dom';
import { appendMarkedText } from './invisibleMarks';

/** Keep in step with `contain-intrinsic-size` of `.code-chunk-group` in media/chat/chat.css (8 × 64 = 512 lines). */
export const CHUNK_LINES = 64;
export const GROUP_CHUNKS = 8;
const CHUNK_CHARS = 8192;

/** Plain code blocks above this many characters are chunked (highlighted ones stop at MAX_HIGHLIGHT_CHARS). */
export const LARGE_CODE_CHARS = 64 * 1024;

export class ChunkWriter {
  private group: HTMLElement | undefined;
  private groupChunks = 0;
  private chunk: HTMLElement | undefined;
  private chunkLines = 0;
  private chunkChars = 0;

  /** `plain`: the caller knows the text holds no invisible characters (no marking needed). */
  constructor(private readonly code: HTMLElement, private readonly strings: Strings, private readonly plain = false) {}

  /** Appends code text; chunks end only after a line feed. */
  append(text: string): void {
    let pos = 0;
    while (pos < text.length) {
      if (!this.chunk) this.newChunk();
      // Take whole lines until the chunk is full (or the text ends), then write them at once.
      let end = pos;
      let full = false;
      while (!full) {
        const nl = text.indexOf('\n', end);
        if (nl < 0) { end = text.length; break; }
        end = nl + 1;
        this.chunkLines += 1;
        full = this.chunkLines >= CHUNK_LINES || this.chunkChars + (end - pos) >= CHUNK_CHARS;
      }
      this.write(text.slice(pos, end));
      pos = end;
      if (full) this.chunk = undefined;
    }
  }

  /** Marks every group complete (the code will not grow any more). */
  finish(): void {
    for (const g of Array.from(this.code.querySelectorAll(':scope > .code-chunk-group'))) g.classList.add('code-chunk-done');
  }

  private write(s: string): void {
    if (this.plain) this.chunk!.append(s);
    else appendMarkedText(this.chunk!, s, this.strings);
    this.chunkChars += s.length;
  }

  private newChunk(): void {
    if (!this.group || this.groupChunks >= GROUP_CHUNKS) {
      this.group?.classList.add('code-chunk-done');
      this.group = el('span', { class: 'code-chunk-group' });
      this.code.append(this.group);
      this.groupChunks = 0;
    }
    this.chunk = el('span', { class: 'code-chunk' });
    this.group.append(this.chunk);
    this.groupChunks += 1;
    this.chunkLines = 0;
    this.chunkChars = 0;
  }
}

/** Rewrites a large plain (unhighlighted) `code` element into chunks; leaves anything else alone. */
export function chunkLargeCode(code: HTMLElement, strings: Strings): void {
  const text = code.textContent ?? '';
  if (text.length <= LARGE_CODE_CHARS || Array.from(code.childNodes).some((n) => n.nodeType !== Node.TEXT_NODE)) return;
  code.replaceChildren();
  const writer = new ChunkWriter(code, strings, !hasInvisibleCharacters(text));
  writer.append(text);
  writer.finish();
}
