// The extension's Explain Selection path without its VS Code adapter: the same prompt builder, the same fan-out
// (src/core/explain/fanout.ts, VS Code-free), a conversation per selection in the same ConversationService, and
// streamChat — i.e. what ExplainController.explainSelections + ChatController.ask do, minus comment threads.
import { ConversationService, MemoryConversationStore } from '../../src/core/chat';
import { DEFAULT_MODEL_SETTINGS } from '../../src/core/repository';
import { DEFAULT_MODEL_ID as MODEL_NAME } from '../../src/core/models/catalog';
import { streamChat, type TritonClient } from '../../src/core/triton';
import { buildExplainPrompt } from '../../src/core/explain/explainPrompt';
import { fanout } from '../../src/core/explain/fanout';

export interface ExplainRunOptions {
  /** 1 = one after another; the product's default setting (explainMaxConcurrency) is 8. */
  concurrency: number;
  maxNewTokens: number;
  /** 0 = greedy, so every answer has exactly maxNewTokens tokens and runs are comparable. */
  temperature: number;
  /**
   * One-after-another runs only: idle time before each request after the first, left out of the wall time. A
   * request that reaches Triton 2.51 while its single model instance is still returning from the previous
   * execute() can wait ~500 ms for the dynamic batcher's idle timeout (bench/README.md); a person never asks
   * within a millisecond of the last answer, so the baseline should not carry that stall.
   */
  pauseMs?: number;
}

export interface ExplainRunResult {
  wallMs: number;
  completionTokens: number;
  /** Each selection's time from its request to its final event. */
  latenciesMs: number[];
}

/** Eight snippets like a multi-cursor selection across a file. */
export function sampleSelections(n: number): string[] {
  return Array.from({ length: n }, (_, i) => [
    `def step_${i}(values, factor=${i + 1}):`,
    `    """Scale and clip item ${i}."""`,
    '    out = []',
    '    for v in values:',
    `        out.append(min(v * factor, ${100 + i}))`,
    '    return out',
  ].join('\n'));
}

export async function runExplain(client: TritonClient, selections: readonly string[], options: ExplainRunOptions): Promise<ExplainRunResult> {
  const service = new ConversationService(new MemoryConversationStore(), { persistDelayMs: 60_000 });
  await service.init();
  const pauseMs = options.pauseMs ?? 0;
  if (pauseMs > 0 && options.concurrency !== 1) throw new RangeError('pauseMs is only meaningful one request at a time');
  let pausedMs = 0;
  const started = performance.now();
  const outcomes = await fanout(selections, async (text, index) => {
    if (pauseMs > 0 && index > 0) {
      const p0 = performance.now();
      await new Promise((r) => setTimeout(r, pauseMs));
      pausedMs += performance.now() - p0;
    }
    const t0 = performance.now();
    const prompt = buildExplainPrompt({ text, languageId: 'python', fileName: 'steps.py' }, 8000,
      (lang, file) => `Explain what this ${lang} code from ${file} does. Be concise; mention anything surprising or risky.`);
    const c = service.create();
    await service.appendUserMessage(c.id, prompt.prompt);
    const answer = service.startAnswer(c.id);
    const built = service.buildRequest(c.id, {
      historyLen: 10, maxInputTokens: DEFAULT_MODEL_SETTINGS.maxInputTokens,
      temperature: options.temperature, topP: 1, maxNewTokens: options.maxNewTokens,
    });
    if (!built.ok) throw new Error(`explain request could not be built: ${built.code}`);
    for await (const ev of streamChat(client, MODEL_NAME, built.request)) {
      if (ev.type === 'delta') {
        service.appendDelta(c.id, answer.id, ev.text);
      } else {
        await service.finish(c.id, answer.id, ev);
        return { tokens: ev.completionTokens, ms: performance.now() - t0 };
      }
    }
    throw new Error('stream ended without a final event');
  }, { concurrency: options.concurrency });
  const wallMs = performance.now() - started - pausedMs;
  await service.dispose();
  const failed = outcomes.find((o) => o.status !== 'fulfilled');
  if (failed) throw new Error(`an explain request failed: ${failed.status === 'rejected' ? String(failed.error) : failed.status}`);
  const values = outcomes.map((o) => (o as { status: 'fulfilled'; value: { tokens: number; ms: number } }).value);
  return { wallMs, completionTokens: values.reduce((n, v) => n + v.tokens, 0), latenciesMs: values.map((v) => v.ms) };
}
