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
  /** The render when the answer ended (for an answer over WHOLE_RENDER_MAX, the frames after it are in `maxMs`). */
  finalizeMs: number;
  finalizeChars: number;
  /** The most markdown source one streaming frame rendered (characters). */
  maxFrameChars: number;
  /** The longest task of the page while streaming and finalizing (0 when none reached 50 ms). */
  longestTaskMs: number;
  longTasks: number;
  wallMs: number;
}

/**
 * Streams `text` into a fresh streaming message, `charsPerFrame` characters a frame, then ends it. `warmup`, when
 * given, is streamed the same way into a message of its own first (so the measured frames do not include the
 * page's first, unoptimised runs of the code).
 */
export async function measureTextStream(panel: Panel, text: string, charsPerFrame: number, warmup?: string): Promise<LongBlockCost> {
  if (warmup) await streamOnce(panel, 'lwarm', warmup, charsPerFrame);
  return streamOnce(panel, 'lstream', text, charsPerFrame);
}

async function streamOnce(panel: Panel, messageId: string, text: string, charsPerFrame: number): Promise<LongBlockCost> {
  const messages = [
    { id: 'lq', role: 'user', content: 'long block', status: 'complete' },
    { id: messageId, role: 'assistant', content: '', status: 'streaming' },
  ];
  await panel.send({ type: 'state', activeId: 'clong', messages, server: READY_SERVER, busy: true, modelName: 'ChatGLM3-6B' });
  return panel.page.evaluate(async ({ text, perFrame, messageId }) => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => r(undefined)));
    const tasks: number[] = [];
    const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) tasks.push(e.duration); });
    observer.observe({ type: 'longtask' });
    await frame();
    const started = performance.now();
    for (let i = 0; i < text.length; i += perFrame) {
      window.dispatchEvent(new MessageEvent('message', { data: { type: 'delta', conversationId: 'clong', messageId, text: text.slice(i, i + perFrame) } }));
      await frame();
    }
    window.dispatchEvent(new MessageEvent('message', { data: { type: 'messageDone', conversationId: 'clong', messageId, status: 'complete', finishReason: 'stop' } }));
    const article = document.querySelector(`article[data-id="${messageId}"]`) as HTMLElement;
    // A long answer renders its groups again over the frames after it ended: wait for them (they are frames too).
    for (let i = 0; i < 1000 && article.dataset.renderSettled !== 'true'; i += 1) await frame();
    await frame();
    await new Promise((r) => setTimeout(r, 50)); // let the observer deliver the last entries
    for (const e of observer.takeRecords()) tasks.push(e.duration);
    observer.disconnect();
    const wallMs = performance.now() - started;
    const d = article.dataset;
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
      finalizeChars: Number(d.renderFinalizeChars),
      maxFrameChars: Number(d.renderMaxFrameChars),
      longestTaskMs: tasks.length ? Math.max(...tasks) : 0,
      longTasks: tasks.length,
      wallMs,
    };
  }, { text, perFrame: charsPerFrame, messageId });
}

export interface AuditCase {
  name: string;
  text: string;
  charsPerFrame: number;
}

/** The first `lines` lines of a block of `kind` (a table keeps its two header rows on top). */
function blockOfLines(kind: LongBlockKind, lines: number): string {
  const extra = kind === 'table' ? 2 : 0;
  const rows = longBlock(kind, lines * 200).split('\n').slice(0, lines + extra);
  return `${rows.join('\n')}\n`;
}

/**
 * The cases of the hostile-output audit (issue 14): a 200 KB paragraph at 500 characters a frame, a 3,000-item list
 * and a 3,500-row table at the same rate, and an unclosed 2 MB code fence at 16 KB a frame.
 */
export function auditCases(): AuditCase[] {
  return [
    { name: 'paragraph_200kb', text: longBlock('paragraph', 200 * 1024), charsPerFrame: 500 },
    { name: 'list_3000_items', text: blockOfLines('list', 3000), charsPerFrame: 500 },
    { name: 'table_3500_rows', text: blockOfLines('table', 3500), charsPerFrame: 500 },
    { name: 'unclosed_fence_2mb', text: longBlock('fence', 2 * 1024 * 1024), charsPerFrame: 16 * 1024 },
  ];
}

export type HugeAnswerKind = 'nested-list' | 'wide-table';

/**
 * The 2 MB corpus of issue 31 (webview_max_frame_ms_2mb), at any size: one list of `chars` characters nested four
 * levels deep with inline markup on every item, or one table 24 columns wide; no blank line anywhere.
 */
export function hugeAnswer(kind: HugeAnswerKind, chars: number): string {
  const parts: string[] = [];
  let size = 0;
  const push = (s: string) => { parts.push(s); size += s.length; };
  if (kind === 'nested-list') {
    for (let i = 0; size < chars; i += 1) {
      const depth = [0, 1, 2, 3, 2, 1][i % 6]!;
      push(`${'  '.repeat(depth)}- item ${i} with **bold** and \`code_${i}\` and [a link](https://example.com/${i}) ${WORDS[i % WORDS.length]}\n`);
    }
  } else {
    const cols = 24;
    push(`| ${Array.from({ length: cols }, (_, c) => `col ${c}`).join(' | ')} |\n|${'---|'.repeat(cols)}\n`);
    for (let i = 0; size < chars; i += 1) push(`| ${Array.from({ length: cols }, (_, c) => `r${i}c${c} \`x\``).join(' | ')} |\n`);
  }
  return parts.join('').slice(0, chars);
}
