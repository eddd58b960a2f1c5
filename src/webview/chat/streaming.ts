// Incremental rendering of the answer being streamed. The text is cut at "stable" block boundaries (a blank line
// followed by an unindented line, or the end of a fenced code block, never inside a fence): each stable chunk is
// rendered once and appended; only the tail after the last boundary is re-rendered per animation frame, and an open
// code fence in the tail only gets its new characters appended to a text node. So a frame costs about the size of
// the last block, not of the message or the conversation. When the answer ends it is rendered once as a whole (so
// constructs that span chunks, like loose lists or reference links, come out exactly as markdown-it renders them).
import type { Strings } from '../../protocol';
import { decorateCodeBlocks } from './code-blocks';
import { el } from '../shared/dom';
import type { MarkdownRenderer } from './markdown';

const FENCE = /^ {0,3}(`{3,}|~{3,})([^`]*)$/;

interface Fence { char: string; len: number }

function openerOf(line: string): (Fence & { info: string }) | undefined {
  const m = FENCE.exec(line);
  if (!m) return undefined;
  if (m[1][0] === '~' || !m[2].includes('`')) return { char: m[1][0], len: m[1].length, info: m[2].trim() };
  return undefined;
}

function closes(line: string, fence: Fence): boolean {
  const m = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
  return !!m && m[1][0] === fence.char && m[1].length >= fence.len;
}

/** The last stable boundary at or after `from` (which must itself be a boundary, i.e. outside any fence). */
export function findStableBoundary(text: string, from: number): number {
  let boundary = from;
  let fence: Fence | undefined;
  let pendingBlank = -1;
  let pos = from;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const complete = nl >= 0;
    const line = text.slice(pos, complete ? nl : text.length);
    const next = complete ? nl + 1 : text.length;
    if (pendingBlank >= 0 && line.trim() !== '') {
      if (!/^[ \t]/.test(line)) boundary = pendingBlank;
      pendingBlank = -1;
    }
    if (!complete) break;
    if (fence) {
      if (closes(line, fence)) { fence = undefined; boundary = next; }
    } else {
      const opener = openerOf(line);
      if (opener) fence = opener;
      else if (line.trim() === '') pendingBlank = next;
    }
    pos = next;
  }
  return boundary;
}

/** Where an unclosed fence begins in `tail` (its opener line complete), if the tail ends inside one. */
export function openFenceOf(tail: string): { start: number; codeStart: number; info: string } | undefined {
  let open: { start: number; codeStart: number; info: string; fence: Fence } | undefined;
  let pos = 0;
  while (pos < tail.length) {
    const nl = tail.indexOf('\n', pos);
    if (nl < 0) break;
    const line = tail.slice(pos, nl);
    if (open) {
      if (closes(line, open.fence)) open = undefined;
    } else {
      const o = openerOf(line);
      if (o) open = { start: pos, codeStart: nl + 1, info: o.info, fence: o };
    }
    pos = nl + 1;
  }
  return open && { start: open.start, codeStart: open.codeStart, info: open.info };
}

export interface RenderStats {
  frames: number;
  totalMs: number;
  maxMs: number;
  /** Average frame cost over the first and the last tenth of the frames: equal-ish when cost does not grow. */
  firstTenthAvgMs: number;
  lastTenthAvgMs: number;
  finalizeMs: number;
}

export class StreamingRenderer {
  private text = '';
  private stableEnd = 0;
  private readonly stable = el('div', { class: 'stream-stable' });
  private readonly tail = el('div', { class: 'stream-tail' });
  private readonly tailPrefix = el('div', { class: 'stream-tail-prefix' });
  private tailCode: { start: number; node: Text; len: number; pre: HTMLElement } | undefined;
  private lastPrefix: string | undefined;
  private frame = 0;
  private readonly frameMs: number[] = [];
  private finalizeMs = 0;

  constructor(
    private readonly body: HTMLElement,
    private readonly md: MarkdownRenderer,
    private readonly strings: () => Strings,
    initialText = '',
    /** Called after each frame's DOM update (the panel keeps the view scrolled to the bottom). */
    private readonly onRendered: () => void = () => undefined,
  ) {
    this.text = initialText;
    this.tail.append(this.tailPrefix);
    body.replaceChildren(this.stable, this.tail);
    this.renderFrame();
  }

  get content(): string {
    return this.text;
  }

  append(delta: string): void {
    this.text += delta;
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.renderFrame(); });
  }

  /** Renders the whole text once, in its final form, and stops. */
  finalize(finalText?: string): RenderStats {
    if (this.frame) { cancelAnimationFrame(this.frame); this.frame = 0; }
    if (finalText !== undefined) this.text = finalText;
    const t0 = performance.now();
    const frag = this.md.render(this.text);
    decorateCodeBlocks(frag, this.strings());
    this.body.replaceChildren(frag);
    this.finalizeMs = performance.now() - t0;
    this.onRendered();
    return this.stats();
  }

  stats(): RenderStats {
    const n = this.frameMs.length;
    const tenth = Math.max(1, Math.floor(n / 10));
    const avg = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
    return {
      frames: n,
      totalMs: this.frameMs.reduce((a, b) => a + b, 0),
      maxMs: n ? Math.max(...this.frameMs) : 0,
      firstTenthAvgMs: avg(this.frameMs.slice(0, tenth)),
      lastTenthAvgMs: avg(this.frameMs.slice(n - tenth)),
      finalizeMs: this.finalizeMs,
    };
  }

  private renderFrame(): void {
    const t0 = performance.now();
    const boundary = findStableBoundary(this.text, this.stableEnd);
    if (boundary > this.stableEnd) {
      const frag = this.md.render(this.text.slice(this.stableEnd, boundary));
      decorateCodeBlocks(frag, this.strings());
      this.stable.append(frag);
      this.stableEnd = boundary;
      this.resetTail();
    }
    const tail = this.text.slice(this.stableEnd);
    const open = openFenceOf(tail);
    if (open) {
      const prefix = tail.slice(0, open.start);
      if (prefix !== this.lastPrefix) {
        this.tailPrefix.replaceChildren(this.md.render(prefix));
        this.lastPrefix = prefix;
      }
      if (!this.tailCode || this.tailCode.start !== open.start) {
        this.tailCode?.pre.remove();
        const node = document.createTextNode('');
        const lang = open.info.split(/\s+/)[0] ?? '';
        const code = el('code', { class: lang ? `language-${lang}` : undefined }, node);
        const pre = el('pre', { class: 'streaming-code' }, code);
        this.tail.append(pre);
        this.tailCode = { start: open.start, node, len: 0, pre };
      }
      const code = tail.slice(open.codeStart);
      this.tailCode.node.appendData(code.slice(this.tailCode.len));
      this.tailCode.len = code.length;
    } else {
      if (this.tailCode) { this.tailCode.pre.remove(); this.tailCode = undefined; }
      if (tail !== this.lastPrefix) {
        this.tailPrefix.replaceChildren(this.md.render(tail));
        this.lastPrefix = tail;
      }
    }
    this.onRendered(); // inside the timing: keeping the view at the bottom forces a layout
    if (this.text.length > 0) this.frameMs.push(performance.now() - t0);
  }

  private resetTail(): void {
    this.tailCode?.pre.remove();
    this.tailCode = undefined;
    this.lastPrefix = undefined;
    this.tailPrefix.replaceChildren();
  }
}
