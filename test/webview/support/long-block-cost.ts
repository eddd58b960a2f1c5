// Render cost of ONE long block while it streams (a paragraph with no blank line, a tight list, a table, an open
// code fence): the text is fed `charsPerFrame` characters per animation frame into a fresh assistant message, and
// the per-frame render statistics the streaming renderer records on the message (data-render-*) are read back,
// together with the longest task the page ran (PerformanceObserver 'longtask', tasks of 50 ms and more) and the
// final render. Used by bench/webview.ts (webview_long_block_linearity and the audit cases) and, for structure
// only, by the webview tests.
import type { Panel } from './harness';
import { READY_SERVER } from './harness';

export type LongBlockKind = 'paragraph' | 'list' | 'table' | 'fence';

const WORDS = ['the', 'stream', 'renders', 'only', 'its', 'tail', 'so', 'a', 'frame', 'costs', 'little', '模型', '输出', '逐步', '显示', 'value', 'buffer', 'token'];

/** A deterministic block of about `chars` characters of the given kind (no blank line inside). */
export function longBlock(kind: LongBlockKind, chars: number): string {
  let seed = 7;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return (seed >>> 16) % n; };
  const sentence = (i: number) => {
    const words = Array.from({ length: 6 + rnd(8) }, () => WORDS[rnd(WORDS.length)]!);
    if (i % 3 === 0) words[1] = `**${words[1]}**`;
    if (i % 4 === 0) words[3] = `\`${words[3]}()\``;
    if (i % 7 === 0) words[2] = `[${words[2]}](https://example.com/${i})`;
    return `${words.join(' ')}.`;
  };
  const parts: string[] = [];
  let size = 0;
  const push = (s: string) => { parts.push(s); size += s.length; };
  switch (kind) {
    case 'paragraph':
      for (let i = 0; size < chars; i += 1) push(`${sentence(i)} `);
      break;
    case 'list':
      for (let i = 0; size < chars; i += 1) push(`- ${sentence(i)}\n`);
      break;
    case 'table':
      push('| # | name | note | value |\n|:--|:-:|---|--:|\n');
      for (let i = 0; size < chars; i += 1) push(`| ${i} | \`item_${i}\` | ${WORDS[rnd(WORDS.length)]} ${WORDS[rnd(WORDS.length)]} | ${(i * 7919) % 10007} |\n`);
      break;
    case 'fence':
      push('```python\n');
      for (let i = 0; size < chars; i += 1) push(`    value_${i} = compute(${i}, "${WORDS[rnd(WORDS.length)]}") + 1  # line ${i}\n`);
      break;
  }
  return parts.join('').slice(0, chars);
}

export interface LongBlockCost {
  chars: number;
  charsPerFrame: number;
  frames: number;
  totalMs: number;
  maxMs: number;
  firstTenthAvgMs: number;
  lastTenthAvgMs: number;
  /** lastTenthAvgMs ÷ firstTenthAvgMs: 1 when a frame costs the same at the end of the block as at its start. */
  growth: number;
  finalizeMs: number;
  /** The longest task of the page while streaming and finalizing (0 when none reached 50 ms). */
  longestTaskMs: number;
  longTasks: number;
  wallMs: number;
}

/** Streams `text` into a fresh streaming message, `charsPerFrame` characters a frame, then ends it. */
export async function measureTextStream(panel: Panel, text: string, charsPerFrame: number): Promise<LongBlockCost> {
  const messages = [
    { id: 'lq', role: 'user', content: 'long block', status: 'complete' },
    { id: 'lstream', role: 'assistant', content: '', status: 'streaming' },
  ];
  await panel.send({ type: 'state', conversations: [], activeId: 'clong', messages, server: READY_SERVER, busy: true });
  return panel.page.evaluate(async ({ text, perFrame }) => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => r(undefined)));
    const tasks: number[] = [];
    const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) tasks.push(e.duration); });
    observer.observe({ type: 'longtask' });
    await frame();
    const started = performance.now();
    for (let i = 0; i < text.length; i += perFrame) {
      window.dispatchEvent(new MessageEvent('message', { data: { type: 'delta', conversationId: 'clong', messageId: 'lstream', text: text.slice(i, i + perFrame) } }));
      await frame();
    }
    window.dispatchEvent(new MessageEvent('message', { data: { type: 'messageDone', conversationId: 'clong', messageId: 'lstream', status: 'complete', finishReason: 'stop' } }));
    await frame();
    await new Promise((r) => setTimeout(r, 50)); // let the observer deliver the last entries
    for (const e of observer.takeRecords()) tasks.push(e.duration);
    observer.disconnect();
    const wallMs = performance.now() - started;
    const d = (document.querySelector('article[data-id="lstream"]') as HTMLElement).dataset;
    const first = Number(d.renderFirstTenthMs);
    const last = Number(d.renderLastTenthMs);
    return {
      chars: text.length,
      charsPerFrame: perFrame,
      frames: Number(d.renderFrames),
      totalMs: Number(d.renderTotalMs),
      maxMs: Number(d.renderMaxMs),
      firstTenthAvgMs: first,
      lastTenthAvgMs: last,
      growth: first > 0 ? last / first : Number.NaN,
      finalizeMs: Number(d.renderFinalizeMs),
      longestTaskMs: tasks.length ? Math.max(...tasks) : 0,
      longTasks: tasks.length,
      wallMs,
    };
  }, { text, perFrame: charsPerFrame });
}
