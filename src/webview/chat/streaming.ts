// Incremental rendering of the answer being streamed, at a cost per frame bounded by a few kilobytes however long
// the answer or its last block grows:
// - The text is cut at stable block boundaries (blockScanner.ts); each stable chunk is rendered once and appended.
// - Inside the open (last) block, a prefix is committed for display once the uncommitted rest passes ~2 KB: at a
//   list item, table row, blockquote child or a word/sentence boundary of a paragraph (blockCuts.ts); the pieces
//   of one block are joined by classes the stylesheet defines (and a streamed table keeps its header as context).
//   Only the rest is re-rendered per frame.
// - An open code fence only gets its new characters appended, in chunks (openFence.ts).
// - No link of the open block is live: what is still streaming may yet turn out to be code (a fence or code span
//   that closes later), so its links carry no target until the block is complete and rendered as a stable chunk.
// Block layout matters as much as parsing: a growing element that holds the whole block is laid out again on every
// frame, so each piece is its own element; and pieces and stable chunks go into groups of about 32 KB of source, each
// finished group with `content-visibility: auto`, so that the page lays out and paints only the groups near the view
// however long the answer (a 2 MB list or table would otherwise be laid out again on every frame); older groups out
// of view keep only their markdown until they come near the view again (pieceGroups.ts). When the answer ends it is
// rendered once as a whole, so the final view is exactly what rendering the whole answer gives (constructs spanning
// cuts, loose lists, reference links) -- up to WHOLE_RENDER_MAX. A longer answer costs seconds to render (and lay
// out) as a whole, in one task: it keeps its pieces instead. Its rest is rendered as a last piece; the pieces of its
// last block are rendered again in their final form, one group per frame (parked groups when they come back), with
// live links where the block was cut only between list items or table rows (a link cannot span those, nor turn into
// code across them); elsewhere its links stay inactive and say why.
import type { Strings } from '../../protocol';
import { BlockScanner } from './blockScanner';
import { chooseCut, forcedCut, kindOf, type Cut, type OpenBlockKind } from './blockCuts';
import { decorateCodeBlocks } from './codeBlocks';
import { el } from '../shared/dom';
import { LINK_ATTR, type MarkdownRenderer } from './markdown';
import { OpenFenceView } from './openFence';
import { PieceGroups } from './pieceGroups';
import { FrameTimes } from './renderStats';

/** Uncommitted text of the open block that triggers looking for a cut. */
const SOFT_LIMIT = 2048;
/** Beyond this a cut is made even where no construct boundary allows a clean one. */
const HARD_LIMIT = 16_384;
/**
 * Longest answer rendered again as a whole when it ends (about 0.7 ms per KB here: 2 MB took 1.2-1.7 s, see
 * bench/README.md); a longer one keeps its streamed pieces.
 */
export const WHOLE_RENDER_MAX = 128 * 1024;

/** How a piece's links are rendered: live, or inactive saying why (its block is still streaming, or never checked). */
type LinkMode = 'live' | 'pending' | 'unchecked';
interface OpenBlock {
  kind: OpenBlockKind;
  /** Rendered before the live text (a table's header rows), not shown again. */
  context: string;
  /** Pieces of this block already committed (the next one joins the last). */
  pieces: number;
  /** Number of the next item of an ordered list that continues across pieces. */
  olNext: number;
}

const freshBlock = (kind: OpenBlockKind = 'other'): OpenBlock => ({ kind, context: '', pieces: 0, olNext: 1 });

export class StreamingRenderer {
  /** The whole answer; read only when it ends (a frame reads only what it needs, see `fresh`). */
  private text = '';
  /** Text appended since the last frame. */
  private fresh: string[] = [];
  /** Start of the text not yet rendered as stable blocks, and that text. */
  private stableEnd = 0;
  private tailText = '';
  /** Start of the live text (after the pieces committed for display), and that text. */
  private softEnd = 0;
  private liveText = '';
  private scanner = new BlockScanner(0);
  private readonly stable = new PieceGroups(el('div', { class: 'stream-stable' }));
  private readonly tail = el('div', { class: 'stream-tail' });
  private readonly soft = new PieceGroups(el('div', { class: 'stream-soft' }));
  private readonly live = el('div', { class: 'stream-live' });
  private openFence: OpenFenceView | undefined;
  private block = freshBlock();
  private renderedLive: string | undefined;
  /** Live length at which the next cut is tried. */
  private cutAt = SOFT_LIMIT;
  private frame = 0;
  /** Whether the live text starts at a cut no link can span (see commitPiece). */
  private atCleanCut = true;
  /** Set when a long answer ended and kept its pieces: they render in their final form from then on. */
  private ended = false;
  /** Benchmark-only frame timings (recorded only in builds with RENDER_STATS on). */
  readonly times = new FrameTimes();

  constructor(
    private readonly body: HTMLElement,
    private readonly md: MarkdownRenderer,
    private readonly strings: () => Strings,
    initialText = '',
    /** Called after each frame's DOM update (the panel keeps the view scrolled to the bottom). */
    private readonly onRendered: () => void = () => undefined,
  ) {
    this.text = initialText;
    this.fresh.push(initialText);
    this.tail.append(this.soft.element, this.live);
    body.replaceChildren(this.stable.element, this.tail);
    this.renderFrame();
  }

  get content(): string {
    return this.text;
  }

  append(delta: string): void {
    this.text += delta;
    this.fresh.push(delta);
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.renderFrame(); });
  }

  /**
   * Shows the text in its final form and stops: rendered once as a whole, or for an answer longer than
   * WHOLE_RENDER_MAX its rest rendered as a last piece and its pieces rendered again over the next frames.
   * `onSettled` runs when nothing is left to do.
   */
  finalize(finalText?: string, onSettled: () => void = () => undefined): void {
    if (this.frame) { cancelAnimationFrame(this.frame); this.frame = 0; }
    const t0 = this.times.start();
    const continues = finalText === undefined || finalText.startsWith(this.text);
    if (finalText !== undefined && continues && finalText.length > this.text.length) this.fresh.push(finalText.slice(this.text.length));
    if (finalText !== undefined) this.text = finalText;
    if (this.text.length <= WHOLE_RENDER_MAX || !continues) {
      this.body.replaceChildren(this.renderMarkdown(this.text));
      this.times.finalized(t0);
      this.onRendered();
      this.times.settled();
      onSettled();
      return;
    }
    this.update(false); // what arrived since the last frame (the rest below renders the open block's text)
    this.ended = true;
    const rest = this.tailText.slice(this.softEnd - this.stableEnd);
    this.openFence?.pre.remove();
    this.openFence = undefined;
    this.live.replaceChildren();
    if (rest) this.commitPiece(rest, true);
    this.stable.end(false); // stable chunks were complete blocks: already in their final form
    this.soft.end(true);
    this.times.finalized(t0);
    this.onRendered();
    const step = () => {
      const t1 = this.times.start();
      const chars = this.soft.refreshNext();
      if (chars < 0) { this.frame = 0; this.times.settled(); onSettled(); return; }
      this.times.refreshed(chars);
      this.onRendered();
      this.times.frame(t1);
      this.frame = requestAnimationFrame(step);
    };
    this.frame = requestAnimationFrame(step);
  }

  /** `links`: how the links of the markdown are rendered (see LinkMode). */
  private renderMarkdown(markdown: string, links: LinkMode = 'live'): DocumentFragment {
    this.times.work(markdown.length);
    return this.build(markdown, links);
  }

  /** The DOM of `markdown` (uncounted: a parked group is rendered again outside the frames). */
  private build(markdown: string, links: LinkMode): DocumentFragment {
    const frag = this.md.render(markdown);
    const strings = this.strings();
    decorateCodeBlocks(frag, strings);
    if (links !== 'live') disarmLinks(frag, links === 'pending' ? strings.linkPending : strings.linkUnchecked);
    return frag;
  }

  private renderFrame(): void {
    const t0 = this.times.start();
    this.update();
    this.onRendered(); // inside the timing: keeping the view at the bottom forces a layout
    if (this.text.length > 0) this.times.frame(t0);
  }

  /** Renders the text that arrived since the last update (`tail`: also the open block, else only stable blocks). */
  private update(tail = true): void {
    const fresh = this.fresh.join('');
    this.fresh = [];
    this.tailText += fresh;
    const fenceOpen = this.openFence !== undefined;
    if (!fenceOpen) this.liveText += fresh;
    const boundary = this.scanner.feed(fresh);
    if (boundary > this.stableEnd) this.commitStable(boundary);
    if (!tail) return;
    const fence = this.scanner.openFence;
    if (fence && fence.start >= this.softEnd) this.renderOpenFence(fence.start, fence.codeStart, fence.info, fenceOpen && this.openFence ? fresh : '');
    else this.renderLive();
  }

  private commitStable(boundary: number): void {
    const rest = this.tailText.slice(boundary - this.stableEnd);
    const chunk = this.tailText.slice(0, boundary - this.stableEnd);
    this.stable.append(this.renderMarkdown(chunk), chunk.length, () => this.build(chunk, 'live'));
    this.tailText = rest;
    this.liveText = rest;
    this.stableEnd = boundary;
    this.softEnd = boundary;
    this.openFence?.pre.remove();
    this.openFence = undefined;
    this.soft.clear();
    this.live.replaceChildren();
    this.renderedLive = undefined;
    this.block = freshBlock();
    this.cutAt = SOFT_LIMIT;
    this.atCleanCut = true;
  }

  /** `fresh`: the text that arrived this frame, when the fence was already open before it. */
  private renderOpenFence(start: number, codeStart: number, info: string, fresh: string): void {
    if (this.openFence?.start === start) {
      this.openFence.append(fresh);
      return;
    }
    // What precedes the opener is complete: commit it once. The code so far goes in at once.
    if (start > this.softEnd) this.commitPiece(this.liveText.slice(0, start - this.softEnd), true);
    const code = this.liveText.slice(codeStart - this.softEnd);
    this.softEnd = start;
    this.liveText = '';
    this.block = freshBlock();
    this.live.replaceChildren();
    this.renderedLive = undefined;
    this.openFence?.pre.remove();
    this.openFence = new OpenFenceView(start, info, this.strings());
    this.tail.append(this.openFence.pre);
    this.openFence.append(code);
  }

  private renderLive(): void {
    let live = this.liveText;
    if (live === this.renderedLive) return;
    while (live.length >= this.cutAt) {
      const cut = this.findCut(live);
      if (!cut) { this.cutAt = live.length + SOFT_LIMIT / 2; break; }
      this.commitPiece(live.slice(0, cut.offset), !cut.forced && (!cut.continues || cut.kind === 'list' || cut.kind === 'table'));
      this.softEnd += cut.offset;
      this.block = cut.continues ? { ...this.block, kind: cut.kind, context: cut.context } : freshBlock(cut.kind);
      live = live.slice(cut.offset);
      this.liveText = live;
      this.cutAt = SOFT_LIMIT;
    }
    const frag = this.renderMarkdown(this.block.context + live, 'pending');
    this.join(frag);
    this.live.replaceChildren(frag);
    this.renderedLive = live;
  }

  private findCut(live: string): (Cut & { forced?: boolean }) | undefined {
    const outline = this.md.outline(this.block.context + live);
    const cut = chooseCut(live, this.block.context, outline, Math.min(SOFT_LIMIT / 2, live.length - 1));
    if (cut) return cut;
    if (live.length < HARD_LIMIT) return undefined;
    const last = outline[outline.length - 1];
    return { offset: forcedCut(live, HARD_LIMIT - SOFT_LIMIT), kind: last ? kindOf(last.type) : this.block.kind, context: this.block.context, continues: true, forced: true };
  }

  /**
   * Renders a committed piece of the open block once and appends it to the view. `cleanEnd`: the piece ends between
   * top-level blocks, list items or table rows (or where the text ends); a piece cut cleanly at both ends renders
   * with live links once the answer ended and kept its pieces.
   */
  private commitPiece(markdown: string, cleanEnd: boolean): void {
    const source = this.block.context + markdown;
    const clean = this.atCleanCut && cleanEnd;
    this.atCleanCut = cleanEnd;
    const links = (): LinkMode => (!this.ended ? 'pending' : clean ? 'live' : 'unchecked');
    const frag = this.renderMarkdown(source, links());
    this.join(frag);
    const last = frag.lastElementChild;
    if (last?.tagName === 'OL') this.block.olNext = Number(last.getAttribute('start') ?? '1') + last.children.length;
    this.soft.append(frag, markdown.length, () => this.build(source, links()));
    this.block.pieces += 1;
  }

  /** Makes the first element of `frag` read as the continuation of the last committed piece of the same block. */
  private join(frag: DocumentFragment): void {
    const first = frag.firstElementChild;
    const prev = this.soft.last;
    if (this.block.pieces === 0 || !first || !prev || first.tagName !== prev.tagName) return;
    prev.classList.add('stream-join-next');
    first.classList.add('stream-join-prev');
    if (first.tagName === 'OL') first.setAttribute('start', String(this.block.olNext));
    if (first.tagName === 'TABLE') {
      first.querySelector('thead')?.remove();
      prev.classList.add('stream-table-chunk');
      first.classList.add('stream-table-chunk');
    }
  }
}

/** Links of the open block: shown as links to be, with no target (links.ts opens only elements with one), saying so. */
function disarmLinks(frag: DocumentFragment, why: string): void {
  for (const a of Array.from(frag.querySelectorAll(`a[${LINK_ATTR}]`))) {
    a.removeAttribute(LINK_ATTR);
    a.setAttribute('title', [a.getAttribute('title'), why].filter(Boolean).join('\n'));
    a.removeAttribute('role');
    a.removeAttribute('tabindex');
    a.classList.add('link-pending');
  }
}
