// How the host's per-answer messages (delta, messageDone) change the panel's copy of the conversation, the views
// the message list is rendered from. Messages for another conversation or an unknown message change nothing.
import type { MessageDone, MessageView, StateMessage } from '../../protocol';

/** Appends streamed text to its message; returns the view it changed, or undefined. */
export function applyDelta(state: StateMessage | null, conversationId: string, messageId: string, text: string): MessageView | undefined {
  if (!state || state.activeId !== conversationId) return undefined;
  const last = state.messages.at(-1);
  const view = last?.id === messageId ? last : state.messages.find((m) => m.id === messageId);
  if (!view || view.status !== 'streaming') return undefined;
  view.content += text;
  return view;
}

/** Records how an answer ended (and the panel is no longer busy once nothing streams); returns the view, or undefined. */
export function applyDone(state: StateMessage | null, done: MessageDone): MessageView | undefined {
  if (!state || state.activeId !== done.conversationId) return undefined;
  const view = state.messages.find((m) => m.id === done.messageId);
  if (!view) return undefined;
  view.status = done.status;
  for (const k of ['finishReason', 'promptTokens', 'completionTokens', 'historyTrimmed', 'error'] as const) {
    if (done[k] !== undefined) (view as Record<string, unknown>)[k] = done[k];
  }
  if (!state.messages.some((m) => m.status === 'streaming')) state.busy = false;
  return view;
}
