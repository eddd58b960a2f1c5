// Benchmark-only: the streaming renderer's per-frame cost of an answer, written on its <article> as data-render-*
// attributes for test/webview/support/render-cost.ts (the webview tests and bench/webview.ts read them). One flag
// turns it on: the build constant RENDER_STATS, false in the extension's bundle (esbuild.mjs; the minifier then drops
// this code, so production keeps no timings) and true in the bundle the webview test harness builds.
declare const RENDER_STATS: boolean;

export interface RenderStats {
  frames: number;
  totalMs: number;
  maxMs: number;
  /** Average frame cost over the first and the last tenth of the frames: equal-ish when cost does not grow. */
  firstTenthAvgMs: number;
  lastTenthAvgMs: number;
  finalizeMs: number;
  /** Markdown characters rendered when the answer ended (the whole answer, or a long one's rest). */
  finalizeChars: number;
  /** Nothing is left to render (a long answer renders its pieces again over some frames after it ended). */
  settled: boolean;
  /** The most markdown source one frame rendered (characters): the work per frame, which must not grow. */
  maxFrameChars: number;
  /** The most markdown one frame rendered again after a long answer ended (a group, see pieceGroups.ts). */
  maxRefreshChars: number;
}

/** The render times of one streamed answer; with RENDER_STATS off every method does nothing. */
export class FrameTimes {
  private readonly frameMs: number[] = [];
  private finalizeMs = 0;
  private finalizeChars = 0;
  private isSettled = false;
  private frameChars = 0;
  private maxFrameChars = 0;
  private maxRefreshChars = 0;

  /** A start time for `frame`/`finalized` (0 when off). */
  start(): number {
    return RENDER_STATS ? performance.now() : 0;
  }

  frame(start: number): void {
    if (!RENDER_STATS) return;
    this.frameMs.push(performance.now() - start);
    this.maxFrameChars = Math.max(this.maxFrameChars, this.frameChars);
    this.frameChars = 0;
  }

  /** `chars` of markdown rendered in the current frame. */
  work(chars: number): void {
    if (RENDER_STATS) this.frameChars += chars;
  }

  finalized(start: number): void {
    if (!RENDER_STATS) return;
    this.finalizeMs = performance.now() - start;
    this.finalizeChars = this.frameChars;
    this.frameChars = 0;
  }

  /** `chars` of markdown rendered again in the current frame, after the answer ended. */
  refreshed(chars: number): void {
    if (RENDER_STATS) this.maxRefreshChars = Math.max(this.maxRefreshChars, chars);
  }

  settled(): void {
    if (RENDER_STATS) this.isSettled = true;
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
      finalizeChars: this.finalizeChars,
      settled: this.isSettled,
      maxFrameChars: this.maxFrameChars,
      maxRefreshChars: this.maxRefreshChars,
    };
  }
}

export function publishRenderStats(article: HTMLElement, times: FrameTimes): void {
  if (!RENDER_STATS) return;
  const stats = times.stats();
  article.dataset.renderFrames = String(stats.frames);
  article.dataset.renderTotalMs = stats.totalMs.toFixed(2);
  article.dataset.renderMaxMs = stats.maxMs.toFixed(2);
  article.dataset.renderFirstTenthMs = stats.firstTenthAvgMs.toFixed(3);
  article.dataset.renderLastTenthMs = stats.lastTenthAvgMs.toFixed(3);
  article.dataset.renderFinalizeMs = stats.finalizeMs.toFixed(2);
  article.dataset.renderFinalizeChars = String(stats.finalizeChars);
  article.dataset.renderSettled = String(stats.settled);
  article.dataset.renderMaxFrameChars = String(stats.maxFrameChars);
  article.dataset.renderMaxRefreshChars = String(stats.maxRefreshChars);
}
