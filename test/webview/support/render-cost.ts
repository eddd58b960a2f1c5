// Render-cost measurement of the chat panel while an answer streams: feeds N synthetic tokens (a realistic mix of
// Chinese and English prose, lists and code blocks) as deltas, a few per animation frame, and reads the per-frame
// render statistics the streaming renderer records on the message (data-render-* attributes, compiled in because
// the harness builds the bundle with RENDER_STATS on). Used by the webview tests (structure only, no timing
// assertions) and by benchmarks.
import type { RenderStats } from '../../../src/webview/chat/renderStats';
import type { Panel } from './harness';
import { READY_SERVER } from './harness';

const SECTION = [
  '## 第{n}步：读取并处理数据\n\n',
  '下面的函数读取一个 CSV 文件，过滤掉空行，然后按照第一列分组统计。这样做的好处是内存占用很小，适合大文件。\n\n',
  'The function below streams the file line by line, so memory stays flat even for very large inputs. ',
  'It returns a `dict` mapping each key to its count.\n\n',
  '- 使用 `csv.reader` 逐行读取\n- Skip rows whose first column is empty\n- 返回 `collections.Counter`\n\n',
  '```python\nimport csv\nfrom collections import Counter\n\n\ndef count_keys_{n}(path: str) -> Counter:\n',
  '    """Count rows per key in column 0."""\n    counts = Counter()\n    with open(path, newline="", encoding="utf-8") as f:\n',
  '        for row in csv.reader(f):\n            if row and row[0].strip():\n                counts[row[0]] += 1\n    return counts\n```\n\n',
  '> 注意：如果文件编码不是 UTF-8，请先转换编码。\n\n',
].join('');

/** N tokens of a synthetic answer; a token is one CJK character, up to 4 Latin letters, a space run or a symbol. */
export function syntheticTokens(n: number): string[] {
  const out: string[] = [];
  for (let k = 1; out.length < n; k += 1) {
    const text = SECTION.replace(/\{n\}/g, String(k));
    for (const m of text.matchAll(/[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]|[A-Za-z]{1,4}|[0-9]{1,3}|[ \t]+|\n|[^\s]/g)) {
      out.push(m[0]);
      if (out.length === n) break;
    }
  }
  return out;
}

/**
 * What the streaming renderer recorded for one answer (totalMs: the sum of per-frame render times while streaming;
 * finalizeMs: the one full render when the answer ends), and what was streamed.
 */
export interface RenderCost extends RenderStats {
  tokens: number;
  chars: number;
  /** Wall time of the whole stream, pacing included. */
  wallMs: number;
}

/**
 * Streams `tokens` tokens into a fresh assistant message after `priorTurns` complete turns (to show that earlier
 * messages do not add cost), `tokensPerFrame` tokens per animation frame.
 */
export async function measureStreamingRenderCost(panel: Panel, options: { tokens: number; tokensPerFrame?: number; priorTurns?: number }): Promise<RenderCost> {
  const tokens = syntheticTokens(options.tokens);
  const perFrame = options.tokensPerFrame ?? 8;
  const prior = syntheticTokens(400).join('');
  const messages: Array<Record<string, unknown>> = [];
  for (let i = 0; i < (options.priorTurns ?? 0); i += 1) {
    messages.push({ id: `pu${i}`, role: 'user', content: `question ${i}`, status: 'complete' }, { id: `pa${i}`, role: 'assistant', content: prior, status: 'complete' });
  }
  messages.push({ id: 'mq', role: 'user', content: 'Explain it with code', status: 'complete' }, { id: 'mstream', role: 'assistant', content: '', status: 'streaming' });
  await panel.send({ type: 'state', activeId: 'cbench', messages, server: READY_SERVER, busy: true, modelName: 'ChatGLM3-6B' });
  return panel.page.evaluate(async ({ tokens, perFrame }) => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => r(undefined)));
    const started = performance.now();
    for (let i = 0; i < tokens.length; i += perFrame) {
      for (const t of tokens.slice(i, i + perFrame)) {
        window.dispatchEvent(new MessageEvent('message', { data: { type: 'delta', conversationId: 'cbench', messageId: 'mstream', text: t } }));
      }
      await frame();
    }
    window.dispatchEvent(new MessageEvent('message', { data: { type: 'messageDone', conversationId: 'cbench', messageId: 'mstream', status: 'complete', finishReason: 'stop' } }));
    const wallMs = performance.now() - started;
    const d = (document.querySelector('article[data-id="mstream"]') as HTMLElement).dataset;
    return {
      tokens: tokens.length,
      chars: tokens.join('').length,
      frames: Number(d.renderFrames),
      totalMs: Number(d.renderTotalMs),
      maxMs: Number(d.renderMaxMs),
      firstTenthAvgMs: Number(d.renderFirstTenthMs),
      lastTenthAvgMs: Number(d.renderLastTenthMs),
      finalizeMs: Number(d.renderFinalizeMs),
      finalizeChars: Number(d.renderFinalizeChars),
      settled: d.renderSettled === 'true',
      maxFrameChars: Number(d.renderMaxFrameChars),
      maxRefreshChars: Number(d.renderMaxRefreshChars),
      wallMs,
    };
  }, { tokens, perFrame });
}
