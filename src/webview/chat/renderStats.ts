// Benchmark-only: the streaming renderer's per-frame cost of an answer, written on its <article> as data-render-*
// attributes for test/webview/support/render-cost.ts (the webview tests and bench/webview.ts read them). One flag
// turns it on: the build constant RENDER_STATS, false in the extension's bundle (esbuild.mjs; the minifier then drops
// this code) and true in the bundle the webview test harness builds.
import type { RenderStats } from './streaming';

declare const RENDER_STATS: boolean;

export function publishRenderStats(article: HTMLElement, stats: RenderStats): void {
  if (!RENDER_STATS) return;
  article.dataset.renderFrames = String(stats.frames);
  article.dataset.renderTotalMs = stats.totalMs.toFixed(2);
  article.dataset.renderMaxMs = stats.maxMs.toFixed(2);
  article.dataset.renderFirstTenthMs = stats.firstTenthAvgMs.toFixed(3);
  article.dataset.renderLastTenthMs = stats.lastTenthAvgMs.toFixed(3);
  article.dataset.renderFinalizeMs = stats.finalizeMs.toFixed(2);
}
