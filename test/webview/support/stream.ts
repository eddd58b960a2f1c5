// Streams a text into a panel's streaming message from inside the page (so the text is sliced there: chunks that
// end between the two halves of a surrogate pair reach the panel as they are), one animation frame per chunk.
import { LIMITS } from '../../../src/protocol';
import type { Panel } from './harness';

/** Delivers `text` as deltas cut at `cuts` (sorted offsets), waiting one frame after each. */
export async function streamText(panel: Panel, conversationId: string, messageId: string, text: string, cuts: readonly number[]): Promise<void> {
  await panel.page.evaluate(async ({ text, cuts, conversationId, messageId, maxDelta }) => {
    let prev = 0;
    for (const at of [...cuts, text.length]) {
      if (at <= prev) continue;
      // The host splits a longer delta the same way (LIMITS.delta): one message may carry no more.
      for (let i = prev; i < at; i += maxDelta) {
        window.dispatchEvent(new MessageEvent('message', { data: { type: 'delta', conversationId, messageId, text: text.slice(i, Math.min(at, i + maxDelta)) } }));
      }
      prev = at;
      await new Promise((r) => requestAnimationFrame(() => r(undefined)));
    }
  }, { text, cuts: [...cuts], conversationId, messageId, maxDelta: LIMITS.delta });
}

/** Every cut of a text one code unit long per chunk. */
export const everyCharacter = (text: string): number[] => Array.from({ length: Math.max(0, text.length - 1) }, (_, i) => i + 1);
