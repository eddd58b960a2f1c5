// The rendered pieces of a streamed answer, appended in groups of about 32 KB of source (streaming.ts). The last
// group is open; a finished group gets `content-visibility: auto` (the page lays out and paints only the groups near
// the view). A finished group that is out of view and older than the last few is also *parked*: its DOM is dropped
// and only its markdown kept, so the page holds the DOM of a few groups however long the answer. (Every element costs
// the browser's garbage collector on each major collection: with a 2 MB table fully in the DOM, one collection took
// hundreds of milliseconds inside a frame.) A parked group keeps its size (`contain-intrinsic-size: auto` remembers
// the size it last had on screen), and is rendered again from its markdown, through the same sanitising renderer, when
// it comes near the view. Only what the streaming renderer decided after rendering is written back by hand: the
// classes and `start` of each top-level element (how pieces were joined) and whether a table chunk showed its header.
// When a very long answer ends (streaming.ts), its groups stay: every group still holding DOM is rendered again from
// its pieces in their final form (links live), one group per animation frame, or parked at once when out of view.
import { el } from '../shared/dom';

/** Source characters of rendered pieces per group. */
export const GROUP_CHARS = 32_768;
/** The most recent finished groups are never parked (a join may still change the last element). */
const KEEP_DONE = 2;

/** Renders one piece again, exactly as when it was committed (before any join). */
export type RenderPiece = () => DocumentFragment;

interface TopLevelState {
  className: string;
  start: string | null;
  thead: boolean;
}

interface Group {
  element: HTMLElement;
  pieces: RenderPiece[];
  /** Source characters of its pieces. */
  chars: number;
  finished: boolean;
  /** Its DOM was rendered before the answer ended and is to be rendered again (see `refreshNext`). */
  stale: boolean;
  /** Off screen (content-visibility skips it), as the browser last reported. */
  skipped: boolean;
  /** Set while parked: the top-level elements' state to restore after rendering the pieces again. */
  parked?: TopLevelState[];
}

/** `skipped` of a `contentvisibilityautostatechange` event (typed loosely: older DOM typings lack the event). */
function skippedOf(e: Event): boolean {
  return (e as Event & { skipped?: boolean }).skipped === true;
}

export class PieceGroups {
  private readonly groups: Group[] = [];
  private openChars = 0;
  /** The answer ended: no group is open and none is kept back from parking. */
  private ended = false;

  constructor(readonly element: HTMLElement) {}

  /** Appends a rendered piece; `render` renders it again after its group was parked. */
  append(frag: DocumentFragment, chars: number, render: RenderPiece): void {
    let open = this.groups[this.groups.length - 1];
    if (!open || this.openChars >= GROUP_CHARS) {
      if (open) this.finish(open);
      open = { element: el('div', { class: 'stream-group' }), pieces: [], chars: 0, finished: false, stale: false, skipped: false };
      this.groups.push(open);
      this.openChars = 0;
      this.element.append(open.element);
    }
    open.element.append(frag);
    open.pieces.push(render);
    open.chars += chars;
    this.openChars += chars;
  }

  /** The last rendered element (a join continues it). */
  get last(): Element | null {
    return this.groups[this.groups.length - 1]?.element.lastElementChild ?? null;
  }

  /** Groups whose DOM is dropped now (benchmarks and tests read it too, as `.stream-group-parked`). */
  get parkedCount(): number {
    return this.groups.filter((g) => g.parked).length;
  }

  /**
   * The answer ended: the open group is finished too, and with `rerender` every group that holds DOM is marked to be
   * rendered again by `refreshNext` (parked ones are rendered in their final form when they come back).
   */
  end(rerender: boolean): void {
    this.ended = true;
    const open = this.groups[this.groups.length - 1];
    if (open && !open.finished) this.finish(open);
    if (rerender) for (const group of this.groups) group.stale = !group.parked;
  }

  /**
   * Renders the newest stale group again (or parks it when out of view): the characters of markdown rendered, 0 when
   * it was parked, -1 when no group is stale any more.
   */
  refreshNext(): number {
    const group = [...this.groups].reverse().find((g) => g.stale);
    if (!group) return -1;
    this.park(group);
    if (group.skipped) return 0;
    this.restore(group);
    return group.chars;
  }

  clear(): void {
    this.element.replaceChildren();
    this.groups.length = 0;
    this.openChars = 0;
  }

  private finish(group: Group): void {
    group.finished = true;
    group.element.classList.add('stream-group-done');
    group.element.addEventListener('contentvisibilityautostatechange', (e) => {
      group.skipped = skippedOf(e);
      if (!group.skipped) this.restore(group);
      else this.parkOld();
    });
    this.parkOld();
  }

  /** Parks every finished group that is out of view, except the most recent ones. */
  private parkOld(): void {
    const done = this.ended ? this.groups.length : this.groups.length - 1; // while streaming the last group is open
    for (let i = 0; i < done - (this.ended ? 0 : KEEP_DONE); i += 1) {
      const group = this.groups[i]!;
      if (group.skipped && !group.parked) this.park(group);
    }
  }

  private park(group: Group): void {
    group.stale = false;
    group.parked = Array.from(group.element.children, (child) => ({
      className: child.getAttribute('class') ?? '',
      start: child.getAttribute('start'),
      thead: child.tagName !== 'TABLE' || child.querySelector(':scope > thead') !== null,
    }));
    group.element.replaceChildren();
    group.element.classList.add('stream-group-parked');
  }

  private restore(group: Group): void {
    const state = group.parked;
    if (!state) return;
    group.parked = undefined;
    group.stale = false;
    const frag = document.createDocumentFragment();
    for (const render of group.pieces) frag.append(render());
    Array.from(frag.children).forEach((child, i) => {
      const s = state[i];
      if (!s) return;
      if (s.className) child.setAttribute('class', s.className);
      else child.removeAttribute('class');
      if (s.start !== null) child.setAttribute('start', s.start);
      else child.removeAttribute('start');
      if (!s.thead) child.querySelector(':scope > thead')?.remove();
    });
    group.element.classList.remove('stream-group-parked');
    group.element.append(frag);
  }
}
