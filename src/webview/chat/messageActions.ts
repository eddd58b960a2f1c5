// What shows around a message besides its text: the toolbar that appears on hover and keyboard focus (Copy;
// Regenerate on an answer, Edit on a question; the token figures as a tooltip), the marker of a partial answer, and
// Continue under an answer cut at the length limit. The buttons carry data-action and the message id; the panel's
// one click handler posts them. Buttons that change the conversation are hidden while an answer is generated.
import { format, type MessageView, type Strings } from '../../protocol';
import { button, el, icon, iconButton } from '../shared/dom';

/** The actions a message toolbar can post (chatPanel.ts handles them). */
export const MESSAGE_ACTIONS = {
  copy: 'copyMessage',
  regenerate: 'regenerate',
  edit: 'editQuestion',
  continue: 'continueAnswer',
} as const;

export function messageToolbar(view: MessageView, strings: Strings): HTMLElement {
  const bar = el('div', { class: 'message-toolbar', role: 'toolbar', 'aria-label': strings.messageActions });
  if (view.status === 'streaming') return bar;
  const data = { 'data-id': view.id };
  bar.append(iconButton('copy', MESSAGE_ACTIONS.copy, strings.copyMessage, data));
  if (view.role === 'user') {
    bar.append(iconButton('edit', MESSAGE_ACTIONS.edit, strings.edit, { ...data, class: 'changes-chat' }));
  } else {
    bar.append(iconButton('refresh', MESSAGE_ACTIONS.regenerate, strings.regenerate, { ...data, class: 'changes-chat' }));
    const usage = usageText(view, strings);
    // Focusable, so the figures are reachable from the keyboard too (as its accessible name).
    if (usage) bar.append(el('span', { class: 'message-usage', role: 'img', tabindex: '0', title: usage, 'aria-label': usage }, icon('info')));
  }
  return bar;
}

/** The token figures and the trimming note of an answer, one per line; '' when there are none. */
export function usageText(view: MessageView, strings: Strings): string {
  const lines: string[] = [];
  if (view.model) lines.push(format(strings.answeredBy, view.model));
  if (view.promptTokens !== undefined && view.completionTokens !== undefined) lines.push(format(strings.tokens, view.promptTokens, view.completionTokens));
  if (view.historyTrimmed) lines.push(format(strings.historyTrimmed, view.historyTrimmed));
  return lines.join('\n');
}

/** The marker of an answer that is not complete (or being generated); undefined for complete ones and questions. */
export function statusMarker(view: MessageView, strings: Strings): HTMLElement | undefined {
  if (view.role !== 'assistant') return undefined;
  const text = view.status === 'streaming' ? strings.generating
    : view.status === 'stopped' ? strings.statusStopped
      : view.status === 'failed' ? format(strings.statusFailed, view.error ?? '')
        : view.status === 'interrupted' ? strings.statusInterrupted : undefined;
  if (!text) return undefined;
  return el('div', { class: `message-marker ${view.status}`, role: view.status === 'failed' ? 'alert' : 'note' }, text);
}

/**
 * Under an answer that stopped at the length limit (why it ends there) or was stopped: Continue (the stylesheet shows it on the
 * last answer only). The condition is core/chat/conversation.ts's canContinue; the host checks it again.
 */
export function continueNote(view: MessageView, strings: Strings): HTMLElement | undefined {
  if (view.role !== 'assistant') return undefined;
  const cut = view.status === 'complete' && view.finishReason === 'length';
  // A stopped (or interrupted) answer with some text goes on too; its marker already says why it ends there.
  const stopped = (view.status === 'stopped' || view.status === 'interrupted') && view.content.trim() !== '';
  if (!cut && !stopped) return undefined;
  const go = button('', MESSAGE_ACTIONS.continue, { 'data-id': view.id, class: 'continue-button changes-chat' });
  go.append(icon('debug-continue'), el('span', {}, strings.continueAnswer));
  const note = el('div', { class: 'message-continue', role: 'note' });
  if (cut) note.append(el('span', { class: 'message-continue-text' }, strings.finishLength));
  // While the model is not loaded Continue cannot run: the stylesheet hides it (#root.model-not-ready), the note stays.
  note.append(go);
  return note;
}
