// The view of a code fence that is still open while the answer streams: new code is appended, never re-rendered,
// and highlighting waits until the fence closes (the block is then rendered once, highlighted). The text goes into
// block-level chunks of about 4 KB at line ends, grouped 32 to a group, so the browser lays out only the chunk
// that grows: one text node holding megabytes would be laid out again, in full, on every frame.
import type { Strings } from '../protocol';
import { el } from './dom';
import { appendMarkedText } from './invisible-marks';

const CHUNK_CHARS = 4096;
const GROUP_CHUNKS = 32;

export class OpenFenceView {
  readonly pre: HTMLElement;
  private readonly code: HTMLElement;
  private group: HTMLElement | undefined;
  private groupChunks = 0;
  private chunk: HTMLElement | undefined;
  private chunkChars = 0;
  /** Characters of code appended so far. */
  appended = 0;

  constructor(readonly start: number, info: string, private readonly strings: Strings) {
    const lang = info.split(/\s+/)[0] ?? '';
    this.code = el('code', { class: lang ? `language-${lang}` : undefined });
    this.pre = el('pre', { class: 'streaming-code' }, this.code);
  }

  /** Appends code; a trailing high surrogate waits for its pair (a delta may end between the two). */
  append(text: string): void {
    let end = text.length;
    const lastCode = text.charCodeAt(end - 1);
    if (lastCode >= 0xd800 && lastCode <= 0xdbff) end -= 1;
    let pos = 0;
    while (pos < end) {
      if (!this.chunk || this.chunkChars >= CHUNK_CHARS) {
        // A full chunk takes text up to the end of its line, so chunks always split at line ends.
        if (this.chunk) {
          const nl = text.indexOf('\n', pos);
          if (nl < 0 || nl >= end) { this.write(text.slice(pos, end)); pos = end; break; }
          this.write(text.slice(pos, nl + 1));
          pos = nl + 1;
          if (pos >= end) break;
        }
        this.newChunk();
      }
      let take = Math.min(end - pos, CHUNK_CHARS - this.chunkChars);
      const c = text.charCodeAt(pos + take - 1);
      if (c >= 0xd800 && c <= 0xdbff && pos + take < end) take += 1;
      this.write(text.slice(pos, pos + take));
      pos += take;
    }
    this.appended += end;
  }

  private write(s: string): void {
    if (!s) return;
    appendMarkedText(this.chunk!, s, this.strings);
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
    this.chunkChars = 0;
  }
}
