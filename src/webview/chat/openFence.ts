// The view of a code fence that is still open while the answer streams: new code is appended, never re-rendered,
// and highlighting waits until the fence closes (the block is then rendered once, highlighted). The text goes into
// line-aligned chunks (codeChunks.ts), so the browser lays out only the chunk that grows.
import type { Strings } from '../../protocol';
import { ChunkWriter } from './codeChunks';
import { el } from '../shared/dom';

export class OpenFenceView {
  readonly pre: HTMLElement;
  private readonly writer: ChunkWriter;
  /** A high surrogate that arrived without its pair (a delta may end between the two). */
  private held = '';

  constructor(readonly start: number, info: string, strings: Strings) {
    const lang = info.split(/\s+/)[0] ?? '';
    const code = el('code', { class: lang ? `language-${lang}` : undefined });
    this.pre = el('pre', { class: 'streaming-code' }, code);
    this.writer = new ChunkWriter(code, strings);
  }

  /** Appends code; a trailing high surrogate waits for its pair. */
  append(text: string): void {
    const all = this.held + text;
    const last = all.charCodeAt(all.length - 1);
    const end = last >= 0xd800 && last <= 0xdbff ? all.length - 1 : all.length;
    this.held = all.slice(end);
    if (end > 0) this.writer.append(all.slice(0, end));
  }
}
